"""A REPL coding agent on Claude Sonnet 4.5: one long tool-use session fixing a retry bug.

Every call re-sends the static system prompt with the running summary at its end (the summary
changes every few calls), 41 tools of about 400 tokens, and the whole history so far. Several
results are large (a 11k grep, an 18k and a 15k file, a 32k test run); call 7's text quotes a
line from the middle of the dispatcher it read.
"""

# ruff: noqa: E501  (a table of steps, one per line)

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from examples.coding_prompt import SUMMARIES, system_prompt
from examples.coding_tools import tool_definitions
from examples.recorder import Json, Recorder
from examples.sources import grep_hits, module_source, pytest_run, repository_paths

__all__ = ["CALLS", "generate"]

MODEL = "claude-sonnet-4-5"
TASK = (
    "Webhook deliveries are retried one time too many (customers with max_attempts=3 see four "
    "POSTs), and tests/webhooks/test_dispatch.py fails about one run in five on CI. Can you "
    "find out why and fix both?"
)
DISPATCHER = '\nclass WebhookDispatcher:\n    """Delivers events to customer endpoints, retrying failures."""\n'
BUG = "        if attempt > self._policy.max_attempts:"
FIX = "        if attempt >= self._policy.max_attempts:"
JITTER = "        jitter = random.uniform(0, self.jitter_seconds)"
SEEDED = "        jitter = self._rng.uniform(0, self.jitter_seconds)"
SLEEP = "    time.sleep(policy.next_delay(attempt))"
CLOCK = "    clock.advance(policy.next_delay(attempt))"
# At which call the running summary changes (index into SUMMARIES).
SUMMARY_AT = {0: 0, 4: 1, 9: 2, 16: 3, 21: 4}

Result = Callable[[random.Random], str]


def _listing(rng: random.Random) -> str:
    names = ["__init__.py", "dispatcher.py", "retry.py", "signing.py", "models.py", "routes.py"]
    return "\n".join(f"- src/tally/webhooks/{name} ({rng.randint(1, 30)} KB)" for name in names)


def _files(rng: random.Random) -> str:
    return "\n".join(
        [
            "src/tally/webhooks/dispatcher.py",
            "src/tally/webhooks/retry.py",
            "src/tally/workers/webhook_worker.py",
            "src/tally/settings.py",
            "tests/webhooks/test_dispatch.py",
            "tests/webhooks/conftest.py",
        ]
    )


def _source(path: str, lines: int, anchors: dict[int, str]) -> Result:
    return lambda rng: module_source(rng, path, lines, anchors)


def _grep(word: str, files: int, hits: int) -> Result:
    return lambda rng: grep_hits(rng, word, repository_paths(rng, files), hits)


def _tests(target: str, passed: int, failures: list[tuple[str, list[str]]]) -> Result:
    return lambda rng: pytest_run(rng, target, passed, failures)


def _fixed(text: str) -> Result:
    return lambda rng: text


DISPATCH_FAILURES = [
    ("test_deliver_stops_after_max_attempts", [
        ">       assert transport.calls == 3, f\"expected 3 delivery attempts, got {transport.calls}\"",
        "E       AssertionError: expected 3 delivery attempts, got 4", "E       assert 4 == 3"]),
    ("test_backoff_delays_grow_exponentially", [
        ">       assert delays == [1.0, 2.0, 4.0]",
        "E       assert [1.37, 2.81, 4.02] == [1.0, 2.0, 4.0]",
        "E         At index 0 diff: 1.37 != 1.0"]),
]  # fmt: skip
DIFF = f"""\
diff --git a/src/tally/webhooks/dispatcher.py b/src/tally/webhooks/dispatcher.py
index 3f9c2e1..8a41d07 100644
--- a/src/tally/webhooks/dispatcher.py
+++ b/src/tally/webhooks/dispatcher.py
@@ -{{START}},7 +{{START}},7 @@ class WebhookDispatcher:
             response = self._client.post(endpoint.url, content=body, headers=headers)
             if response.ok:
                 return DeliveryResult.delivered(attempt, response.status_code)
-{BUG}
+{FIX}
                 return DeliveryResult.gave_up(attempt, response.status_code)
             self._clock.sleep(self._policy.next_delay(attempt))
diff --git a/src/tally/webhooks/retry.py b/src/tally/webhooks/retry.py
index 71be0aa..c52d9f3 100644
--- a/src/tally/webhooks/retry.py
+++ b/src/tally/webhooks/retry.py
@@ -41,6 +41,7 @@ class RetryPolicy:
     max_attempts: int = 3
     base_delay: float = 1.0
     jitter_seconds: float = 0.5
+    rng: random.Random = field(default_factory=random.Random)
@@ -58,5 +59,5 @@ class RetryPolicy:
-{JITTER}
+{SEEDED}
"""

