"""A multi-agent orchestrator on Claude Sonnet 4.5 adding rate limiting to an API.

The orchestrator keeps one long conversation (20 calls); each delegation starts a short,
fresh conversation of one role (one call, or two when the role uses a tool first), recognisable
by its system prompt ("You are the search agent..."). Everything is recorded on Sonnet 4.5;
routing can later move the light roles (search, research, qa) to Haiku 4.5.
"""

# ruff: noqa: E501  (a table of steps, one per line)

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from examples.orchestrator_roles import (
    ORCHESTRATOR_SYSTEM,
    ORCHESTRATOR_TOOLS,
    ROLE_TOOLS,
    role_system,
)
from examples.recorder import Json, Recorder

__all__ = ["CALLS", "generate"]

MODEL = "claude-sonnet-4-5"
TASK = (
    "Add per-API-key rate limiting to tally's public REST API: limits per plan (free 60/min, "
    "pro 600/min, enterprise configurable), standard RateLimit headers and 429 responses with "
    "Retry-After. Tests and docs too. Don't deploy anything."
)
Tool = tuple[str, Json, str]  # a role's tool call before it answers: name, input, result

# (orchestrator's note or None, role, task, the role's tool call or None, the role's answer)
STEPS: list[tuple[str | None, str, str, Tool | None, str]] = [
    ("I'll start by preparing the workspace and mapping the API code.", "init", "Prepare the tally repository for a new task 'per-API-key rate limiting': create branch feat/rate-limiting from main, sync dependencies with uv, run the test suite once as a baseline, and report the branch, the Python version and the baseline result.", ("run_command", {"command": "git switch -c feat/rate-limiting && uv sync && uv run pytest -q"}, "Switched to a new branch 'feat/rate-limiting'\nResolved 64 packages in 12ms\nInstalled 64 packages in 210ms\n........................................................................ [ 17%]\n" + "." * 72 + " [ 34%]\n" + "." * 72 + " [ 51%]\n" + "." * 72 + " [ 68%]\n" + "." * 72 + " [ 85%]\n" + "." * 60 + "      [100%]\n420 passed in 8.31s"), "Branch feat/rate-limiting created from main (clean tree). uv sync installed 64 packages; Python 3.12.7. Baseline: 420 tests passed in 8.3 s, no warnings. Nothing else changed."),
    (None, "search", "In the tally repository, find everything relevant to adding per-API-key rate limiting to the public REST API: where requests are authenticated by API key, where middleware is registered on the FastAPI app, where plans (free/pro/enterprise) are defined, and any existing throttling or Redis usage. Report paths with one line each.", ("grep", {"pattern": "api_key|APIKey|add_middleware|class Plan|redis|throttl", "path": "src/tally"}, "src/tally/api/app.py:41:    app.add_middleware(RequestIdMiddleware)\nsrc/tally/api/app.py:42:    app.add_middleware(GZipMiddleware, minimum_size=1024)\nsrc/tally/api/auth.py:18:class APIKeyAuth:\nsrc/tally/api/auth.py:37:    async def __call__(self, request: Request) -> APIKey:\nsrc/tally/api/auth.py:52:        api_key = await self._keys.get_by_prefix(prefix)\nsrc/tally/billing/plans.py:12:class Plan(StrEnum):\nsrc/tally/billing/plans.py:27:PLAN_LIMITS: dict[Plan, PlanLimits] = {\nsrc/tally/storage/redis.py:9:def redis_client(settings: Settings) -> Redis:\nsrc/tally/workers/webhook_worker.py:88:        self._redis = redis_client(self.settings)\nsrc/tally/settings.py:73:    redis_url: str = \"redis://localhost:6379/0\""), "- src/tally/api/app.py:41 - middleware registration (RequestIdMiddleware, GZipMiddleware); a rate-limit middleware goes here.\n- src/tally/api/auth.py:18 - APIKeyAuth dependency; resolves the key by prefix and returns an APIKey with account_id and plan.\n- src/tally/billing/plans.py:12,27 - Plan enum and PLAN_LIMITS (currently seats and invoices per month, no request limits).\n- src/tally/storage/redis.py:9 - redis_client(settings), already used by the webhook worker.\n- src/tally/settings.py:73 - redis_url setting.\nNo existing throttling anywhere."),
    (None, "research", "Summarise the current IETF draft for RateLimit HTTP header fields (draft-ietf-httpapi-ratelimit-headers): the header names and syntax to send on every response and on 429 responses, and how Retry-After should be used. Keep it under 200 words with links.", ("fetch_url", {"url": "https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/"}, "# RateLimit header fields for HTTP\n\n## Abstract\nThis document defines the RateLimit-Policy and RateLimit HTTP header fields for servers to advertise their quota policies and the current service limits, thereby allowing clients to avoid being throttled.\n\n## 3. RateLimit-Policy Field\nThe RateLimit-Policy response header field is a non-empty List of Quota Policy Items. Example: RateLimit-Policy: \"default\";q=100;w=10\n\n## 4. RateLimit Field\nThe RateLimit response header field is a non-empty List of Service Limit Items. Example: RateLimit: \"default\";r=50;t=30\n\n## 5. Throttling\nServers MAY use Retry-After on 429 (Too Many Requests) responses. When both are present, Retry-After takes precedence."), "Draft -09 (https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/) defines two structured fields:\n- RateLimit-Policy: \"<name>\";q=<quota>;w=<window seconds>, e.g. \"pro\";q=600;w=60. Sent on responses so clients know the policy.\n- RateLimit: \"<name>\";r=<remaining>;t=<seconds until reset>, e.g. \"pro\";r=412;t=17.\nOn 429 responses, send Retry-After (seconds) as well; it takes precedence over t. Older X-RateLimit-Limit / -Remaining / -Reset headers are non-standard; GitHub and Stripe still send them, so some clients expect them."),
    (None, "qa", "In tally, how are settings overridden per environment (env vars, files?), and is there a convention for per-account overrides stored in the database (for example an enterprise customer's custom limits)? Quote the files.", None, "Settings: src/tally/settings.py uses pydantic-settings with env prefix TALLY_ (e.g. TALLY_REDIS_URL), no config files. Per-account overrides: src/tally/billing/models.py has Account.overrides, a JSONB column read through Account.override(key, default) (used for 'invoice_quota'). So enterprise limits can live there as 'requests_per_minute'."),
    ("Plan: a sliding-window limiter in Redis keyed by API key, a middleware that applies it after auth, headers per the draft, limits from the plan with an account override.", "code", "In tally (FastAPI, Python 3.12), add per-API-key rate limiting. 1) src/tally/api/ratelimit.py: class SlidingWindowLimiter(redis, clock) with async hit(key: str, limit: int, window_s: int) -> Decision(allowed, remaining, reset_s), using a Redis sorted set per key (ZREMRANGEBYSCORE + ZADD + ZCARD + EXPIRE in one MULTI). 2) Limits: add requests_per_minute to PlanLimits in src/tally/billing/plans.py (free 60, pro 600, enterprise 600 default) and read Account.override('requests_per_minute', plan default). 3) Middleware RateLimitMiddleware registered in src/tally/api/app.py after RequestIdMiddleware: resolves the API key with APIKeyAuth, applies the limiter, sets RateLimit-Policy and RateLimit headers on every response, returns 429 JSON {\"error\": \"rate_limited\"} with Retry-After when denied. Conventions: timestamps via tally.clock.utcnow, mypy --strict. Report files changed.", ("write_file", {"path": "src/tally/api/ratelimit.py", "content": "\"\"\"Sliding-window rate limiting per API key.\"\"\"\n..."}, "Wrote src/tally/api/ratelimit.py (118 lines)."), "Done. Files:\n- src/tally/api/ratelimit.py (new, 118 lines): SlidingWindowLimiter, Decision, RateLimitMiddleware, limit_for(api_key).\n- src/tally/billing/plans.py: PlanLimits.requests_per_minute (free 60, pro 600, enterprise 600).\n- src/tally/api/app.py: middleware registered after RequestIdMiddleware.\nUnauthenticated requests (health, docs) are not limited. The window uses utcnow().timestamp(); members are request ids to avoid collisions. mypy passes on the new module."),
    (None, "test", "In tally, write tests for the new rate limiting (src/tally/api/ratelimit.py, RateLimitMiddleware): allowed under the limit with correct RateLimit headers; 429 with Retry-After at the limit; the window slides (frozen clock via tally.clock); per-account override from Account.overrides; unauthenticated routes not limited. Use the existing fakeredis fixture in tests/conftest.py. Run them and report.", ("run_tests", {"target": "tests/api/test_ratelimit.py"}, "tests/api/test_ratelimit.py::test_allows_under_limit PASSED\ntests/api/test_ratelimit.py::test_denies_at_limit_with_retry_after PASSED\ntests/api/test_ratelimit.py::test_window_slides FAILED\ntests/api/test_ratelimit.py::test_account_override PASSED\ntests/api/test_ratelimit.py::test_health_not_limited PASSED\n\nE   assert 0 == 1\nE    +  where 0 = Decision(allowed=False, remaining=0, reset_s=60).remaining\n1 failed, 4 passed in 0.41s"), "Wrote tests/api/test_ratelimit.py (5 tests). 4 pass; test_window_slides fails: after advancing the frozen clock by 61 s the limiter still reports remaining=0. Likely cause: SlidingWindowLimiter computes the window start from time.time() in ZREMRANGEBYSCORE instead of the injected clock, so old entries are never removed under a frozen clock."),
    (None, "code", "In tally, src/tally/api/ratelimit.py: SlidingWindowLimiter.hit computes the window start with time.time() instead of the injected clock (tally.clock.utcnow), so tests with a frozen clock never expire entries. Use the injected clock for both the member score and the window start. Report the change.", None, "Fixed: hit() now takes now = self._clock().timestamp() once and uses it for ZADD score, ZREMRANGEBYSCORE bound and the reset computation. Removed the time import. One file changed: src/tally/api/ratelimit.py (4 lines)."),
    (None, "test", "In tally, run tests/api/test_ratelimit.py and then the full suite; report failures with the assertion.", None, "tests/api/test_ratelimit.py: 5 passed. Full suite: 425 passed in 8.9 s, no warnings."),
    (None, "review", "Review the rate-limiting change on branch feat/rate-limiting of tally (git diff main): src/tally/api/ratelimit.py, src/tally/billing/plans.py, src/tally/api/app.py, tests/api/test_ratelimit.py. Check correctness, concurrency, Redis usage, headers against draft-ietf-httpapi-ratelimit-headers, security and tests. List findings by severity.", ("git_diff", {"paths": "src tests"}, "diff --git a/src/tally/api/app.py b/src/tally/api/app.py\n@@ -41,2 +41,3 @@\n     app.add_middleware(RequestIdMiddleware)\n+    app.add_middleware(RateLimitMiddleware, limiter=SlidingWindowLimiter(redis, utcnow))\n     app.add_middleware(GZipMiddleware, minimum_size=1024)\ndiff --git a/src/tally/api/ratelimit.py b/src/tally/api/ratelimit.py\nnew file mode 100644\n+++ b/src/tally/api/ratelimit.py\n@@ -0,0 +1,118 @@\n+class SlidingWindowLimiter:\n+    async def hit(self, key: str, limit: int, window_s: int) -> Decision:\n+        now = self._clock().timestamp()\n+        async with self._redis.pipeline(transaction=True) as pipe:\n+            pipe.zremrangebyscore(key, 0, now - window_s)\n+            pipe.zadd(key, {request_id(): now})\n+            pipe.zcard(key)\n+            pipe.expire(key, window_s)\n+            _, _, count, _ = await pipe.execute()"), "Findings:\n- HIGH: the Redis key is the raw API key (ratelimit.py:57). Keys would be readable by anyone with Redis access; use the key id or a hash.\n- MEDIUM: denied requests are still added to the sorted set, so a client hammering at the limit never recovers until it stops completely. Only ZADD when allowed (check ZCARD first) or remove the member on denial.\n- MEDIUM: Middleware order: GZipMiddleware is added after, so it runs first (Starlette runs middleware in reverse order of add); fine, but RateLimitMiddleware must run after auth - it calls APIKeyAuth itself, which authenticates twice per request. Pass the resolved key via request.state.\n- LOW: RateLimit-Policy name should be the plan name, currently 'default'.\n- Tests: no test for concurrent hits; acceptable."),
    ("The review found a high and two medium issues; sending them back to the code role.", "code", "In tally, address these review findings in src/tally/api/ratelimit.py: (HIGH) do not use the raw API key as the Redis key: use 'ratelimit:' + api_key.id; (MEDIUM) do not count denied requests: check the count before ZADD inside the transaction (use a Lua script or WATCH); (MEDIUM) authenticate once: APIKeyAuth stores the resolved key on request.state.api_key and the middleware reads it instead of calling auth again; (LOW) RateLimit-Policy uses the plan name. Keep mypy --strict clean. Report changes.", None, "All four addressed:\n- Redis key is now f\"ratelimit:{api_key.id}\".\n- hit() runs a small Lua script (ZREMRANGEBYSCORE, ZCARD, conditional ZADD, EXPIRE) so denied requests are not recorded; atomic without WATCH.\n- APIKeyAuth sets request.state.api_key; the middleware reads it and skips limiting when absent (unauthenticated routes).\n- Policy name is the plan value ('free', 'pro', 'enterprise').\nFiles: src/tally/api/ratelimit.py, src/tally/api/auth.py (2 lines). mypy clean."),
    (None, "test", "In tally, update tests/api/test_ratelimit.py for the changed rate limiter (Lua script, request.state.api_key, policy named after the plan): add a test that denied requests are not counted (a client that keeps calling at the limit recovers after the window), then run the api tests and the full suite.", None, "Updated the fixture to set request.state.api_key through the real APIKeyAuth dependency, asserted policy names, added test_denied_requests_not_counted. tests/api: 31 passed. Full suite: 426 passed in 9.1 s. fakeredis supports the Lua script (it needs the lupa extra, already in the dev dependencies)."),
    (None, "qa", "In tally, where is the public API documented for customers (folder and format), and is there a changelog convention?", None, "Customer docs: docs/api/*.md (MkDocs, nav in mkdocs.yml under 'API reference'); errors are listed in docs/api/errors.md. Changelog: CHANGELOG.md, Keep a Changelog format, entries go under '## [Unreleased]' in Added/Changed/Fixed."),
    (None, "docs", "In tally, document the new per-API-key rate limiting for customers: a new page docs/api/rate-limits.md (limits per plan: free 60/min, pro 600/min, enterprise configurable; the RateLimit-Policy and RateLimit headers with an example; 429 responses with Retry-After and the JSON body {\"error\": \"rate_limited\"}; advice to back off using Retry-After), add it to mkdocs.yml nav under 'API reference', add rate_limited to docs/api/errors.md, and add an 'Added' entry to CHANGELOG.md under Unreleased.", ("write_file", {"path": "docs/api/rate-limits.md", "content": "# Rate limits\n\nEvery API key may make a limited number of requests per minute, depending on your plan..."}, "Wrote docs/api/rate-limits.md (64 lines)."), "Done: docs/api/rate-limits.md (new: limits table, header examples, 429 handling with a Python backoff snippet), mkdocs.yml nav entry, docs/api/errors.md (rate_limited row), CHANGELOG.md Unreleased/Added entry. mkdocs build --strict passes."),
    (None, "review", "Review the documentation added for rate limiting in tally (docs/api/rate-limits.md, docs/api/errors.md, CHANGELOG.md) against the implementation in src/tally/api/ratelimit.py: are the numbers, header names and example values correct? List problems only.", None, "One problem: the example in docs/api/rate-limits.md shows RateLimit: \"pro\";r=599;t=60 on the first request, but the implementation reports t as seconds until the oldest request leaves the window, so a first request shows t=60 only by coincidence; say 'seconds until the quota resets' rather than implying a fixed window. Everything else matches the code."),
    (None, "docs", "In tally docs/api/rate-limits.md, reword the description of the t parameter of the RateLimit header: it is the number of seconds until the oldest counted request leaves the sliding window (when quota becomes available again), not a fixed window reset. Adjust the example to a mid-window value like t=23.", None, "Reworded the t parameter explanation (sliding window) and changed the example to \"pro\";r=412;t=23. One file changed."),
    (None, "qa", "In tally, is there an admin endpoint or CLI to set Account.overrides for an enterprise customer, so support can set requests_per_minute without a database query?", None, "Yes: the CLI command `tally accounts set-override ACCOUNT_ID KEY VALUE` (src/tally/cli/accounts.py:88) writes Account.overrides and logs an audit event. No HTTP admin endpoint exists."),
    (None, "docs", "In tally, add a short section to docs/internal/support-runbook.md explaining how support raises an enterprise customer's API rate limit with `tally accounts set-override ACCOUNT_ID requests_per_minute VALUE`, that it applies within a minute, and that the default for enterprise is 600/min.", None, "Added 'Raising an API rate limit' to docs/internal/support-runbook.md with the command, an example, the 600/min default and the note that changes apply to the next request (overrides are read per request, not cached)."),
    (None, "test", "In tally, run the full test suite, mypy --strict on src, ruff check and mkdocs build --strict, and report each result.", None, "pytest: 426 passed in 9.0 s. mypy: Success, no issues found in 144 source files. ruff: All checks passed. mkdocs build --strict: built in 2.1 s, no warnings."),
    (None, "review", "Give a final review of branch feat/rate-limiting in tally against main: is it ready for a pull request? Summarise remaining risks in at most five bullets.", None, "Ready for a pull request. Remaining risks:\n- Redis outage: the middleware fails closed (500). Consider failing open with a log line; product decision.\n- Lua script needs Redis >= 2.6 (production runs 7.2, fine).\n- Clients using the old X-RateLimit-* convention get nothing; the draft headers only.\n- No load test of the Lua path; expected cost is one round trip per request.\n- Enterprise override is read per request from the account row already loaded by auth: no extra query."),
]  # fmt: skip
FINAL = (
    "Rate limiting is in place on branch feat/rate-limiting (not deployed, not pushed).\n\n"
    "- Code: src/tally/api/ratelimit.py (sliding window in Redis, atomic Lua script, denied "
    "requests not counted), limits per plan in src/tally/billing/plans.py (free 60/min, pro "
    "600/min, enterprise 600/min overridable per account), middleware in src/tally/api/app.py.\n"
    "- Headers: RateLimit-Policy and RateLimit per the IETF draft; 429 with Retry-After.\n"
    "- Tests: tests/api/test_ratelimit.py; full suite 426 passed, mypy and ruff clean.\n"
    "- Docs: docs/api/rate-limits.md, errors.md, CHANGELOG.md, support runbook.\n\n"
    "Open question for you: when Redis is down the API currently fails closed (500). "
    "Should it fail open instead?"
)
CALLS = 1 + len(STEPS) + 1 + len(STEPS) + sum(1 for step in STEPS if step[3] is not None)


