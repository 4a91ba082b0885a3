"""Find credentials left in recordings: API keys in headers, URLs and bodies.

Recorders usually filter them (``filter_headers``); a placeholder such as ``REDACTED`` or
``AUTHORIZATION-XXX`` is not a finding. Key patterns are anchored so that a base64 blob that
happens to contain ``sk-`` is not mistaken for a key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from costsim.io.cassette import Cassette, Interaction

__all__ = ["SecretFinding", "find_secrets"]

_CREDENTIAL_HEADERS = (
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
    "openai-api-key",
    "anthropic-api-key",
    "cookie",
)

_EDGE = r"(?<![A-Za-z0-9_+/=-])"
_END = r"(?![A-Za-z0-9_-])"
KEY_PATTERNS: dict[str, re.Pattern[str]] = {
    "Anthropic API key": re.compile(_EDGE + r"sk-ant-[a-z]+\d\d-[A-Za-z0-9_-]{80,120}" + _END),
    "OpenAI API key": re.compile(
        _EDGE + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,200}" + _END
        + r"|" + _EDGE + r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}" + _END
    ),
    "Google API key": re.compile(_EDGE + r"AIza[0-9A-Za-z_-]{35}" + _END),
    "Groq API key": re.compile(_EDGE + r"gsk_[A-Za-z0-9]{48,}" + _END),
    "xAI API key": re.compile(_EDGE + r"xai-[A-Za-z0-9]{60,}" + _END),
}  # fmt: skip

_PLACEHOLDER = re.compile(
    r"redact|x{3,}|\*{3,}|fake|dummy|test|placeholder|mock|your|filtered|hidden|removed|"
    r"example|<[^>]*>|\{\{|\$\{|none|null|secret",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class SecretFinding:
    index: int
    where: str
    kind: str
    preview: str

    def __str__(self) -> str:
        return f"interaction {self.index}: {self.kind} in {self.where} ({self.preview})"


def _preview(value: str) -> str:
    return value[:6] + "…" + value[-4:] if len(value) > 14 else value[:3] + "…"


def _header_findings(interaction: Interaction) -> Iterator[SecretFinding]:
    for name in _CREDENTIAL_HEADERS:
        value = interaction.request_headers.get(name)
        if not value:
            continue
        credential = re.sub(r"^(Bearer|Basic|Token)\s+", "", value.strip(), flags=re.IGNORECASE)
        if len(credential) < 16 or _PLACEHOLDER.search(credential):
            continue
        yield SecretFinding(
            interaction.index, f"request header {name!r}", "credential", _preview(credential)
        )


def _text_findings(interaction: Interaction) -> Iterator[SecretFinding]:
    places = {
        "request URI": interaction.uri,
        "request body": interaction.request_body.text(),
        "response body": interaction.response_body.text(),
    }
    for where, text in places.items():
        if not text:
            continue
        for kind, pattern in KEY_PATTERNS.items():
            for match in pattern.finditer(text):
                yield SecretFinding(interaction.index, where, kind, _preview(match.group(0)))


def find_secrets(cassette: Cassette) -> list[SecretFinding]:
    """Every credential-looking value in a cassette, with the interaction it is in."""
    findings: list[SecretFinding] = []
    for interaction in cassette.interactions:
        findings.extend(_header_findings(interaction))
        findings.extend(_text_findings(interaction))
    return findings
