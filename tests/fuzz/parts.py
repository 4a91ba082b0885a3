"""Reading and writing the parts of a cassette the mutators change: bodies, usage, streams.

The seed is loaded with a safe loader that reads the benign tags real cassettes carry as plain
data; mutants are written back in the seed's format (YAML, or JSON for a ``.json`` seed).
"""

from __future__ import annotations

import copy
import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["Seed"]


class _Loader(yaml.CSafeLoader):
    """Safe loading plus the benign tags real cassettes carry (read as plain data)."""


def _plain(loader: yaml.CSafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        args = loader.construct_sequence(node, deep=True)
        return args[0] if len(args) == 1 else args
    return loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", _plain)


@dataclass
class Seed:
    path: Path
    data: bytes
    _document: Any = field(default=None, repr=False)

    def document(self) -> Any:
        if self._document is None:
            self._document = yaml.load(self.data.decode("utf-8"), Loader=_Loader)
        return copy.deepcopy(self._document)

    @property
    def suffix(self) -> str:
        return self.path.suffix

    def dump(self, document: Any) -> bytes:
        """The document written back in the seed's own format."""
        if self.suffix == ".json":
            return json.dumps(_lists(_text(document)), allow_nan=True).encode()
        return _dump(document)


# --- helpers ----------------------------------------------------------------------------------


def _dump(document: Any) -> bytes:
    return yaml.dump(_lists(document), Dumper=yaml.CSafeDumper, allow_unicode=True).encode()


def _text(value: Any) -> Any:
    """Bytes bodies as text, for a JSON cassette (which cannot hold bytes)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, dict):
        return {k: _text(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_text(v) for v in value]
    return value


def _lists(value: Any) -> Any:
    if isinstance(value, dict):
        return {_lists(k): _lists(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_lists(v) for v in value]
    return value


def _interactions(document: Any) -> list[Any]:
    if isinstance(document, dict) and isinstance(document.get("interactions"), list):
        return list(document["interactions"])
    return []


def _body_slot(message: Any) -> tuple[Any, Any] | None:
    """(container, key) holding a message's body text, when it has one."""
    if not isinstance(message, dict):
        return None
    if "parsed_body" in message:
        return message, "parsed_body"
    body = message.get("body")
    if isinstance(body, dict) and "string" in body:
        return body, "string"
    if isinstance(body, str | bytes):
        return message, "body"
    return None


def _json_bodies(document: Any) -> list[tuple[Any, Any, Any, bool]]:
    """Every (container, key, decoded JSON, was-gzip) body in the document."""
    found = []
    for item in _interactions(document):
        for side in ("request", "response"):
            slot = _body_slot(item.get(side) if isinstance(item, dict) else None)
            if slot is None:
                continue
            container, key = slot
            value = container[key]
            gz = isinstance(value, bytes) and value[:2] == b"\x1f\x8b"
            try:
                raw = gzip.decompress(value) if gz else value
                decoded = value if isinstance(value, dict) else json.loads(raw)
            except (ValueError, OSError, EOFError, TypeError):
                continue
            if isinstance(decoded, dict):
                found.append((container, key, decoded, gz))
    return found


def _store(container: Any, key: Any, decoded: Any, gz: bool, *, text: str | None = None) -> None:
    if isinstance(container[key], dict):
        container[key] = decoded
        return
    raw = text if text is not None else json.dumps(decoded)
    container[key] = gzip.compress(raw.encode(), mtime=0) if gz else raw


def _usage_blocks(decoded: Any) -> list[dict[str, Any]]:
    blocks = []
    stack = [decoded]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, child in value.items():
                if key in ("usage", "usageMetadata") and isinstance(child, dict):
                    blocks.append(child)
                stack.append(child)
        elif isinstance(value, list):
            stack.extend(value)
    return blocks


def _all_containers(value: Any) -> list[tuple[Any, Any]]:
    found: list[tuple[Any, Any]] = []
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            found.extend((current, key) for key in current)
            stack.extend(current.values())
        elif isinstance(current, list):
            found.extend((current, index) for index in range(len(current)))
            stack.extend(current)
    return found


def _sse_events(text: str) -> list[str]:
    return [chunk for chunk in text.replace("\r\n", "\n").split("\n\n") if chunk.strip()]


def _sse_text(chunks: list[str]) -> str:
    return "\n\n".join(chunks) + "\n\n"


def _sse_slots(document: Any) -> list[tuple[Any, Any, str]]:
    slots = []
    for item in _interactions(document):
        slot = _body_slot(item.get("response") if isinstance(item, dict) else None)
        if slot is None:
            continue
        container, key = slot
        value = container[key]
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                continue
        if isinstance(value, str) and value.lstrip().startswith(("event:", "data:")):
            slots.append((container, key, value))
    return slots
