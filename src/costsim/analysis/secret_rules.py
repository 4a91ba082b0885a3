"""What a credential looks like, and what only looks like one (a placeholder).

Each rule is one entry in :data:`RULES`: an id (used by ``--ignore``), a severity and, for key
formats, a pattern. Patterns are anchored on both sides so a base64 blob or an id that merely
contains ``sk-`` or ``AKIA`` is not a key; ``=`` before a key is an edge (``?key=AIza...``).

A value is a placeholder only by the *whole* value: a template (``<API_KEY>``, ``${KEY}``),
a redaction marker as a whole segment (``sk-ant-REDACTED``), placeholder words and nothing
else (``your-api-key-here``), a documented dummy value (AWS's ``...EXAMPLE`` keys), or too
little variety to be random (``sk-proj-0000...``). A real key that happens to contain ``XXX``
or ``test`` is still a key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "KEY_RULES",
    "RULES",
    "KeyRule",
    "Rule",
    "Severity",
    "is_placeholder",
    "looks_random",
    "preview",
]


class Severity(StrEnum):
    ERROR = "error"
    """A live provider credential: rotate it and re-record."""
    WARNING = "warning"
    """Probably sensitive, or a recording problem worth fixing."""
    INFO = "info"
    """Harmless by itself (bot-management cookies); hidden unless asked for."""


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: Severity
    title: str


@dataclass(frozen=True, slots=True)
class KeyRule(Rule):
    """A credential format recognised wherever it appears."""

    pattern: re.Pattern[str] = re.compile("(?!)")


_EDGE = r"(?<![A-Za-z0-9_+/-])"
_END = r"(?![A-Za-z0-9_-])"


def _key(rule_id: str, title: str, *patterns: str) -> KeyRule:
    body = "|".join(f"{_EDGE}(?:{p}){_END}" for p in patterns)
    return KeyRule(rule_id, Severity.ERROR, title, re.compile(body))


KEY_RULES: tuple[KeyRule, ...] = (
    _key(
        "anthropic-api-key",
        "Anthropic API key",
        r"sk-ant-(?:api|admin|sid)\d\d-[A-Za-z0-9_-]{32,}",
    ),
    _key(
        "openai-api-key",
        "OpenAI API key",
        r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{32,}",
        r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
        r"sk-[A-Za-z0-9]{48}",
    ),
    _key("aws-access-key-id", "AWS access key id", r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"),
    _key("google-api-key", "Google API key", r"AIza[0-9A-Za-z_-]{35}"),
    _key("google-oauth-token", "Google OAuth access token", r"ya29\.[0-9A-Za-z_-]{30,}"),
    _key(
        "github-token",
        "GitHub token",
        r"gh[pousr]_[A-Za-z0-9]{36,}",
        r"github_pat_[A-Za-z0-9_]{50,}",
    ),
    _key("huggingface-token", "Hugging Face token", r"hf_[A-Za-z0-9]{30,}"),
    _key("groq-api-key", "Groq API key", r"gsk_[A-Za-z0-9]{48,}"),
    _key("xai-api-key", "xAI API key", r"xai-[A-Za-z0-9]{60,}"),
    _key("slack-token", "Slack token", r"xox[abprs]-[A-Za-z0-9-]{20,}"),
)  # fmt: skip

OTHER_RULES: tuple[Rule, ...] = (
    Rule("aws-secret-access-key", Severity.ERROR, "AWS secret access key"),
    Rule("aws-session-token", Severity.ERROR, "AWS session token"),
    Rule("bearer-token", Severity.ERROR, "bearer token"),
    Rule("credential-header", Severity.ERROR, "credential in an API key header"),
    Rule("url-credential", Severity.ERROR, "credential in a URL query"),
    Rule("json-credential", Severity.WARNING, "credential in a JSON field"),
    Rule("session-cookie", Severity.WARNING, "session cookie"),
    Rule("bot-management-cookie", Severity.INFO, "bot-management / load-balancer cookie"),
)

RULES: dict[str, Rule] = {rule.id: rule for rule in (*KEY_RULES, *OTHER_RULES)}

# --- placeholders ------------------------------------------------------------------------------

_DOCUMENTED_DUMMIES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",
        "AKIAI44QH8DHBEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        "ASIAIOSFODNN7EXAMPLE",
    }
)
_TEMPLATE = re.compile(
    r"<[^<>]*>|\{\{.*\}\}|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|%\([^)]*\)s|%s|\.\.\.|…"
)
_MARKER = re.compile(
    r"(?i)(?:^|[^a-z])(redacted|filtered|masked|removed|hidden|placeholder|dummy|sanitized|"
    r"scrubbed|censored|obfuscated|omitted)(?:$|[^a-z])"
)
_WORDS = frozenset(
    (
        "redacted", "filtered", "masked", "removed", "hidden", "placeholder", "dummy", "fake",
        "test", "testing", "tests", "example", "examples", "sample", "mock", "your", "my", "the",
        "a", "key", "keys", "api", "apikey", "token", "tokens", "secret", "here", "changeme",
        "change", "me", "none", "null", "nil", "undefined", "replace", "insert", "foo", "bar",
        "baz", "abc", "abcd", "abcdef", "xyz", "todo", "invalid", "not", "set", "real", "value",
        "bearer", "basic", "auth", "authorization", "access", "password", "pass", "sk", "ant",
        "proj", "svcacct", "admin", "api01", "api02", "api03", "admin01", "goes", "id", "sess",
        "session", "cookie", "demo", "default", "openai", "anthropic", "google", "aws", "github",
        "for", "purposes", "purpose", "only", "do", "use", "fixture", "local", "dev", "sy", "pat",
        "gh", "ghp", "env", "var",
    )
)  # fmt: skip
_PIECES = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_FILLER = re.compile(r"(?i)x+|\*+|0+|1+|9+|\.+|#+|-+|_+|\d{1,6}")


def _longest_run(value: str) -> int:
    best = run = 0
    previous = ""
    for char in value:
        run = run + 1 if char == previous else 1
        previous = char
        best = max(best, run)
    return best


def is_placeholder(value: str, *, prefix: str = "") -> bool:
    """Whether ``value`` (after a known ``prefix``) is a stand-in, judged by the whole value."""
    value = value.strip().strip("'\"")
    if (
        not value
        or value in _DOCUMENTED_DUMMIES
        or value.upper().endswith(("EXAMPLE", "EXAMPLEKEY"))
    ):
        return True
    if _TEMPLATE.fullmatch(value) or _MARKER.search(value):
        return True
    body = value[len(prefix) :] if prefix and value.startswith(prefix) else value
    words = [w for w in re.split(r"[-_.\s:/=+]+", body.lower()) if w]
    if all(w in _WORDS or _FILLER.fullmatch(w) for w in words):
        return True
    pieces = _PIECES.findall(body)  # camelCase: "SyDummyKeyForTesting"
    if pieces and all(p.lower() in _WORDS or _FILLER.fullmatch(p) for p in pieces):
        return True
    core = re.sub(r"[-_.]", "", body)
    return len(set(core)) <= 4 or _longest_run(core) * 2 >= len(core)


def looks_random(value: str) -> bool:
    """Enough variety for a generated secret (a word or a sentence is not one)."""
    if len(value) < 16 or any(char.isspace() for char in value):
        return False
    kinds = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
        )
    )
    return len(set(value)) >= 10 and kinds >= 2


def preview(value: str) -> str:
    """A recognisable but harmless part of a secret: never more than a quarter of it."""
    if len(value) < 16:
        return value[:2] + "…"
    head, tail = min(8, len(value) // 8), min(4, len(value) // 8)
    return f"{value[:head]}…{value[-tail:]} ({len(value)} chars)"
