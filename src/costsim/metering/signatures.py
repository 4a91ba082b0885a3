"""How tool definitions and output schemas reach the model, rendered as text to count.

OpenAI renders functions as a TypeScript-like namespace with descriptions as comments (the
cookbook recipe's per-property counts approximate this but leave nested objects out);
Anthropic puts each tool's JSON Schema in its tool-use system prompt.
"""

from __future__ import annotations

import json
from typing import Any

from costsim.metering.tokenizers import TokenCounter
from costsim.model import ToolDef

__all__ = ["anthropic_tool_tokens", "compact_json", "openai_tool_tokens", "ts_object"]


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def anthropic_tool_tokens(tool: ToolDef, count: TokenCounter) -> int:
    """A tool as JSON: its name, description and input schema."""
    return count(tool.name) + count(tool.description) + count(compact_json(tool.input_schema))


def openai_tool_tokens(tool: ToolDef, count: TokenCounter) -> int:
    """One function as OpenAI renders it for the model (see :func:`openai_functions`)."""
    return count(_function(tool))


OPENAI_FUNCTIONS_FRAME = 9
"""Tokens around the functions namespace beyond its text (openai-chat-tokens' measurement)."""


def openai_functions(tools: tuple[ToolDef, ...]) -> str:
    """The functions namespace OpenAI prepends to the system message, as text.

    The layout follows what OpenAI's models reveal of their own prompt and what the
    open-source ``openai-chat-tokens`` estimator measured against billed usage: a TypeScript
    namespace, each function's description as a ``//`` comment, its parameters as an object
    type with each property's description as a comment.
    """
    body = "\n".join(_function(tool) for tool in tools)
    return f"namespace functions {{\n\n{body}\n}} // namespace functions"


def _function(tool: ToolDef) -> str:
    lines = [f"// {tool.description}"] if tool.description else []
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    if schema.get("properties"):
        lines += [f"type {tool.name} = (_: {{", _ts_properties(schema, 0), "}) => any;"]
    else:
        lines.append(f"type {tool.name} = () => any;")
    return "\n".join(lines) + "\n"


def _ts_type(spec: Any, indent: int) -> str:
    if not isinstance(spec, dict):
        return "any"
    if isinstance(spec.get("enum"), list):
        return " | ".join(json.dumps(item) for item in spec["enum"])
    for combinator in ("anyOf", "oneOf"):
        if isinstance(spec.get(combinator), list):
            return " | ".join(_ts_type(option, indent) for option in spec[combinator])
    kind = spec.get("type")
    if isinstance(kind, list):
        return " | ".join(_ts_type({**spec, "type": k}, indent) for k in kind)
    if kind == "array":
        items = spec.get("items")
        return f"{_ts_type(items, indent)}[]" if items else "any[]"
    if kind == "object" or "properties" in spec:
        inner = _ts_properties(spec, indent + 2)
        return f"{{\n{inner}\n}}" if inner else "object"
    if kind in ("integer", "number"):
        return "number"
    return str(kind) if kind in ("string", "boolean", "null") else "any"


def _ts_properties(schema: dict[str, Any], indent: int) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return ""
    listed = schema.get("required")
    required: list[Any] = listed if isinstance(listed, list) else []
    pad = " " * indent
    lines = []
    for key, spec in properties.items():
        description = spec.get("description") if isinstance(spec, dict) else None
        if description and indent < 2:  # nested properties are listed without comments
            lines.append(f"{pad}// {description}")
        optional = "" if key in required else "?"
        lines.append(f"{pad}{key}{optional}: {_ts_type(spec, indent)},")
    return "\n".join(lines)


def ts_object(schema: dict[str, Any]) -> str:
    """A JSON Schema object as a TypeScript object type with descriptions as comments."""
    inner = _ts_properties(schema, 0)
    return f"{{\n{inner}\n}}" if inner else "{}"
