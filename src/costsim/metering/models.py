"""Facts about models that metering needs, as data keyed by model name prefix.

Longest matching prefix wins. Rules that changed over time belong here, not in code.
"""

from __future__ import annotations

from datetime import date
from typing import TypeVar

from costsim.model import Call, Flavour
from costsim.pricing.platform_ids import model_name

T = TypeVar("T")

__all__ = [
    "chat_reply_priming",
    "encoding_for",
    "family",
    "functions_frame",
    "keeps_thinking",
    "lookup",
    "provider_of",
    "spells_named_choice",
    "tool_prompt_tokens",
    "wraps_parallel_calls",
]


def base_model_name(model: str) -> str:
    """A model id without a platform's decoration (see :func:`model_name`)."""
    return model_name(model)


_BEST: dict[tuple[int, str], tuple[object, str]] = {}
"""(table, model) -> (the table, its longest matching key): every call of a run asks the same
few tables about the same few models."""


def lookup(table: dict[str, T], model: str, default: T) -> T:
    """The entry of ``table`` whose key is the longest prefix of ``model`` (else ``default``);
    platform decorations of the model id are ignored. Tables are module constants."""
    found = _BEST.get((id(table), model))
    if found is None or found[0] is not table:
        name = base_model_name(model)
        best = ""
        for prefix in table:
            if name.startswith(prefix) and len(prefix) > len(best):
                best = prefix
        found = (table, best)
        _BEST[(id(table), model)] = found
    best = found[1]
    return table[best] if best else default


# OpenAI models and their tiktoken encoding (cookbook: o200k_base for gpt-4o / 4.1 / 5 / o-series).
_OPENAI_ENCODING: dict[str, str] = {
    "gpt-4o": "o200k_base",
    "chatgpt-4o": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4.5": "o200k_base",
    "gpt-5": "o200k_base",
    "gpt-oss": "o200k_base",
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4": "o200k_base",
    "codex": "o200k_base",
    "computer-use": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-3.5": "cl100k_base",
}

# Tokens OpenAI adds to prime the reply, measured on the corpus: the cookbook's 3, except
# where recorded text-only chats show a constant offset from it.
_CHAT_REPLY_PRIMING: dict[str, int] = {
    "gpt-5": 2,
    "o3": 2,
    "o4": 2,
    "computer-use": 2,
    "gpt-4o-search-preview": -8,
    "gpt-4o-mini-search-preview": -8,
}

# Previous-turn thinking blocks: Opus 4.5+ and Sonnet 4.6+ keep them (billed as input);
# earlier models and all Haiku models strip them (DESIGN.md section 6).
_KEEPS_THINKING: dict[str, bool] = {
    "claude-opus-4-5": True,
    "claude-opus-4-6": True,
    "claude-opus-4-7": True,
    "claude-opus-4-8": True,
    "claude-opus-5": True,
    "claude-sonnet-4-6": True,
    "claude-sonnet-4-7": True,
    "claude-sonnet-5": True,
    "claude-haiku": False,
    "claude": False,
    "gpt": True,
    "o": True,
}

# Calibration families: models that share a tokenizer and API overheads.
_FAMILIES: dict[str, str] = {
    "claude": "claude",
    "claude-3": "claude-3",
    "claude-opus-4-7": "claude-4.7+",
    "claude-opus-4-8": "claude-4.7+",
    "claude-opus-5": "claude-4.7+",
    "claude-sonnet-5": "claude-4.7+",
    "claude-fable": "claude-4.7+",
}


_PROVIDERS: dict[str, str] = {
    "claude": "anthropic",
    "gpt": "openai",
    "chatgpt": "openai",
    "o1": "openai",
    "o3": "openai",
    "o4": "openai",
    "codex": "openai",
    "computer-use": "openai",
}


def provider_of(model: str) -> str | None:
    """The provider serving a model name, when the name says (None: unknown)."""
    found = lookup(_PROVIDERS, model, "")
    return found or None


def encoding_for(call: Call) -> str:
    """The offline encoding used to count a call's request."""
    if call.provider == "anthropic":
        return "cl100k_base"  # Claude's tokenizer is not public; calibration scales from this
    return lookup(_OPENAI_ENCODING, call.model, "o200k_base")


def chat_reply_priming(model: str) -> int:
    return lookup(_CHAT_REPLY_PRIMING, model, 3)


# The tool-use system prompt Anthropic adds when a request carries tools, as (tool_choice auto
# or none, tool_choice any or tool) tokens. Source: the "Pricing" table of the tool-use
# overview (platform.claude.com/docs/en/agents-and-tools/tool-use/overview, current edition
# for Claude 4+; the Claude 3 rows from the 2025 edition, docs.anthropic.com). Unlisted future
# models take the Claude 4.5 figures.
_TOOL_PROMPT: dict[str, tuple[int, int]] = {
    "claude": (496, 588),
    "claude-3": (346, 313),  # Sonnet 3.7, Sonnet 3.5 (Oct 2024)
    "claude-3-5-sonnet-20240620": (294, 261),
    "claude-3-5-haiku": (264, 355),
    "claude-3-haiku": (264, 340),
    "claude-3-opus": (530, 281),
    "claude-3-sonnet": (159, 235),
    "claude-opus-4": (313, 315),  # Opus 4 and 4.1
    "claude-sonnet-4": (313, 315),
    "claude-opus-4-5": (496, 588),
    "claude-opus-4-6": (497, 589),
    "claude-opus-4-7": (675, 804),
    "claude-opus-4-8": (290, 410),
    "claude-sonnet-4-5": (496, 588),
    "claude-sonnet-4-6": (497, 589),
    "claude-sonnet-5": (354, 474),
    "claude-haiku-4-5": (496, 588),
}


