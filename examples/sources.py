"""Plausible source files and tool outputs for the coding agent (seeded, not real code).

The text only has to look like what a coding agent reads: Python modules with classes,
methods, docstrings and the usual statements, grep hits, pytest runs. Lines vary enough that
a truncated middle holds distinct lines (so quoting one can be detected).
"""

from __future__ import annotations

import random

__all__ = ["grep_hits", "module_source", "pytest_run", "repository_paths"]

VERBS = [
    "load",
    "parse",
    "dispatch",
    "build",
    "render",
    "validate",
    "resolve",
    "schedule",
    "encode",
    "decode",
    "fetch",
    "send",
    "flush",
    "record",
    "compute",
    "normalise",
    "apply",
    "sign",
    "enqueue",
    "refresh",
    "merge",
    "reconcile",
    "export",
    "charge",
    "refund",
    "void",
]
NOUNS = [
    "webhook",
    "event",
    "payload",
    "invoice",
    "customer",
    "ledger",
    "batch",
    "attempt",
    "signature",
    "endpoint",
    "header",
    "request",
    "response",
    "token",
    "config",
    "queue",
    "subscription",
    "line_item",
    "currency",
    "tax_rate",
    "discount",
    "period",
    "receipt",
    "account",
    "delivery",
    "job",
    "cursor",
    "page",
    "plan",
    "coupon",
]
CLASSES = [
    "InvoiceRenderer",
    "LedgerEntry",
    "TaxCalculator",
    "SubscriptionPlan",
    "PaymentIntent",
    "DeliveryLog",
    "EventEnvelope",
    "CustomerRecord",
    "RefundRequest",
    "BillingPeriod",
    "CurrencyAmount",
    "WebhookEndpoint",
    "QueueConsumer",
    "ReceiptMailer",
    "CouponPolicy",
]
SUFFIXES = ["", "s", "_service"]
PACKAGES = ["api", "workers", "webhooks", "billing", "ledger", "http", "storage", "tax", "mail"]
IMPORTS = [
    "import logging",
    "import json",
    "import hashlib",
    "import hmac",
    "import asyncio",
    "from collections.abc import Iterable, Mapping, Sequence",
    "from dataclasses import dataclass, field",
    "from datetime import datetime, timedelta",
    "from decimal import Decimal, ROUND_HALF_EVEN",
    "from typing import Any, Protocol",
    "from tally.clock import utcnow",
    "from tally.errors import TallyError, NotFound, ValidationError",
    "from tally.http.client import HttpClient, HttpResponse",
    "from tally.storage import Session",
    "from tally.settings import Settings",
    "from tally.money import Money",
]


def _name(rng: random.Random) -> str:
    return f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}"


def _statement(rng: random.Random, indent: str) -> list[str]:
    """One statement (a few lines) of a method body."""
    noun, other = rng.choice(NOUNS), rng.choice(NOUNS)
    verb = rng.choice(VERBS)
    cls = rng.choice(CLASSES)
    templates = [
        [f"{noun} = self._{other}s.get({noun}_id)"],
        [f"if {noun} is None:", f'    raise NotFound(f"{noun} {{{noun}_id}} does not exist")'],
        [f"for {noun} in {other}s:", f"    self._{verb}_{noun}({noun}, {other}=self.{other})"],
        [f'logger.debug("{verb} {noun} %s for {other} %s", {noun}.id, {other}.id)'],
        [f"return {cls}({noun}={noun}, {other}=self.{other}, created_at=utcnow())"],
        [
            "try:",
            f'    result = self._client.post(f"/v1/{noun}s/{{{noun}.id}}", json=body)',
            "except TimeoutError as exc:",
            f'    logger.warning("{verb} {noun} timed out: %s", exc)',
            "    raise",
        ],
        [f"total = sum((item.amount for item in {noun}.line_items), start=Decimal(0))"],
        [f'{noun}s = [{other} for {other} in {other}s if {other}.status == "{verb}ed"]'],
        [f"self._{noun}_cache[{noun}.id] = {noun}"],
        [f"if not self.settings.{noun}_enabled:", "    return None"],
        [f"elapsed = (utcnow() - {noun}.created_at).total_seconds()"],
        ["with self._session.begin() as tx:", f"    tx.add({noun})", "    tx.flush()"],
        [f'payload = json.dumps({noun}.as_dict(), sort_keys=True, separators=(",", ":"))'],
        [f'assert {noun}.currency == {other}.currency, "mixed currencies"'],
    ]
    return [indent + line for line in rng.choice(templates)]


