"""What OpenAI adds around a request's content that no tokenizer sees in the JSON.

- the functions namespace (:func:`costsim.metering.signatures.openai_functions`) and the
  tokens around it (:func:`costsim.metering.models.functions_frame`);
- tool calls and their results addressed by function: the model reads a call as a message to
  ``functions.NAME`` and a result as a message from it (the harmony format's
  ``to=functions.NAME`` recipient and ``functions.NAME`` author), so both cost the function's
  name, whatever the request's ``tool`` role or ``name`` field says;
- several calls in one assistant turn as one ``multi_tool_use.parallel`` call carrying a JSON
  list of ``recipient_name`` / ``parameters`` pairs (GPT-4o-class models on Chat Completions);
- a named ``tool_choice`` (its name and 4 tokens; nothing on GPT-5 models) and ``none``
  (one token);
- a structured-output schema, of which the model sees the inner JSON Schema only;
- reasoning items passed back to the Responses API: the model reads its earlier chain of
  thought only within the current turn (after the last user message; OpenAI's reasoning guide,
  and the harmony format's rule of keeping the chain of thought between tool calls), or in
  every turn when ``reasoning.context`` is ``all_turns``. Their text is encrypted, so what
  they cost is fitted on the length of the encrypted content (see
  :mod:`costsim.metering.calibration`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from costsim.metering.models import functions_frame, spells_named_choice
from costsim.metering.signatures import compact_json, openai_functions
from costsim.metering.tokenizers import TokenCounter
from costsim.model import (
    Call,
    Flavour,
    Message,
    ReasoningBlock,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
)

__all__ = [
    "arguments",
    "call_tokens",
    "function_names",
    "functions_tokens",
    "namespace_tokens",
    "output_schema",
    "parallel_calls_tokens",
    "passed_back_reasoning",
    "result_author",
    "tool_choice_tokens",
]


def functions_tokens(call: Call, namespace: int, *, system: bool) -> int:
    """The functions section: the namespace's ``namespace`` tokens and its frame."""
    return namespace + functions_frame(call, system=system)


def namespace_tokens(tools: tuple[ToolDef, ...], count: TokenCounter) -> int:
    return count(openai_functions(tools))


def arguments(block: ToolUseBlock) -> str:
    return block.input if isinstance(block.input, str) else compact_json(block.input)


def call_tokens(block: ToolUseBlock, count: TokenCounter) -> int:
    """A tool call as the model reads it: addressed ``to=functions.NAME``, then its
    arguments."""
    return count(f" to=functions.{block.name}") + count(arguments(block))


def parallel_calls_tokens(blocks: Iterable[ToolUseBlock], count: TokenCounter) -> int:
    """Several calls of one turn as one ``multi_tool_use.parallel`` call."""
    uses = []
    for block in blocks:
        try:
            parameters = json.loads(arguments(block) or "{}")
        except ValueError:
            parameters = arguments(block)
        uses.append({"recipient_name": f"functions.{block.name}", "parameters": parameters})
    return count(" to=multi_tool_use.parallel") + count(compact_json({"tool_uses": uses}))


def function_names(messages: Iterable[Message]) -> dict[str, str]:
    """Tool call ids of a conversation and the functions they called."""
    return {
        block.id: block.name
        for message in messages
        for block in message.content
        if isinstance(block, ToolUseBlock) and block.id
    }


def result_author(message: Message, names: Mapping[str, str]) -> str | None:
    """``functions.NAME`` for a message carrying a tool result whose call is known."""
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            name = names.get(block.tool_use_id) or message.name
            return f"functions.{name}" if name else None
    return None


def tool_choice_tokens(call: Call, count: TokenCounter) -> int:
    """A named function costs its name and 4 tokens (GPT-5 models: none), ``none`` one
    token."""
    choice = call.tool_choice
    if call.flavour.shape is Flavour.ANTHROPIC_MESSAGES or not call.tools:
        return 0
    if choice == "none":
        return 1
    if isinstance(choice, dict) and choice.get("type") == "function":
        if not spells_named_choice(call.model):
            return 0
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else choice.get("name")
        return count(name if isinstance(name, str) else "") + 4
    return 0


def output_schema(output: object) -> object:
    """The JSON Schema of a structured-output request: OpenAI wraps it with a name and
    ``strict`` (``response_format.json_schema`` / ``text.format``), and the model sees the
    schema itself (measured on the corpus: the wrapper's keys are not billed)."""
    if isinstance(output, dict) and isinstance(output.get("schema"), dict):
        return output["schema"]
    return output


def passed_back_reasoning(call: Call) -> tuple[int, int]:
    """Reasoning items (with encrypted content) the model reads, and their encrypted
    characters: those of the current turn, or of every turn with ``context: all_turns``."""
    if call.flavour.shape is not Flavour.OPENAI_RESPONSES:
        return 0, 0
    messages = call.messages
    start = 0
    if call.extra.get("reasoning_context") != "all_turns":
        users = [i for i, m in enumerate(messages) if m.role == "user"]
        start = users[-1] + 1 if users else 0
    items = [
        block
        for message in messages[start:]
        for block in message.content
        if isinstance(block, ReasoningBlock) and block.encrypted
    ]
    return len(items), sum(len(block.encrypted) for block in items)