LARGEST_REQUEST_OVERHEAD = max(tokens for pair in _TOOL_PROMPT.values() for tokens in pair)
"""The most tokens a provider documents adding to one request beyond what it sends: the
largest tool-use system prompt above (Claude Opus 4.7, tool_choice any)."""


_DOCUMENTED_TOOL_PROMPTS = {prefix: True for prefix in _TOOL_PROMPT if prefix != "claude"}
"""The models whose tool-use system prompt is listed (another Claude gets the generic one)."""


def tool_prompt_documented(model: str) -> bool:
    """Whether ``model``'s tool-use system prompt is documented, not the generic guess."""
    return lookup(_DOCUMENTED_TOOL_PROMPTS, model, False)


def tool_prompt_tokens(model: str, *, forced: bool) -> int:
    """Anthropic's tool-use system prompt for ``model`` (``forced``: tool_choice any / tool)."""
    auto, forced_count = lookup(_TOOL_PROMPT, model, _TOOL_PROMPT["claude"])
    return forced_count if forced else auto


def keeps_thinking(model: str) -> bool:
    return lookup(_KEEPS_THINKING, model, True)


# OpenAI model generations that share request overheads (reasoning models add their own).
_OPENAI_GENERATIONS: dict[str, str] = {
    "gpt-3.5": "gpt-4",
    "gpt-4": "gpt-4",
    "gpt-4o": "gpt-4o",
    "chatgpt-4o": "gpt-4o",
    "gpt-4.1": "gpt-4o",
    "gpt-4.5": "gpt-4o",
    "gpt-5": "gpt-5",
    "gpt-oss": "gpt-5",
    "o1": "gpt-5",
    "o3": "gpt-5",
    "o4": "gpt-5",
    "codex": "gpt-5",
}


def family(call: Call) -> str:
    """The calibration family of a call: API shape and model generation.

    Tools no longer split a family: the tool-use system prompt is a provider rule and the
    rest of what tools add is a fitted term of the family.
    """
    if call.provider == "anthropic":
        return lookup(_FAMILIES, call.model, "claude")
    return f"{call.flavour.shape.value}/{lookup(_OPENAI_GENERATIONS, call.model, 'gpt-4o')}"


# Tokens OpenAI adds around the functions namespace beyond its text, per API and model prefix,
# as (no system message, a system message present). Chat: the namespace joins the system
# message when there is one (openai-chat-tokens' measurement: 9, 4 less when joining). The
# rest is measured on recordings and held in every source that has such calls: Responses
# frames the namespace alike with or without instructions; GPT-5 models on Chat Completions
# add a constant block whenever functions are present (Responses does not).
_FUNCTIONS_FRAME: dict[Flavour, dict[str, tuple[int, int]]] = {
    Flavour.OPENAI_CHAT: {"": (9, 5), "gpt-5": (90, 90)},
    Flavour.OPENAI_RESPONSES: {"": (3, 3), "gpt-5": (8, 8)},
}

# Early Responses API (March 2025) put the ``multi_tool_use`` namespace (the parallel-call
# wrapper, 194 tokens) beside the functions for GPT-4o-class models: seen on 2025-03-27, gone
# by 2025-06-10 (the change date between is unknown; the midpoint is used).
_PARALLEL_NAMESPACE = 194
_PARALLEL_NAMESPACE_UNTIL = date(2025, 5, 4)


def functions_frame(call: Call, *, system: bool) -> int:
    """Tokens around the functions namespace of an OpenAI request (0 for other APIs)."""
    table = _FUNCTIONS_FRAME.get(call.flavour.shape)
    if table is None:
        return 0
    alone, joined = lookup(table, call.model, table[""])
    frame = joined if system else alone
    when = call.recorded_at.date() if call.recorded_at else None
    if (
        call.flavour.shape is Flavour.OPENAI_RESPONSES
        and when is not None
        and when < _PARALLEL_NAMESPACE_UNTIL
        and lookup(_OPENAI_GENERATIONS, call.model, "gpt-4o") == "gpt-4o"
    ):
        frame += _PARALLEL_NAMESPACE
    return frame


def wraps_parallel_calls(call: Call) -> bool:
    """Whether several tool calls in one assistant turn reach the model as one
    ``multi_tool_use.parallel`` call (GPT-4o-class models on Chat Completions; GPT-5 models
    see each call as its own message, as the harmony format documents)."""
    return (
        call.flavour.shape is Flavour.OPENAI_CHAT
        and lookup(_OPENAI_GENERATIONS, call.model, "gpt-4o") != "gpt-5"
    )


def spells_named_choice(model: str) -> bool:
    """Whether a ``tool_choice`` naming a function adds its name to the prompt: measured on
    GPT-4o-class models (name and 4 tokens); GPT-5 models, on both APIs, bill nothing for it."""
    return not base_model_name(model).startswith("gpt-5")
