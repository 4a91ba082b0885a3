"""``selective_tools``: send only the tools a turn is likely to need.

Tools are grouped into categories (``categories``: category -> tool names or globs; tools in
no category are ``general``). Per call, categories are chosen by keyword patterns on the latest
user text; the ``core`` categories are always sent. ``oracle`` mode sends on every call only
the tools the trace actually uses: the upper bound of what selection can save. Tools keep
their recorded order, so the cached tools prefix stays stable between calls that choose the
same set (and changes, visibly, when the set changes).

Divergence: the recorded response calls a tool that was not sent to that call.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from typing import Literal

from pydantic import Field

from costsim.engine.registry import Context, Params, register
from costsim.engine.trace import Event, SimCall, SimTrace
from costsim.model import Call, TextBlock, ToolDef, ToolResultBlock, ToolUseBlock

__all__ = ["SelectiveTools", "SelectiveToolsParams"]

DEFAULT_KEYWORDS: dict[str, list[str]] = {
    "file": [r"[\w./-]+\.\w{1,5}\b", r"\b(file|read|open|write|edit|directory|folder)s?\b"],
    "code": [r"\b(function|class|method|bug|refactor|test|compile|lint|type)s?\b"],
    "web": [r"https?://", r"\b(url|search|web|browse|page|website)s?\b"],
    "git": [r"\b(commit|branch|diff|merge|rebase|git|pull request)s?\b"],
    "shell": [r"\b(run|command|shell|install|build|deploy)s?\b"],
}
DEFAULT_CATEGORIES: dict[str, list[str]] = {
    "file": ["*read*", "*write*", "*edit*", "*file*", "glob", "list_dir", "grep"],
    "code": [
        "*symbol*",
        "*reference*",
        "*definition*",
        "*lint*",
        "*format*",
        "*test*",
        "type_check",
    ],
    "web": ["*url*", "*search*", "*browser*", "*fetch*"],
    "git": ["git_*", "*pull_request*", "*issue*"],
    "shell": ["run_*", "*command*", "*docker*", "*kubectl*", "*install*", "*package*"],
}


class SelectiveToolsParams(Params):
    categories: dict[str, list[str]] = Field(default_factory=lambda: dict(DEFAULT_CATEGORIES))
    keywords: dict[str, list[str]] = Field(default_factory=lambda: dict(DEFAULT_KEYWORDS))
    core: list[str] = Field(default_factory=lambda: ["general"])
    mode: Literal["heuristic", "oracle"] = "heuristic"


def _category(tool: ToolDef, categories: dict[str, list[str]]) -> str:
    for name, patterns in categories.items():
        if any(fnmatch.fnmatchcase(tool.name, pattern) for pattern in patterns):
            return name
    return "general"


def _latest_user_text(call: Call) -> str:
    for message in reversed(call.messages):
        if message.role != "user" or any(isinstance(b, ToolResultBlock) for b in message.content):
            continue
        return " ".join(b.text for b in message.content if isinstance(b, TextBlock))
    return ""


def _used_tools(trace: SimTrace) -> set[str]:
    used: set[str] = set()
    for item in trace.calls:
        blocks = [*item.call.response, *(b for m in item.call.messages for b in m.content)]
        used.update(b.name for b in blocks if isinstance(b, ToolUseBlock))
    return used


class SelectiveTools:
    name = "selective_tools"
    summary = "send only the tool definitions a turn is likely to need"
    params = SelectiveToolsParams

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
                keep = [tool for tool in call.tools if tool.name in used]
                why = "tools the trace uses"
            else:
                text = _latest_user_text(call)
                chosen = set(params.core) | {
                    category
                    for category, regexes in patterns.items()
                    if any(r.search(text) for r in regexes)
                }
                keep = [tool for tool in call.tools if _category(tool, params.categories) in chosen]
                why = "categories " + ", ".join(sorted(chosen))
            if len(keep) == len(call.tools):
                calls.append(item)
                continue
            sent = {tool.name for tool in keep}
            events.append(
                Event(
                    self.name,
                    "change",
                    f"sent {len(keep)} of {len(call.tools)} tools ({why})",
                    call.provenance,
                )
            )
            offered = {tool.name for tool in call.tools}
            called = {b.name for b in call.response if isinstance(b, ToolUseBlock)}
            missing = sorted((called & offered) - sent)
            if missing:
                events.append(
                    Event(
                        self.name,
                        "divergence",
                        f"the recorded response calls {', '.join(missing)}, which was not sent",
                        call.provenance,
                    )
                )
            calls.append(
                dataclasses.replace(item, call=dataclasses.replace(call, tools=tuple(keep)))
            )
        return SimTrace(trace.path, tuple(calls)), events


register(SelectiveTools())