# (text before the tool call or None, tool, input, result); the last step only answers.
STEPS: list[tuple[str | None, str, Json, Result]] = [
    ("I'll start with the webhook package and the failing tests.", "list_dir", {"path": "src/tally/webhooks"}, _listing),
    (None, "grep", {"pattern": "max_attempts", "output_mode": "files_with_matches"}, _files),
    (None, "read_file", {"path": "src/tally/webhooks/retry.py"}, _source("src/tally/webhooks/retry.py", 100, {58: JITTER})),
    ("Let me run the dispatch tests to see how they fail.", "run_tests", {"target": "tests/webhooks/test_dispatch.py"}, _tests("tests/webhooks/test_dispatch.py", 64, DISPATCH_FAILURES)),
    (None, "read_file", {"path": "tests/webhooks/test_dispatch.py"}, _source("tests/webhooks/test_dispatch.py", 170, {96: SLEEP})),
    (None, "grep", {"pattern": "attempt", "path": "src/tally", "output_mode": "content"}, _grep("attempt", 30, 110)),
    (None, "read_file", {"path": "src/tally/webhooks/dispatcher.py"}, _source("src/tally/webhooks/dispatcher.py", 340, {120: DISPATCHER, 205: BUG})),
    (f"Found both causes. The dispatcher checks `{BUG.strip()}` after a failed POST, so with max_attempts=3 it makes a fourth attempt; and RetryPolicy draws jitter from the global random module, so the backoff assertions are flaky. I'll write a plan and fix them.", "todo_write", {"todos": [{"id": "1", "content": "Fix off-by-one in WebhookDispatcher.deliver", "status": "in_progress"}, {"id": "2", "content": "Seed RetryPolicy jitter", "status": "pending"}, {"id": "3", "content": "Use the injected clock in dispatch tests", "status": "pending"}, {"id": "4", "content": "Regression test, full suite, mypy, ruff", "status": "pending"}]}, _fixed("Todo list updated (4 items, 1 in progress).")),
    (None, "edit_file", {"path": "src/tally/webhooks/dispatcher.py", "old_string": BUG, "new_string": FIX}, _fixed("Edited src/tally/webhooks/dispatcher.py: 1 replacement.")),
    (None, "edit_file", {"path": "src/tally/webhooks/retry.py", "old_string": JITTER, "new_string": SEEDED}, _fixed("Edited src/tally/webhooks/retry.py: 1 replacement.")),
    (None, "grep", {"pattern": "time\\.sleep", "path": "tests", "output_mode": "content"}, _grep("sleep", 6, 14)),
    (None, "edit_file", {"path": "tests/webhooks/test_dispatch.py", "old_string": SLEEP, "new_string": CLOCK, "replace_all": True}, _fixed("Edited tests/webhooks/test_dispatch.py: 3 replacements.")),
    (None, "run_tests", {"target": "tests/webhooks/test_dispatch.py"}, _tests("tests/webhooks/test_dispatch.py", 24, [("test_worker_builds_policy_from_settings", [">       policy = RetryPolicy(**settings.webhook_retry, rng=rng)", "E       TypeError: RetryPolicy.__init__() got an unexpected keyword argument 'rng'"])])),
    (None, "grep", {"pattern": "RetryPolicy\\(", "output_mode": "content"}, _grep("RetryPolicy", 8, 16)),
    (None, "read_file", {"path": "src/tally/workers/webhook_worker.py"}, _source("src/tally/workers/webhook_worker.py", 290, {})),
    ("The worker builds the policy from settings; it needs to pass its own Random through.", "edit_file", {"path": "src/tally/workers/webhook_worker.py", "old_string": "        policy = RetryPolicy(**self.settings.webhook_retry)", "new_string": "        policy = RetryPolicy(**self.settings.webhook_retry, rng=self._rng)"}, _fixed("Edited src/tally/workers/webhook_worker.py: 1 replacement.")),
    (None, "run_tests", {"target": "tests/webhooks"}, _tests("tests/webhooks/test_dispatch.py", 52, [])),
    ("Adding a regression test for max_attempts=1 and 3.", "write_file", {"path": "tests/webhooks/test_retry_policy.py", "content": "import random\n\nimport pytest\n\nfrom tally.webhooks.dispatcher import WebhookDispatcher\nfrom tally.webhooks.retry import RetryPolicy\n\n\n@pytest.mark.parametrize(\"max_attempts\", [1, 3])\ndef test_dispatcher_attempts_exactly_max_attempts(fake_transport, frozen_clock, max_attempts):\n    fake_transport.fail_with(503)\n    policy = RetryPolicy(max_attempts=max_attempts, rng=random.Random(0))\n    dispatcher = WebhookDispatcher(fake_transport.client(), policy, clock=frozen_clock)\n    result = dispatcher.deliver(fake_transport.endpoint, {\"type\": \"invoice.paid\"})\n    assert result.attempts == max_attempts\n    assert fake_transport.calls == max_attempts\n"}, _fixed("Wrote tests/webhooks/test_retry_policy.py (17 lines).")),
    (None, "run_tests", {"target": "tests/webhooks/test_retry_policy.py"}, _tests("tests/webhooks/test_retry_policy.py", 2, [])),
    ("Now the whole suite.", "run_tests", {}, _tests("tests/test_billing.py", 420, [])),
    (None, "type_check", {"paths": ["src"]}, _fixed('src/tally/webhooks/retry.py:44: error: Need type annotation for "rng"  [var-annotated]\nFound 1 error in 1 file (checked 142 source files)')),
    (None, "edit_file", {"path": "src/tally/webhooks/retry.py", "old_string": "    rng: random.Random = field(default_factory=random.Random)", "new_string": "    rng: random.Random = field(default_factory=lambda: random.Random())"}, _fixed("Edited src/tally/webhooks/retry.py: 1 replacement.")),
    (None, "type_check", {"paths": ["src"]}, _fixed("Success: no issues found in 142 source files")),
    (None, "git_diff", {}, _fixed(DIFF)),
]  # fmt: skip
FINAL = (
    "Fixed both problems.\n\n"
    f"- `src/tally/webhooks/dispatcher.py:{{LINE}}`: `{BUG.strip()}` became `{FIX.strip()}`, so a "
    "delivery makes at most max_attempts POSTs (the extra fourth attempt customers saw).\n"
    "- `src/tally/webhooks/retry.py:46`: RetryPolicy takes an injectable `rng` and draws jitter "
    "from it instead of the global random module; the worker passes its own seeded Random.\n"
    "- `tests/webhooks/test_dispatch.py`: the tests advance the frozen clock instead of "
    "sleeping, which removes the CI flakiness; `tests/webhooks/test_retry_policy.py` is a new "
    "regression test for max_attempts 1 and 3.\n\n"
    "Verified: the full suite passes (422 tests), mypy and ruff are clean. Nothing is committed."
)
CALLS = len(STEPS) + 1


