"""Whether a request thinks before it answers (billed as output, reported or not)."""

from __future__ import annotations

from costsim.model.call import Call

__all__ = ["reasons"]

_ALWAYS = ("o1", "o3", "o4", "gpt-5", "codex")
"""OpenAI models that reason on every request, whatever it asks (their model pages)."""
_NEVER = ("gpt-5-chat",)
"""Of those names, the ones that do not (GPT-5's chat model)."""


def reasons(call: Call) -> bool:
    """The request thinks: it enables thinking or reasoning (Anthropic ``thinking``, OpenAI
    ``reasoning_effort`` / ``reasoning``), or, asking neither, its model always reasons
    (OpenAI's o-series and GPT-5 models, not gpt-5-chat)."""
    if call.thinking is not None:
        return call.thinking.enabled
    if call.provider != "openai":
        return False
    name = call.model.rsplit("/", 1)[-1].removeprefix("ft:")
    return name.startswith(_ALWAYS) and not name.startswith(_NEVER)
