"""``selective_tools``: send only the tool definitions a turn is likely to need.

Tools are grouped into categories (``categories``: category -> tool names or globs, first
match wins; tools in no category are ``general``). Per call, categories are chosen by
``keywords`` regexes on the latest user text (the newest user message that is not a tool
result); the ``core`` categories are always sent. ``oracle`` mode sends on every call only the
tools the trace actually uses (in recorded responses or in history tool calls): the upper bound
of what selection can save. Kept tools keep their recorded order, so the cached tools prefix
stays stable between calls that choose the same set, and changes, visibly, when it changes.

Only client tools (functions) are selected: server tools, MCP servers and other built-ins are
always sent, since their use does not show as tool calls. Requests stay valid: a tool that
``tool_choice`` names is always sent, a call whose ``tool_choice`` requires some tool keeps its
tools when the selection is empty, and an Anthropic request whose history holds tool calls
keeps the tools that history used when the selection is empty (the API rejects tool blocks
without tool definitions).

Divergence: the recorded response calls a tool that was offered but not sent (one per call).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from costsim.model import Call, Flavour, TextBlock, ToolDef, ToolResultBlock, ToolUseBlock
from costsim.strategies.base import Context, Params
from costsim.strategies.trace import Event, SimCall, SimTrace

__all__ = ["DEFAULT_CATEGORIES", "DEFAULT_KEYWORDS", "SelectiveTools", "SelectiveToolsParams"]

GENERAL = "general"
CLIENT_TOOL_TYPES = frozenset({"function", "custom"})
"""Tool types whose calls come back as tool calls; others (server tools such as web search or
code execution, MCP servers, built-ins) are always sent: the recording cannot show their use."""

_FILE_NAME = (
    r"\b[\w-]+\.(?:py|pyi|js|mjs|cjs|ts|mts|tsx|jsx|vue|svelte|astro|md|mdx|rst|txt|json|"
    r"jsonl|ya?ml|toml|ini|cfg|conf|env|csv|tsv|parquet|pdf|png|jpe?g|gif|webp|svg|html?|css|"
    r"scss|less|go|rs|java|kt|kts|scala|swift|dart|c|h|cc|cpp|hpp|cs|fs|rb|php|pl|lua|r|jl|"
    r"ex|exs|erl|hs|ml|clj|gradle|tf|tfvars|hcl|proto|graphql|sh|bash|zsh|ps1|bat|sql|log|xml|"
    r"lock|ipynb|docx?|xlsx?|pptx?|zip|tar|gz)\b(?!\.\w)"
)
_DOMAIN = r"\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|ai|app|co|edu|gov|info|shop)\b"
DEFAULT_KEYWORDS: dict[str, list[str]] = {
    "file": [
        r"(?:^|[\s`'\"(])[\w.-]*/[\w./-]+",  # a path: src/app.py, ./notes, /etc/hosts
        _FILE_NAME,  # app.py, README.md (not a domain: shop.example.com)
        r"\b(?:file|read|open|write|edit|directory|folder)s?\b",
    ],
    "code": [r"\b(?:function|class|method|bug|refactor|test|compile|lint)s?\b"],
    "web": [
        r"https?://",
        _DOMAIN,
        # "open" is a file's or a page's: both sent (a tool dropped is a divergence)
        r"\b(?:url|search|web|browse|browser|website|page|navigate|click|link|tab|open)s?\b",
    ],
    "git": [r"\b(?:commit|branch|diff|merge|rebase|git|pull request)s?\b"],
    "shell": [r"\b(?:run|command|shell|install|build)s?\b"],
}
DEFAULT_CATEGORIES: dict[str, list[str]] = {
    "file": ["*read*", "*write*", "*edit*", "*file*", "glob", "list_dir*", "grep"],
    "code": ["*symbol*", "*reference*", "*definition*", "*lint*", "*test*", "type_check"],
    "web": ["*url*", "*search*", "*browser*", "*fetch*"],
    "git": ["git_*", "*pull_request*", "*issue*"],
    "shell": ["run_*", "*command*", "*shell*", "bash", "*install*"],
}


class SelectiveToolsParams(Params):
    @property
    def knows_the_future(self) -> bool:
        return self.mode == "oracle"

    categories: dict[str, list[str]] = Field(default_factory=lambda: dict(DEFAULT_CATEGORIES))
    """Category -> tool names or globs (replaces the defaults); others are ``general``."""
    keywords: dict[str, list[str]] = Field(default_factory=lambda: dict(DEFAULT_KEYWORDS))
    """Category -> regexes (case insensitive) on the latest user text (replaces the defaults)."""
    core: list[str] = Field(default_factory=lambda: [GENERAL])
    """Categories sent on every call."""
    mode: Literal["heuristic", "oracle"] = "heuristic"
    """``heuristic``: keywords on the user text; ``oracle``: only tools the trace calls."""

    @field_validator("keywords")
    @classmethod
    def _compiles(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for category, regexes in value.items():
            for regex in regexes:
                try:
                    re.compile(regex)
                except re.error as exc:
                    raise ValueError(f"{category}: {regex!r} is not a regex ({exc})") from None
        return value

    @model_validator(mode="after")
    def _known_core(self) -> SelectiveToolsParams:
        known = {GENERAL, *self.categories, *self.keywords}
        unknown = [name for name in self.core if name not in known]
        if unknown:
            raise ValueError(
                f"core names unknown categor{'ies' if len(unknown) > 1 else 'y'} "
                f"{', '.join(map(repr, unknown))}; known: {', '.join(sorted(known))}"
            )
        return self


def category_of(name: str, categories: dict[str, list[str]]) -> str:
    for category, patterns in categories.items():
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns):
            return category
    return GENERAL


def latest_user_text(call: Call) -> str:
    """The newest user turn's text; tool results (user turns on Anthropic) are skipped."""
    for message in reversed(call.messages):
        if message.role != "user" or any(isinstance(b, ToolResultBlock) for b in message.content):
            continue
        return " ".join(b.text for b in message.content if isinstance(b, TextBlock))
    return ""


