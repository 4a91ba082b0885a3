"""A seeded generator of mutated cassettes: every way real files break, and some hostile ones.

Each mutator takes a random generator and a seed cassette and returns the mutant's bytes (or
None when it does not apply to that seed). The same (seed, index) always gives the same
mutant, so a failure found in a long run replays exactly.

Classes (the issue's list): byte flips, truncation, deleted / duplicated keys, wrong types,
non-finite and huge numbers (in usage and anywhere), invalid UTF-8, corrupt gzip, cut
streams, deep nesting (YAML and JSON), alias bombs.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.fuzz.parts import (
    Seed,
    _all_containers,
    _body_slot,
    _interactions,
    _json_bodies,
    _sse_events,
    _sse_slots,
    _sse_text,
    _store,
    _usage_blocks,
)

__all__ = ["MUTATORS", "Mutant", "Seed", "mutants", "sample_sources"]


@dataclass(frozen=True)
class Mutant:
    source: Path
    mutator: str
    index: int
    data: bytes
    suffix: str

    @property
    def name(self) -> str:
        return f"{self.index:05d}-{self.mutator}{self.suffix}"


BAD_VALUES: list[Any] = [
    float("nan"),
    float("inf"),
    float("-inf"),
    -1,
    -123456,
    "12",
    "",
    [5],
    {"n": 5},
    None,
    True,
    12.5,
    1e300,
    10**30,
    10**60,
]


# --- mutators ---------------------------------------------------------------------------------


def byte_flips(rng: random.Random, seed: Seed) -> bytes:
    data = bytearray(seed.data)
    for _ in range(rng.randint(1, 8)):
        position = rng.randrange(len(data))
        data[position] ^= 1 << rng.randrange(8)
    return bytes(data)


def truncation(rng: random.Random, seed: Seed) -> bytes:
    return seed.data[: rng.randrange(len(seed.data))]


def invalid_utf8(rng: random.Random, seed: Seed) -> bytes:
    position = rng.randrange(len(seed.data))
    junk = rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80"])
    return seed.data[:position] + junk + seed.data[position:]


def deleted_key(rng: random.Random, seed: Seed) -> bytes | None:
    document = seed.document()
    targets = _all_containers(document)
    bodies = _json_bodies(document)
    if bodies and rng.random() < 0.6:
        container, key, decoded, gz = rng.choice(bodies)
        inner = [(c, k) for c, k in _all_containers(decoded) if isinstance(c, dict)]
        if inner:
            parent, name = rng.choice(inner)
            del parent[name]
            _store(container, key, decoded, gz)
            return seed.dump(document)
    dicts = [(c, k) for c, k in targets if isinstance(c, dict)]
    if not dicts:
        return None
    parent, name = rng.choice(dicts)
    del parent[name]
    return seed.dump(document)


def duplicated_key(rng: random.Random, seed: Seed) -> bytes | None:
    """A JSON body with one key written twice (the second value differs)."""
    document = seed.document()
    bodies = [b for b in _json_bodies(document) if not isinstance(b[0][b[1]], dict)]
    if not bodies:
        return None
    container, key, decoded, gz = rng.choice(bodies)
    text = json.dumps(decoded)
    keys = list(re.finditer(r'"(\w+)": (\d+|"[^"]*")', text))
    if not keys:
        return None
    match = rng.choice(keys)
    replacement = f'{match.group(0)}, "{match.group(1)}": {rng.choice(["0", "7", "null"])}'
    text = text[: match.start()] + replacement + text[match.end() :]
    _store(container, key, decoded, gz, text=text)
    return seed.dump(document)


def wrong_type(rng: random.Random, seed: Seed) -> bytes | None:
    document = seed.document()
    bodies = _json_bodies(document)
    if bodies and rng.random() < 0.7:
        container, key, decoded, gz = rng.choice(bodies)
        slots = _all_containers(decoded)
        if slots:
            parent, name = rng.choice(slots)
            parent[name] = rng.choice(["text", 7, [], {}, None, [1, "a"], {"x": {"y": 1}}])
            _store(container, key, decoded, gz)
            return seed.dump(document)
    slots = _all_containers(document)
    if not slots:
        return None
    parent, name = rng.choice(slots)
    parent[name] = rng.choice(["text", 7, [], {}, None, 3.5])
    return seed.dump(document)


def bad_usage(rng: random.Random, seed: Seed) -> bytes | None:
    """A usage count replaced by NaN, infinity, a negative, a string, a list, null, 1e300..."""
    document = seed.document()
    candidates: list[tuple[Callable[[], None], dict[str, Any], str]] = []
    for container, key, decoded, gz in _json_bodies(document):
        for block in _usage_blocks(decoded):
            for parent, name in _all_containers(block):
                if isinstance(parent, dict) and not isinstance(parent[name], dict):

                    def store(
                        c: Any = container, k: Any = key, d: Any = decoded, z: bool = gz
                    ) -> None:
                        _store(c, k, d, z, text=json.dumps(d, allow_nan=True))

                    candidates.append((store, parent, name))
    candidates += _sse_usage_candidates(document)
    if not candidates:
        return None
    write, parent, name = rng.choice(candidates)
    parent[name] = rng.choice(BAD_VALUES)
    write()
    return seed.dump(document)


def _sse_usage_candidates(
    document: Any,
) -> list[tuple[Callable[[], None], dict[str, Any], str]]:
    found: list[tuple[Callable[[], None], dict[str, Any], str]] = []
    for container, key, text in _sse_slots(document):
        chunks = _sse_events(text)
        for index, chunk in enumerate(chunks):
            data = [line[5:].strip() for line in chunk.split("\n") if line.startswith("data:")]
            try:
                event = json.loads("\n".join(data)) if data else None
            except ValueError:
                continue
            for block in _usage_blocks(event):

                def store(
                    c: Any = container,
                    k: Any = key,
                    ch: list[str] = chunks,
                    i: int = index,
                    e: Any = event,
                ) -> None:
                    kept = [line for line in ch[i].split("\n") if not line.startswith("data:")]
                    ch[i] = "\n".join([*kept, "data: " + json.dumps(e, allow_nan=True)])
                    c[k] = _sse_text(ch)

                found.extend(
                    (store, block, name) for name in block if not isinstance(block[name], dict)
                )
    return found


def inconsistent_usage(rng: random.Random, seed: Seed) -> bytes | None:
    """Cached tokens above the prompt total, reasoning above the output."""
    document = seed.document()
    for container, key, decoded, gz in _json_bodies(document):
        for block in _usage_blocks(decoded):
            if "prompt_tokens_details" in block or "input_tokens_details" in block:
                prompt = "prompt_tokens" if "prompt_tokens" in block else "input_tokens"
                details = block.get(f"{prompt}_details")
                if isinstance(details, dict) and isinstance(block.get(prompt), int):
                    details["cached_tokens"] = block[prompt] + rng.randint(1, 500)
                    _store(container, key, decoded, gz)
                    return seed.dump(document)
    return None


def cut_stream(rng: random.Random, seed: Seed) -> bytes | None:
    """A streamed response cut before its last events (the final usage among them)."""
    document = seed.document()
    slots = _sse_slots(document)
    if not slots:
        return None
    container, key, text = rng.choice(slots)
    chunks = _sse_events(text)
    if len(chunks) < 2:
        return None
    container[key] = _sse_text(chunks[: rng.randint(1, len(chunks) - 1)])
    return seed.dump(document)


def corrupt_gzip(rng: random.Random, seed: Seed) -> bytes | None:
    document = seed.document()
    for item in _interactions(document):
        slot = _body_slot(item.get("response") if isinstance(item, dict) else None)
        if slot is None:
            continue
        container, key = slot
        value = container[key]
        if isinstance(value, bytes) and value[:2] == b"\x1f\x8b":
            data = bytearray(value)
            for _ in range(rng.randint(1, 4)):
                position = rng.randrange(10, len(data))
                data[position] ^= 0xFF
            container[key] = bytes(data[: rng.randint(12, len(data))])
            return seed.dump(document)
    return None


def huge_number(rng: random.Random, seed: Seed) -> bytes | None:
    """A number somewhere in the text replaced by a 4,301+ digit integer or 1e999."""
    text = seed.data.decode("utf-8", errors="surrogateescape")
    numbers = list(re.finditer(r"(?<![\w.])\d{1,9}(?![\w.])", text))
    if not numbers:
        return None
    match = rng.choice(numbers)
    replacement = rng.choice(["9" * rng.randint(4301, 6000), "1e999", "-1e999", "1" + "0" * 400])
    text = text[: match.start()] + replacement + text[match.end() :]
    return text.encode("utf-8", errors="surrogateescape")


def deep_nesting(rng: random.Random, seed: Seed) -> bytes | None:
    depth = rng.choice([300, 1_000, 5_000, 50_000])
    document = seed.document()
    if rng.random() < 0.5:
        bodies = [b for b in _json_bodies(document) if not isinstance(b[0][b[1]], dict)]
        if bodies:
            container, key, decoded, gz = rng.choice(bodies)
            deep = "[" * depth + "1" + "]" * depth
            name = rng.choice(list(decoded)) if decoded else "x"
            text = json.dumps({**decoded, name: "@DEEP@"}).replace('"@DEEP@"', deep)
            _store(container, key, decoded, gz, text=text)
            return seed.dump(document)
    yaml_text = seed.data.decode("utf-8", errors="replace")
    deep = "[" * depth + "x" + "]" * depth
    match = re.search(r"(?m)^(\s+)method: POST$", yaml_text)
    if match is None:
        return None
    return (
        yaml_text[: match.end()] + f"\n{match.group(1)}extra: {deep}" + yaml_text[match.end() :]
    ).encode()


def alias_bomb(rng: random.Random, seed: Seed) -> bytes | None:
    text = seed.data.decode("utf-8", errors="replace")
    if not text.startswith("interactions:"):
        return None
    levels = rng.randint(6, 10)
    lines = ["bomb0: &b0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"bomb{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 9)}]" for i in range(1, levels)]
    if rng.random() < 0.5:  # an alias chain: shallow anchors, deep once expanded
        lines = ["chain0: &c0 [x]"] + [f"chain{i}: &c{i} [*c{i - 1}]" for i in range(1, 2_000)]
        reference = "*c1999"
    else:
        reference = f"*b{levels - 1}"
    body = re.sub(
        r"(?m)^(\s+)method: POST$", rf"\1method: POST\n\1extra: {reference}", text, count=1
    )
    return ("\n".join(lines) + "\n" + body).encode()


MUTATORS: dict[str, Callable[[random.Random, Seed], bytes | None]] = {
    "byte-flips": byte_flips,
    "truncation": truncation,
    "invalid-utf8": invalid_utf8,
    "deleted-key": deleted_key,
    "duplicated-key": duplicated_key,
    "wrong-type": wrong_type,
    "bad-usage": bad_usage,
    "inconsistent-usage": inconsistent_usage,
    "cut-stream": cut_stream,
    "corrupt-gzip": corrupt_gzip,
    "huge-number": huge_number,
    "deep-nesting": deep_nesting,
    "alias-bomb": alias_bomb,
}


def sample_sources(corpus: Path, count: int, seed: int, *, max_bytes: int = 400_000) -> list[Path]:
    """A fixed sample of corpus cassettes (streams and gzip bodies well represented)."""
    files = sorted(p for p in corpus.rglob("*.yaml") if p.stat().st_size <= max_bytes)
    rng = random.Random(seed)
    streaming = [p for p in files if b"event:" in p.read_bytes()[:200_000]]
    chosen = rng.sample(streaming, min(len(streaming), count // 4))
    rest = [p for p in files if p not in set(chosen)]
    chosen += rng.sample(rest, min(len(rest), count - len(chosen)))
    return sorted(chosen)


def mutants(sources: list[Path], count: int, seed: int) -> Iterator[Mutant]:
    """``count`` mutants of ``sources``, the same ones for the same seed."""
    seeds = [Seed(path, path.read_bytes()) for path in sources]
    names = list(MUTATORS)
    produced = 0
    attempt = 0
    while produced < count:
        rng = random.Random(f"{seed}:{attempt}")
        attempt += 1
        name = names[produced % len(names)]  # every class equally often
        for _ in range(20):  # a source the mutator applies to
            source = seeds[rng.randrange(len(seeds))]
            try:
                data = MUTATORS[name](rng, source)
            except (yaml.YAMLError, ValueError, RecursionError):
                data = None
            if data is not None and data != source.data:
                yield Mutant(source.path, name, produced, data, source.suffix)
                produced += 1
                break