def _request(tools: list[Json], summary: str, messages: list[Json]) -> Json:
    return {
        "model": MODEL,
        "max_tokens": 32000,
        "system": system_prompt(summary),
        "tools": tools,
        "messages": messages,
    }


def generate(folder: Path) -> None:
    recorder = Recorder(
        seed=20251118,
        start=datetime(2025, 11, 18, 14, 2, 11, tzinfo=UTC),
        about="A REPL coding agent (Claude Sonnet 4.5, 41 tools) in one long tool-use session.",
    )
    tools = tool_definitions(recorder.rng)
    messages: list[Json] = [{"role": "user", "content": TASK}]
    summary, line = SUMMARIES[0], 0
    for index, (text, tool, arguments, result) in enumerate(STEPS):
        summary = SUMMARIES[SUMMARY_AT[index]] if index in SUMMARY_AT else summary
        use = {"type": "tool_use", "id": recorder.tool_id(), "name": tool, "input": arguments}
        content = [{"type": "text", "text": text}, use] if text else [use]
        recorder.anthropic(_request(tools, summary, messages), content)
        output = result(recorder.rng).replace("{START}", str(line - 3))
        if BUG in output.splitlines():
            line = output.splitlines().index(BUG) + 1
        messages = [
            *messages,
            {"role": "assistant", "content": content},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": output}],
            },
        ]
    recorder.anthropic(
        _request(tools, summary, messages),
        [{"type": "text", "text": FINAL.replace("{LINE}", str(line))}],
    )
    recorder.write(folder / "retry_bugfix_session.yaml")