def _history_tools(call: Call) -> set[str]:
    return {b.name for m in call.messages for b in m.content if isinstance(b, ToolUseBlock)}


def _used_tools(trace: SimTrace) -> set[str]:
    used: set[str] = set()
    for item in trace.calls:
        used |= _history_tools(item.call)
        used.update(b.name for b in item.call.response if isinstance(b, ToolUseBlock))
    return used


def _named_choice(choice: Any) -> str | None:
    """The tool ``tool_choice`` names (Anthropic ``tool``, OpenAI ``function``), if any."""
    if not isinstance(choice, dict):
        return None
    name = choice.get("name")
    function = choice.get("function")
    if isinstance(function, dict):
        name = function.get("name")
    return name if isinstance(name, str) else None


def _requires_tool(choice: Any) -> bool:
    if isinstance(choice, str):
        return choice in ("required", "any")
    return isinstance(choice, dict) and choice.get("type") in ("any", "required")


class SelectiveTools:
    name = "selective_tools"
    summary = "send only the tool definitions a turn is likely to need"
    params = SelectiveToolsParams
    removes_only = True
    """It only takes content away from requests (or changes none): see
    :func:`costsim.analysis.prompt_band.removes_only`."""

    def apply(
        self, trace: SimTrace, params: SelectiveToolsParams, context: Context
    ) -> tuple[SimTrace, list[Event]]:
        patterns = {
            category: [re.compile(p, re.IGNORECASE) for p in regexes]
            for category, regexes in params.keywords.items()
        }
        used = _used_tools(trace) if params.mode == "oracle" else set()
        events: list[Event] = []
        calls: list[SimCall] = []
        for item in trace.calls:
            call = item.call
            if not call.tools:
                calls.append(item)
                continue
            if params.mode == "oracle":
                wanted = used
                why = "tools the trace uses"
            else:
                text = latest_user_text(call)
                chosen = set(params.core) | {
                    category
                    for category, regexes in patterns.items()
                    if any(r.search(text) for r in regexes)
                }
                wanted = {
                    t.name for t in call.tools if category_of(t.name, params.categories) in chosen
                }
                why = "categories " + ", ".join(sorted(chosen))
            keep, note = self._valid(call, wanted)
            if note:
                events.append(Event(self.name, "note", note, call.provenance))
            if len(keep) == len(call.tools):
                calls.append(item)
                continue
            new = dataclasses.replace(call, tools=_marked_last(call.tools, keep))
            # the prompt change the variant is billed for (calibrated), not the raw count
            removed = round(-context.meter.delta(call, new))
            events.append(
                Event(
                    self.name,
                    "change",
                    f"sent {len(keep)} of {len(call.tools)} tools ({why}); "
                    f"{removed:,} prompt tokens of definitions removed (calibrated offline count)",
                    call.provenance,
                    tokens=removed,
                )
            )
            sent = {tool.name for tool in keep}
            offered = {tool.name for tool in call.tools}
            called = {b.name for b in call.response if isinstance(b, ToolUseBlock)}
            missing = sorted((called & offered) - sent)
            if missing:
                events.append(
                    Event(
                        self.name,
                        "divergence",
                        f"the recorded response calls {', '.join(missing)}, which "
                        f"{'was' if len(missing) == 1 else 'were'} not sent",
                        call.provenance,
                    )
                )
            calls.append(dataclasses.replace(item, call=new))
        return SimTrace(trace.path, tuple(calls)), events

    def _valid(self, call: Call, wanted: set[str]) -> tuple[tuple[ToolDef, ...], str]:
        """The tools to send (recorded order), widened so the request stays valid."""
        named = _named_choice(call.tool_choice)
        names = wanted | ({named} if named else set())
        names |= {t.name for t in call.tools if t.type not in CLIENT_TOOL_TYPES}
        note = ""
        if not any(t.name in names for t in call.tools):
            if _requires_tool(call.tool_choice):
                return call.tools, "tool_choice requires a tool: all tools kept"
            history = _history_tools(call)
            if call.flavour is Flavour.ANTHROPIC_MESSAGES and history:
                names = history
                note = "the history calls tools and Anthropic requires their definitions: kept"
        return tuple(t for t in call.tools if t.name in names), note


def _marked_last(offered: tuple[ToolDef, ...], keep: tuple[ToolDef, ...]) -> tuple[ToolDef, ...]:
    """``keep`` with the cache breakpoint the offered list ended on moved to its own last
    tool: code that marks its last tool marks the last it sends (dropped, the breakpoint
    caching the tools and system prompt would be lost with it)."""
    mark = offered[-1].cache_control if offered else None
    if mark is None or not keep or keep[-1].cache_control is not None:
        return keep
    return (*keep[:-1], dataclasses.replace(keep[-1], cache_control=mark))
