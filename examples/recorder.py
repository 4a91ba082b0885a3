"""Write synthetic interactions in vcrpy's YAML layout, with usage from costsim's metering.

A :class:`Recorder` is one cassette being written: a seeded random generator, a clock that
advances from a fixed date, and the interactions so far. :meth:`Recorder.anthropic` and
:meth:`Recorder.chat` take a request body and the response content, build the ``Call`` the
way ``costsim.providers.normalise`` would, and fill in the usage: prompt total =
``round(Meter().estimate_prompt(call))``, output = ``Meter().estimate_output(call)``, all of it
uncached on Anthropic (the recorded baseline has no caching; caching is what the strategies
add). OpenAI caches automatically and costsim simulates that cache in every variant, so a Chat
Completions response reports as ``cached_tokens`` what costsim's own OpenAI cache simulator
reads; recorded as zero, every OpenAI variant would gain cache savings the baseline lacks.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
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

__all__ = ["ANTHROPIC_URI", "HEADER", "OPENAI_URI", "Json", "Recorder"]

Json = dict[str, Any]

ANTHROPIC_URI = "https://api.anthropic.com/v1/messages"
OPENAI_URI = "https://api.openai.com/v1/chat/completions"
HEADER = (
    "# SYNTHETIC cassette written by costsim's examples/generate.py; not a real recording.\n"
    "# {about}\n"
    "# Usage figures come from costsim's own metering (prompt = the meter's estimate, all of it\n"
    "# uncached; output = the meter's count of the response), so the example is self-consistent.\n"
)
_ANTHROPIC_HEADERS = {
    "accept": ["application/json"],
    "anthropic-version": ["2023-06-01"],
    "content-type": ["application/json"],
    "user-agent": ["Anthropic/Python 0.72.0"],
}
_OPENAI_HEADERS = {
    "accept": ["application/json"],
    "content-type": ["application/json"],
    "user-agent": ["OpenAI/Python 2.8.1"],
}
_DATED = {
    "claude-sonnet-4-5": "claude-sonnet-4-5-20250929",
    "claude-haiku-4-5": "claude-haiku-4-5-20251001",
    "gpt-4.1": "gpt-4.1-2025-04-14",
}


class Recorder:
    """One synthetic cassette being written."""

    def __init__(
        self, *, seed: int, start: datetime, about: str, spacing: tuple[int, int] = (5, 40)
    ) -> None:
        self.rng = random.Random(seed)
        self.meter = Meter()
        self._openai_cache = OpenAICache(default_rules())
        self._prefixes = PrefixBuilder(self.meter.serialiser)
        self.when = start
        self.spacing = spacing
        self.about = about
        self.interactions: list[Json] = []

    # --- ids and time -------------------------------------------------------------------

    def tool_id(self) -> str:
        return f"toolu_01{self._token(20)}"

    def _token(self, length: int) -> str:
        alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789"
        return "".join(self.rng.choice(alphabet) for _ in range(length))

    def advance(self, low: int | None = None, high: int | None = None) -> None:
        """Let time pass between calls (the response ``date`` of the next call)."""
        seconds = self.rng.randint(low or self.spacing[0], high or self.spacing[1])
        self.when += timedelta(seconds=seconds)

    # --- recording ----------------------------------------------------------------------

    def anthropic(self, request: Json, content: list[Json]) -> Json:
        """Record one Messages call answering with ``content``; returns the response body."""
        self.advance()
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        response: Json = {
            "id": f"msg_01{self._token(22)}",
            "type": "message",
            "role": "assistant",
            "model": _DATED.get(request["model"], request["model"]),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
        }
        prompt, output = self._usage(self._call(ANTHROPIC_URI, request, response))
        response["usage"] = {
            "input_tokens": prompt,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output,
            "service_tier": "standard",
        }
        self._append(ANTHROPIC_URI, _ANTHROPIC_HEADERS, request, response)
        return response

    def chat(self, request: Json, text: str) -> Json:
        """Record one Chat Completions call answering with ``text``."""
        self.advance()
        response: Json = {
            "id": f"chatcmpl-{self._token(29)}",
            "object": "chat.completion",
            "created": int(self.when.timestamp()) - self.rng.randint(2, 4),
            "model": _DATED.get(request["model"], request["model"]),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
        }
        call = self._call(OPENAI_URI, request, response)
        prompt, output = self._usage(call)
        cached = self._openai_cache.request(
            self._prefixes.build(call, prompt),
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
        self._append(OPENAI_URI, _OPENAI_HEADERS, request, response)
        return response

    def _usage(self, call: Call) -> tuple[int, int]:
        prompt = round(self.meter.estimate_prompt(call))
        return prompt, max(1, self.meter.estimate_output(call))

    def _call(self, uri: str, request: Json, response: Json) -> Call:
        """The call as ``costsim.providers.normalise`` builds it from the written interaction."""
        body = json.loads(_dump_json(request))
        adapter = adapter_for("POST", urlsplit(uri).path, body)
        if adapter is None:
            raise ValueError(f"costsim does not recognise a request to {uri}")
        parsed = adapter.parse_request(body)
        reply = adapter.parse_response(json.loads(_dump_json(response)))
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
            cache_control=parsed.cache_control,
            stream=parsed.stream,
            response=reply.blocks,
        )

    def _append(
        self, uri: str, headers: dict[str, list[str]], request: Json, response: Json
    ) -> None:
        self.interactions.append(
            {
                "request": {
                    "body": _dump_json(request),
                    "headers": {name: list(values) for name, values in headers.items()},
                    "method": "POST",
                    "uri": uri,
                },
                "response": {
                    "body": {"string": _dump_json(response)},
                    "headers": {
                        "content-type": ["application/json"],
                        "date": [self.when.strftime("%a, %d %b %Y %H:%M:%S GMT")],
                    },
                    "status": {"code": 200, "message": "OK"},
                },
            }
        )

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        document = {"interactions": self.interactions, "version": 1}
        text = yaml.safe_dump(document, sort_keys=True, width=1 << 30, allow_unicode=False)
        path.write_text(HEADER.format(about=self.about) + text, encoding="utf-8", newline="\n")


def _dump_json(value: Json) -> str:
    return json.dumps(value, separators=(",", ":"))
