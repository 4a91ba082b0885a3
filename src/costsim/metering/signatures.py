"""How tool definitions and output schemas reach the model, rendered as text to count.

OpenAI renders functions as a TypeScript namespace (the "harmony" format OpenAI documents in
its cookbook article "OpenAI harmony response format" and implements in the open-source
``openai-harmony`` renderer): each description line as a ``//`` comment, a property's title
(``// Title`` and an empty ``//``) and description as comments above it, an object's
description above its braces, nested objects indented by four spaces, string enums as unions,
defaults as a trailing comment, ``anyOf`` as ``any``. Where recordings of more than one source
project show the API differing from that renderer, the recordings are followed: local
``$ref`` pointers are resolved; description lines are stripped and blank ones dropped (Python
docstrings arrive indented); the parameters' own ``title`` is a comment like a description;
titles of nested fields are left out.

Anthropic puts each tool's JSON Schema in its tool-use system prompt.
"""

from __future__ import annotations

import json
from typing import Any

from costsim.metering.tokenizers import TokenCounter
from costsim.model import ToolDef

__all__ = [
    "anthropic_tool_tokens",
    "compact_json",
    "openai_functions",
    "openai_tool_tokens",
    "ts_object",
]

_INDENT = "    "


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)
"""One encoder for every value (``json.dumps`` with options builds one per call)."""


def compact_json(value: Any) -> str:
    return _COMPACT.encode(value)


def anthropic_tool_tokens(tool: ToolDef, count: TokenCounter) -> int:
    """A tool as JSON: its name, description and input schema."""
    return count(tool.name) + count(tool.description) + count(compact_json(tool.input_schema))


def openai_tool_tokens(tool: ToolDef, count: TokenCounter) -> int:
    """One function as OpenAI renders it for the model (see :func:`openai_functions`)."""
    return count(_function(tool))


def openai_functions(tools: tuple[ToolDef, ...]) -> str:
    """The functions namespace OpenAI shows the model, as text (frame tokens apart)."""
    body = "\n".join(_function(tool) for tool in tools)
    return f"namespace functions {{\n\n{body}\n}} // namespace functions"


def _comment_lines(text: str, indent: str = "") -> list[str]:
    return [f"{indent}// {line.strip()}" for line in text.splitlines() if line.strip()]


def _function(tool: ToolDef) -> str:
    lines = _comment_lines(tool.description)
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    if schema.get("properties"):
        lines.append(f"type {tool.name} = (_: {_Renderer(schema).object(schema, '')}) => any;")
    else:
        lines.append(f"type {tool.name} = () => any;")
    return "\n".join(lines) + "\n"


class _Renderer:
    """JSON Schema to TypeScript, resolving ``$ref`` against the schema it came from."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def resolve(self, spec: Any, seen: frozenset[str] = frozenset()) -> Any:
        reference = spec.get("$ref") if isinstance(spec, dict) else None
        if not isinstance(reference, str) or not reference.startswith("#") or reference in seen:
            return spec
        node: Any = self.root
        for part in reference.lstrip("#").strip("/").split("/"):
            node = node.get(part) if isinstance(node, dict) and part else node
        if not isinstance(node, dict):
            return spec
        merged = {**node, **{k: v for k, v in spec.items() if k != "$ref"}}
        return self.resolve(merged, seen | {reference})

    def type(self, raw: Any, indent: str) -> str:
        spec = self.resolve(raw)
        if not isinstance(spec, dict):
            return "any"
        rendered = self._type(spec, indent)
        if spec.get("nullable") is True and "null" not in rendered:
            rendered += " | null"
        return rendered

    def _type(self, spec: dict[str, Any], indent: str) -> str:
        if isinstance(spec.get("oneOf"), list):
            return " | ".join(self.type(option, indent) for option in spec["oneOf"])
        kind = spec.get("type")
        if isinstance(kind, list):
            names = ["number" if k == "integer" else k for k in kind if isinstance(k, str)]
            return " | ".join(names) or "any"
        if kind == "object":
            return self.object(spec, indent)
        if kind == "string":
            values = [json.dumps(v) for v in spec.get("enum") or () if isinstance(v, str)]
            return " | ".join(values) or "string"
        if kind == "array":
            items = spec.get("items")
            return f"{self.type(items, indent)}[]" if items else "Array<any>"
        return _SCALARS.get(kind if isinstance(kind, str) else "", "any")

    def object(self, spec: dict[str, Any], indent: str) -> str:
        out = [f"{indent}// {spec['description']}\n"] if _text(spec.get("description")) else []
        if not indent and _text(spec.get("title")):  # the parameters' own title
            out.insert(0, f"// {spec['title']}\n")
        out.append("{\n")
        properties = spec.get("properties")
        listed = spec.get("required")
        required = set(listed) if isinstance(listed, list) else set()
        for key, raw in (properties if isinstance(properties, dict) else {}).items():
            prop = self.resolve(raw)
            prop = prop if isinstance(prop, dict) else {}
            if _text(prop.get("title")) and not indent:  # titles of top-level fields only
                out.append(f"{indent}// {prop['title']}\n{indent}//\n")
            if _text(prop.get("description")):
                out.append(f"{indent}// {prop['description']}\n")
            examples = [e for e in prop.get("examples") or () if isinstance(e, str)]
            if examples:
                out.append(f"{indent}// Examples:\n")
                out.extend(f'{indent}// - "{example}"\n' for example in examples)
            optional = "" if key in required else "?"
            line = f"{indent}{key}{optional}: {self.type(prop, indent + _INDENT)},"
            out.append(line + _default(prop) + "\n")
        out.append(f"{indent}}}")
        return "".join(out)


_SCALARS = {"number": "number", "integer": "number", "boolean": "boolean"}


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _default(prop: dict[str, Any]) -> str:
    if "default" not in prop:
        return ""
    value = prop["default"]
    if isinstance(value, str):
        return f" // default: {value}" if prop.get("enum") else f' // default: "{value}"'
    return f" // default: {compact_json(value)}"


def ts_object(schema: dict[str, Any]) -> str:
    """A JSON Schema object as a TypeScript object type with descriptions as comments."""
    return _Renderer(schema).object(schema, "")
