"""The four synthetic agents written by examples/generate.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from examples.generate import (
    ANTHROPIC_URI,
    OPENAI_URI,
    Recorder,
    anthropic_reply,
    code_listing,
    generator,
)

Json = dict[str, Any]
SONNET = "claude-sonnet-4-5"

# --- a REPL coding agent ----------------------------------------------------------------------

CODING_RULES = [
    "Read the relevant files before you change them, and keep changes minimal.",
    "Run the tests after every change; report failures with the failing assertion.",
    "Never commit secrets, generated files or large binaries.",
    "Prefer small functions with clear names; follow the project's existing style.",
    "Explain what you changed and why in two or three sentences at the end.",
    "When a command fails, read its output carefully before trying again.",
    "Use grep to find call sites before renaming anything.",
    "Ask before deleting files or rewriting history.",
]
TOOL_NAMES = [
    "read_file", "write_file", "edit_file", "grep", "glob", "list_dir", "run_tests", "run_command",
    "git_status", "git_diff", "git_log", "git_commit", "git_branch", "search_symbols",
    "find_references", "go_to_definition", "format_file", "lint_file", "type_check", "open_url",
    "web_search", "read_issue", "comment_issue", "create_pull_request", "read_pull_request",
    "list_tests", "coverage_report", "profile", "benchmark", "install_package", "remove_package",
    "list_dependencies", "read_env", "set_env", "docker_build", "docker_run", "kubectl_get",
    "kubectl_logs", "sql_query", "notebook_run", "todo_add", "todo_list",
]  # fmt: skip


def _tool(recorder: Recorder, name: str) -> Json:
    properties = {
        f"{word}_{i}": {"type": "string", "description": recorder.words(14).capitalize() + "."}
        for i, word in enumerate(recorder.words(5).split())
    }
    return {
        "name": name,
        "description": f"{name.replace('_', ' ').capitalize()}. "
        + recorder.words(150).capitalize()
        + ".",
        "input_schema": {
            "type": "object",
            "properties": properties,
            "required": list(properties)[:2],
        },
    }


def _coding_system(recorder: Recorder, summary: str) -> str:
    paragraphs = [
        f"## {rule}\n" + recorder.words(110).capitalize() + "." for rule in CODING_RULES * 2
    ]
    return (
        "You are a REPL coding agent working in the user's repository.\n\n"
        + "\n\n".join(paragraphs)
        + f"\n\n## Conversation summary\n{summary}"
    )


@generator("coding_agent")
def coding_agent(folder: Path) -> None:
    recorder = Recorder(seed=7)
    static_rng_state = recorder.rng.getstate()
    tools = [_tool(recorder, name) for name in TOOL_NAMES]
    recorder.rng.setstate(static_rng_state)
    static = _coding_system(recorder, "")
    messages: list[Json] = [
        {
            "role": "user",
            "content": "The parser tests fail after the tokenizer refactor. Find and fix it.",
        }
    ]
    quoted = ""
    for turn in range(17):
        summary = f"So far: {turn // 5 * 5} steps; examined {recorder.words(12)}."
        system = static + summary
        tool = ["grep", "read_file", "read_file", "run_tests", "edit_file"][turn % 5]
        path = f"src/parser/{recorder.rng.choice(['lexer', 'tokens', 'grammar', 'ast'])}.py"
        request = {
            "model": SONNET,
            "max_tokens": 4096,
            "system": system,
            "tools": tools,
            "messages": messages,
        }
        if turn == 16:
            content: list[Json] = [
                {
                    "type": "text",
                    "text": "Fixed: the lexer skipped the last token. "
                    f"I checked `{quoted}` and the tests pass.",
                }
            ]
        else:
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{turn:03d}",
                    "name": tool,
                    "input": {"path": path},
                }
            ]
        reply = recorder.record(
            ANTHROPIC_URI, request, anthropic_reply(recorder, SONNET, content, turn)
        )
        if turn == 16:
            break
        lines = recorder.rng.choice([60, 100, 160, 240]) if tool in ("grep", "read_file") else 30
        result = code_listing(recorder, path, lines)
        if turn == 3:
            quoted = result.splitlines()[lines // 2].strip()
        messages = [
            *messages,
            {"role": "assistant", "content": reply["content"]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{turn:03d}", "content": result}
                ],
            },
        ]
    recorder.write(folder / "refactor_session.yaml")


# --- a multi-agent orchestrator -------------------------------------------------------------

ROLES = {
    "search": "Find the files and symbols relevant to the task.",
    "research": "Read documentation and summarise what applies.",
    "qa": "Answer short factual questions about the codebase.",
    "code": "Write the code change for the task.",
    "test": "Write and run tests for the change.",
    "docs": "Update the documentation for the change.",
    "review": "Review the change and list problems.",
    "init": "Set up the workspace for a new task.",
}


@generator("orchestrator")
def orchestrator(folder: Path) -> None:
    recorder = Recorder(seed=11, spacing=(3, 20))
    system = (
        "You are the orchestrator of a team of agents. Delegate each step to one role with the "
        "delegate tool and combine their answers.\n\n"
        + "\n".join(f"- {r}: {d}" for r, d in ROLES.items())
        + "\n\n"
        + recorder.words(900).capitalize()
        + "."
    )
    delegate = {
        "name": "delegate",
        "description": "Hand a task to one of the team's roles and get its answer back.",
        "input_schema": {
            "type": "object",
            "properties": {
                "role": {"type": "string", "enum": list(ROLES)},
                "task": {"type": "string"},
            },
            "required": ["role", "task"],
        },
    }
    messages: list[Json] = [
        {"role": "user", "content": "Add rate limiting to the public API and document it."}
    ]
    order = [
        "init",
        "search",
        "research",
        "qa",
        "code",
        "test",
        "review",
        "code",
        "test",
        "docs",
        "qa",
        "review",
    ]
    for step, role in enumerate(order):
        request = {
            "model": SONNET,
            "max_tokens": 2048,
            "system": system,
            "tools": [delegate],
            "messages": messages,
        }
        task = f"{ROLES[role]} Context: {recorder.words(25)}."
        use = {
            "type": "tool_use",
            "id": f"toolu_o{step:02d}",
            "name": "delegate",
            "input": {"role": role, "task": task},
        }
        reply = recorder.record(
            ANTHROPIC_URI, request, anthropic_reply(recorder, SONNET, [use], step)
        )
        role_request = {
            "model": SONNET,
            "max_tokens": 1024,
            "system": f"You are the {role} agent. {ROLES[role]} "
            + recorder.words(120).capitalize()
            + ".",
            "messages": [{"role": "user", "content": task}],
        }
        answer = recorder.words(recorder.rng.randint(40, 160)).capitalize() + "."
        recorder.record(
            ANTHROPIC_URI,
            role_request,
            anthropic_reply(recorder, SONNET, [{"type": "text", "text": answer}], 100 + step),
        )
        messages = [
            *messages,
            {"role": "assistant", "content": reply["content"]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": answer}],
            },
        ]
    final = {
        "model": SONNET,
        "max_tokens": 2048,
        "system": system,
        "tools": [delegate],
        "messages": messages,
    }
    recorder.record(
        ANTHROPIC_URI,
        final,
        anthropic_reply(
            recorder,
            SONNET,
            [{"type": "text", "text": "Rate limiting is in place and documented."}],
            99,
        ),
    )
    recorder.write(folder / "rate_limiting_project.yaml")


# --- a browser-automation MCP session --------------------------------------------------------

BROWSER_TOOLS = [
    "browser_navigate",
    "browser_click",
    "browser_type",
    "browser_snapshot",
    "browser_take_screenshot",
    "browser_evaluate",
    "browser_tabs",
]


def _snapshot(recorder: Recorder, start: int, nodes: int) -> str:
    lines = []
    for ref in range(start, start + nodes):
        kind = recorder.rng.choice(["link", "button", "textbox", "heading", "listitem", "generic"])
        lines.append(
            f'{"  " * recorder.rng.randint(0, 4)}- {kind} "{recorder.words(3)}" [ref=e{ref}]'
        )
    return "\n".join(lines)


def _page_result(recorder: Recorder, url: str, refs: int, code: str) -> str:
    console = "\n".join(
        f"- [{recorder.rng.choice(['LOG', 'WARNING', 'ERROR'])}] {recorder.words(8)}"
        for _ in range(12)
    )
    return (
        f"### Ran Playwright code\n```js\n{code}\n```\n\n"
        f"### Page state\n- Page URL: {url}\n- Page Title: {recorder.words(3).title()}\n"
        f"- Page Snapshot:\n```yaml\n{_snapshot(recorder, refs, 120)}\n```\n\n"
        f"### Console messages\n{console}\n\n"
        "### Open tabs\n- 0: (current) [Shop] (https://shop.example.com/)\n- 1: [Docs] (https://docs.example.com/)\n"
    )


@generator("browser_mcp")
def browser_mcp(folder: Path) -> None:
    recorder = Recorder(seed=23, spacing=(2, 8))
    tools = [
        {
            "name": name,
            "description": f"{name.replace('_', ' ')} in the browser.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "ref": {"type": "string"},
                    "url": {"type": "string"},
                    "text": {"type": "string"},
                },
            },
        }
        for name in BROWSER_TOOLS
    ]
    system = (
        "You drive a web browser through MCP tools to complete the user's task. "
        + recorder.words(300)
        + "."
    )
    messages: list[Json] = [
        {"role": "user", "content": "Buy the cheapest USB-C cable on shop.example.com."}
    ]
    plan = [
        "browser_navigate",
        "browser_click",
        "browser_type",
        "browser_click",
        "browser_snapshot",
        "browser_click",
        "browser_evaluate",
        "browser_click",
        "browser_take_screenshot",
        "browser_click",
        "browser_type",
        "browser_click",
        "browser_tabs",
        "browser_click",
    ]
    ref = 10
    for step, tool in enumerate(plan):
        request = {
            "model": SONNET,
            "max_tokens": 1024,
            "system": system,
            "tools": tools,
            "messages": messages,
        }
        arguments = (
            {"url": "https://shop.example.com/"}
            if tool == "browser_navigate"
            else {"ref": f"e{ref + 5}"}
        )
        use = {"type": "tool_use", "id": f"toolu_b{step:02d}", "name": tool, "input": arguments}
        content = (
            [use] if step % 4 else [{"type": "text", "text": f"Next: {recorder.words(8)}."}, use]
        )
        reply = recorder.record(
            ANTHROPIC_URI, request, anthropic_reply(recorder, SONNET, content, step)
        )
        ref += 120
        result = _page_result(
            recorder,
            f"https://shop.example.com/step/{step}",
            ref,
            f"await page.getByRef('e{ref}').click();",
        )
        messages = [
            *messages,
            {"role": "assistant", "content": reply["content"]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": result}],
            },
        ]
    final = {
        "model": SONNET,
        "max_tokens": 1024,
        "system": system,
        "tools": tools,
        "messages": messages,
    }
    recorder.record(
        ANTHROPIC_URI,
        final,
        anthropic_reply(
            recorder, SONNET, [{"type": "text", "text": "Ordered the 1 m cable for $4.99."}], 99
        ),
    )
    recorder.write(folder / "shopping_session.yaml")


# --- an assistant with light side calls -----------------------------------------------------


def _chat_reply(text: str, index: int) -> Json:
    return {
        "id": f"chatcmpl-synthetic-{index:03d}",
        "object": "chat.completion",
        "model": "gpt-4.1-2025-04-14",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
    }


@generator("side_calls")
def side_calls(folder: Path) -> None:
    recorder = Recorder(seed=31, spacing=(4, 30))
    system = {
        "role": "system",
        "content": "You are a helpful engineering assistant. " + recorder.words(400) + ".",
    }
    history: list[Json] = [system]
    side_tasks = [
        "Summarise this file in one sentence:\n",
        "Extract the person's name from this text:\n",
        "Classify this ticket as bug, feature or question:\n",
    ]
    for turn in range(9):
        history.append({"role": "user", "content": f"Question {turn}: {recorder.words(60)}?"})
        answer = recorder.words(recorder.rng.randint(80, 200)).capitalize() + "."
        recorder.record(
            OPENAI_URI, {"model": "gpt-4.1", "messages": history}, _chat_reply(answer, turn)
        )
        history.append({"role": "assistant", "content": answer})
        if turn % 2 == 1:
            task = side_tasks[turn // 2 % 3] + recorder.words(120)
            side = [*history, {"role": "user", "content": task}]
            recorder.record(
                OPENAI_URI,
                {"model": "gpt-4.1", "messages": side},
                _chat_reply(recorder.words(12), 50 + turn),
            )
    recorder.write(folder / "assistant_with_side_calls.yaml")