def _method(rng: random.Random, indent: str) -> list[str]:
    name = _name(rng)
    arg = rng.choice(NOUNS)
    lines = [
        f"{indent}def {name}(self, {arg}: {rng.choice(CLASSES)}) -> {rng.choice(CLASSES)} | None:",
        f'{indent}    """{name.replace("_", " ").capitalize()} for one {arg}."""',
    ]
    for _ in range(rng.randint(2, 6)):
        lines += _statement(rng, indent + "    ")
    return [*lines, ""]


def module_source(rng: random.Random, path: str, lines: int, anchors: dict[int, str]) -> str:
    """About ``lines`` lines of a Python module; ``anchors`` (line index -> text) are placed
    verbatim at (or just after) those positions."""
    module = path.rsplit("/", 1)[-1].removesuffix(".py")
    out = [
        f'"""{module.replace("_", " ").capitalize()}: part of tally."""',
        "",
        "from __future__ import annotations",
        "",
    ]
    out += [*sorted(rng.sample(IMPORTS, 7)), "", "logger = logging.getLogger(__name__)", ""]
    pending = sorted(anchors.items())
    while len(out) < lines:
        cls = rng.choice(CLASSES)
        out += ["", f"class {cls}:", f'    """{cls} as stored and sent by tally."""', ""]
        out += [
            "    def __init__(self, client: HttpClient, settings: Settings) -> None:",
            "        self._client = client",
            "        self.settings = settings",
            "",
        ]
        for _ in range(rng.randint(3, 7)):
            out += _method(rng, "    ")
            while pending and pending[0][0] <= len(out):
                out.append(pending.pop(0)[1])
    out += [text for _, text in pending]
    return "\n".join(out) + "\n"


def repository_paths(rng: random.Random, count: int) -> list[str]:
    paths = {
        f"src/tally/{rng.choice(PACKAGES)}/{rng.choice(NOUNS)}{rng.choice(SUFFIXES)}.py"
        for _ in range(count * 2)
    }
    return sorted(paths)[:count]


def grep_hits(rng: random.Random, word: str, paths: list[str], hits: int) -> str:
    """ripgrep-style ``path:line:text`` hits for ``word``."""
    out = []
    per_file = max(1, hits // len(paths))
    for path in paths:
        number = rng.randint(5, 40)
        for _ in range(rng.randint(1, per_file * 2)):
            number += rng.randint(3, 60)
            line = rng.choice(_statement(rng, " " * 4 * rng.randint(1, 3)))
            pos = rng.randint(0, max(0, len(line.rstrip()) - 1))
            while pos < len(line) and line[pos].isalnum():
                pos += 1
            text = f"{line[:pos]}{word if pos == len(line) else '_' + word}{line[pos:]}"
            out.append(f"{path}:{number}:{text}")
            if len(out) >= hits:
                return "\n".join(out)
    return "\n".join(out)


def pytest_run(
    rng: random.Random, target: str, passed: int, failures: list[tuple[str, list[str]]]
) -> str:
    """Verbose pytest output: every test's line, then the failures' tracebacks, then a summary."""
    tests = [f"{target}::test_{_name(rng)}" for _ in range(passed)]
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.7, pytest-8.4.2, pluggy-1.6.0 -- "
        "/home/dev/tally/.venv/bin/python",
        "rootdir: /home/dev/tally",
        "configfile: pyproject.toml",
        "plugins: anyio-4.11.0, cov-7.0.0",
        f"collected {passed + len(failures)} items",
        "",
    ]
    names = [name for name, _ in failures]
    ordered = tests + [f"{target}::{name}" for name in names]
    rng.shuffle(ordered)
    for index, test in enumerate(ordered, 1):
        verdict = "FAILED" if test.split("::")[-1] in names else "PASSED"
        lines.append(f"{test} {verdict}{'':>8}[{100 * index // len(ordered):3d}%]")
    if failures:
        lines += [
            "",
            "=================================== FAILURES ===================================",
        ]
    for name, assertion in failures:
        lines += [f"_____________________________ {name} _____________________________", ""]
        lines += ["    " + line for line in _method(rng, "")[:8]]
        lines += [*assertion, "", f"{target}:{rng.randint(40, 400)}: AssertionError"]
        lines += ["----------------------------- Captured log call ------------------------------"]
        lines += [
            f"DEBUG    tally.webhooks:dispatcher.py:{rng.randint(50, 600)} {_name(rng)} attempt {i}"
            for i in range(1, 6)
        ]
    summary = f"{len(failures)} failed, {passed} passed" if failures else f"{passed} passed"
    lines += [
        "",
        f"{'=' * 25} {summary} in {rng.uniform(0.8, 9.0):.2f}s {'=' * 25}",
    ]
    return "\n".join(lines)