def _plan(done: int) -> Json:
    steps = ["Prepare workspace", "Map the code", "Implement limiter and middleware", "Test",
             "Review and fix", "Document", "Final checks"]  # fmt: skip
    return {
        "steps": [
            {"step": step, "status": "done" if i < done else "doing" if i == done else "pending"}
            for i, step in enumerate(steps)
        ]
    }


def _role(recorder: Recorder, role: str, task: str, tool: Tool | None, answer: str) -> None:
    """A role's own short conversation: (a tool round trip, then) its answer."""
    request: Json = {"model": MODEL, "max_tokens": 8192, "system": role_system(role)}
    request["tools"] = ROLE_TOOLS[role]
    messages: list[Json] = [{"role": "user", "content": task}]
    if tool is not None:
        name, arguments, result = tool
        use = {"type": "tool_use", "id": recorder.tool_id(), "name": name, "input": arguments}
        recorder.anthropic({**request, "messages": messages}, [use])
        messages = [
            *messages,
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": result}]},
        ]  # fmt: skip
    recorder.anthropic({**request, "messages": messages}, [{"type": "text", "text": answer}])


def generate(folder: Path) -> None:
    recorder = Recorder(
        seed=20251112,
        start=datetime(2025, 11, 12, 9, 30, 0, tzinfo=UTC),
        about="A multi-agent orchestrator (Claude Sonnet 4.5) delegating to eight roles.",
        spacing=(4, 30),
    )
    base = {"model": MODEL, "max_tokens": 16000, "system": ORCHESTRATOR_SYSTEM}
    base["tools"] = ORCHESTRATOR_TOOLS
    messages: list[Json] = [{"role": "user", "content": TASK}]
    plan = {"type": "tool_use", "id": recorder.tool_id(), "name": "update_plan", "input": _plan(0)}
    recorder.anthropic({**base, "messages": messages}, [plan])
    results = [{"type": "tool_result", "tool_use_id": plan["id"], "content": "Plan updated."}]
    messages = [*messages, {"role": "assistant", "content": [plan]}]
    for note, role, task, tool, answer in STEPS:
        messages = [*messages, {"role": "user", "content": results}]
        use = {"type": "tool_use", "id": recorder.tool_id(), "name": "delegate",
               "input": {"role": role, "task": task}}  # fmt: skip
        content = [{"type": "text", "text": note}, use] if note else [use]
        recorder.anthropic({**base, "messages": messages}, content)
        _role(recorder, role, task, tool, answer)
        messages = [*messages, {"role": "assistant", "content": content}]
        results = [{"type": "tool_result", "tool_use_id": use["id"], "content": answer}]
    messages = [*messages, {"role": "user", "content": results}]
    recorder.anthropic({**base, "messages": messages}, [{"type": "text", "text": FINAL}])
    recorder.write(folder / "rate_limiting_project.yaml")
