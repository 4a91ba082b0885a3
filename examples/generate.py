"""Write the synthetic example cassettes under scenarios/cassettes/ (deterministic).

    python examples/generate.py [OUTPUT_DIR]

Four agents of the kind costsim is for: a REPL coding agent, a multi-agent orchestrator, a
browser-automation MCP session and an assistant making light side calls. Every file says it is
synthetic. Usage in the responses comes from costsim's own metering (the shipped calibration),
so the examples are self-consistent: their recorded prompts are what costsim estimates.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from costsim.cache.prefix import PrefixBuilder
from costsim.cache.rules import default_rules
from costsim.cache.simulators import OpenAICache
from costsim.metering.meter import Meter
from costsim.model import Call, Provenance
from costsim.providers import adapter_for

ROOT = Path(__file__).resolve().parents[1]
BASE_DATE = datetime(2025, 11, 12, 9, 0, tzinfo=UTC)
HEADER = (
    "# SYNTHETIC cassette written by costsim's examples/generate.py; not a real recording.\n"
    "# Usage figures come from costsim's own metering, so the example is self-consistent.\n"
)
ANTHROPIC_URI = "https://api.anthropic.com/v1/messages"
OPENAI_URI = "https://api.openai.com/v1/chat/completions"
VOCABULARY = (
    "agent build cache config deploy error file function handler index module parser "
    "pipeline queue release request response retry schema server session test token "
    "update user value worker"
)
WORDS = tuple(VOCABULARY.split(" "))

Json = dict[str, Any]


class Recorder:
    """Collects interactions and fills in usage from costsim's metering."""

    def __init__(self, seed: int, *, spacing: tuple[int, int] = (5, 40)) -> None:
        self.rng = random.Random(seed)
        self.meter = Meter()
        # OpenAI caches automatically: the recording reports what its cache would have read.
        self.openai_cache = OpenAICache(default_rules())
        self.prefixes = PrefixBuilder(self.meter.serialiser)
        self.when = BASE_DATE
        self.spacing = spacing
        self.interactions: list[Json] = []

    def words(self, count: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(count))

    def _call(self, uri: str, request: Json, response: Json) -> Call:
        adapter = adapter_for("POST", urlsplit(uri).path, request)
        assert adapter is not None
        parsed = adapter.parse_request(request)
        reply = adapter.parse_response(response)
        return Call(
            flavour=adapter.flavour,
            model=parsed.model,
            provenance=Provenance(Path("synthetic"), len(self.interactions)),
            system=parsed.system,
            messages=parsed.messages,
            tools=parsed.tools,
            tool_choice=parsed.tool_choice,
            thinking=parsed.thinking,
            output_schema=parsed.output_schema,
            response=reply.blocks,
        )

    def record(self, uri: str, request: Json, response: Json) -> Json:
        call = self._call(uri, request, response)
        prompt = round(self.meter.estimate_prompt(call))
        output = max(1, self.meter.estimate_output(call))
        if uri == ANTHROPIC_URI:
            response["usage"] = {
                "input_tokens": prompt,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": output,
            }
        self.when += timedelta(seconds=self.rng.randint(*self.spacing))
        if uri == OPENAI_URI:
            cached = self.openai_cache.request(
                self.prefixes.build(call, prompt),
                model=call.model,
                at=self.when.timestamp(),
                when=self.when,
            ).read
            response["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": output,
                "total_tokens": prompt + output,
                "prompt_tokens_details": {"cached_tokens": cached},
            }
        self.interactions.append(
            {
                "request": {
                    "body": json.dumps(request, separators=(",", ":")),
                    "headers": {"content-type": ["application/json"]},
                    "method": "POST",
                    "uri": uri,
                },
                "response": {
                    "body": {"string": json.dumps(response, separators=(",", ":"))},
                    "headers": {
                        "content-type": ["application/json"],
                        "date": [self.when.strftime("%a, %d %b %Y %H:%M:%S GMT")],
                    },
                    "status": {"code": 200, "message": "OK"},
                },
            }
        )
        return response

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        document = {"interactions": self.interactions, "version": 1}
        path.write_text(
            HEADER + yaml.safe_dump(document, sort_keys=True, width=100), encoding="utf-8"
        )


def anthropic_reply(recorder: Recorder, model: str, content: list[Json], index: int) -> Json:
    stop = "tool_use" if any(block["type"] == "tool_use" for block in content) else "end_turn"
    return {
        "id": f"msg_synthetic_{index:03d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
    }


def code_listing(recorder: Recorder, path: str, lines: int) -> str:
    body = []
    for number in range(1, lines + 1):
        indent = "    " * recorder.rng.randint(0, 3)
        body.append(f"{number:5d}  {indent}{recorder.words(recorder.rng.randint(4, 12))}")
    return f"# {path}\n" + "\n".join(body)


GENERATORS: dict[str, Callable[[Path], None]] = {}


def generator(name: str) -> Callable[[Callable[[Path], None]], Callable[[Path], None]]:
    def register(function: Callable[[Path], None]) -> Callable[[Path], None]:
        GENERATORS[name] = function
        return function

    return register


def main(output: Path) -> None:
    import examples.agents  # noqa: F401  (registers the generators)
    from examples.generate import GENERATORS as registered  # the module, not __main__

    for name, generate in sorted(registered.items()):
        generate(output / name)
        print(f"wrote {name}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "scenarios" / "cassettes")
