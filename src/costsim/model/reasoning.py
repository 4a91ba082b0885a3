"""Whether a request thinks before it answers (billed as output, reported or not)."""

from __future__ import annotations

from costsim.model.call import Call
from costsim.model.usage import NoteKind, Usage

__all__ = ["output_hidden", "reasons"]

_ALWAYS = ("o1", "o3", "o4", "gpt-5", "codex", "gpt-oss")
"""OpenAI models that reason on every request that does not turn it off (their model pages)."""
_NOT_BY_DEFAULT = ("gpt-5-chat", "gpt-5.")
"""Of those names, the ones that do not unless asked: GPT-5's chat model, and GPT-5.1 and
later, whose ``reasoning_effort`` defaults to ``none``."""


def reasons(call: Call) -> bool:
    """The request thinks: it enables thinking or reasoning (Anthropic ``thinking``, OpenAI
    ``reasoning_effort`` / ``reasoning``), or, asking neither, its model always reasons
    (OpenAI's o-series and GPT-5 models; the model the response names, so an Azure
    deployment's name does not hide it)."""
    if call.thinking is not None:
        return call.thinking.enabled
    if call.provider != "openai":
        return False
    name = call.priced_model.lower().rsplit("/", 1)[-1].removeprefix("ft:")
    return name.startswith(_ALWAYS) and not name.startswith(_NOT_BY_DEFAULT)


def output_hidden(call: Call, usage: Usage) -> bool:
    """``usage`` is an estimate whose output may lie well above what the recording shows: a
    stream cut before it finished, or a call that thought without reporting it (a reasoning
    model recorded without usage). What arrived is then a lower bound."""
    if not usage.estimated:
        return False
    if any(note.kind is NoteKind.INCOMPLETE_STREAM for note in call.notes):
        return True
    return usage.reasoning is None and reasons(call)
