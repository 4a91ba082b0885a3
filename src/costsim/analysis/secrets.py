"""Find credentials left in recordings: keys in headers, URL queries, cookies and bodies.

Recorders usually filter them (``filter_headers``, ``filter_query_parameters``); a placeholder
left in their place is not a finding (:func:`costsim.secret_rules.is_placeholder`). Every
finding names its rule (see :data:`costsim.secret_rules.RULES`) and severity, and shows only a
preview of the value, never the value itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

from costsim.analysis.secret_rules import (
    KEY_RULES,
    RULES,
    Severity,
    is_placeholder,
    looks_random,
    preview,
)
from costsim.io.cassette import Cassette, Interaction
from costsim.model.quoting import quoted

__all__ = ["SecretFinding", "find_secrets"]

_API_KEY_HEADERS = (
    "x-api-key", "api-key", "x-goog-api-key", "openai-api-key", "anthropic-api-key",
    "x-functions-key", "ocp-apim-subscription-key", "x-auth-token", "private-token",
)  # fmt: skip
_AUTH_HEADERS = ("authorization", "proxy-authorization")
_QUERY_NAMES = re.compile(
    r"(?i)(?:api[-_]?key|key|access[-_]?token|auth[-_]?token|token|secret|client[-_]?secret|"
    r"password|sig|signature|x-amz-signature|x-amz-security-token|x-goog-signature|code)"
)
_JSON_FIELDS = re.compile(
    r'"(api[_-]?key|apiKey|access[_-]?token|accessToken|refresh[_-]?token|refreshToken|'
    r"auth[_-]?token|authToken|client[_-]?secret|clientSecret|secret[_-]?key|secretKey|"
    r'password|private[_-]?key|privateKey|x-api-key)"\s*:\s*"([^"\\]{8,512})"'
)
_AWS_SECRET = re.compile(
    r"(?i)(?:aws_?secret_?access_?key|secret_?access_?key)[\"']?\s*[:=]\s*[\"']?"
    r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
)
_ANY_KEY = re.compile(
    r"(?<![A-Za-z0-9_+/-])(?:sk-|AIza|AKIA|ASIA|ABIA|ACCA|ya29\.|gh[pousr]_|github_pat_|hf_|"
    r"gsk_|xai-|xox[abprs]-)"
)
"""Where any key of :data:`KEY_RULES` could start: one of their prefixes, at a word's edge."""
_AWS_SECRET_NAME = re.compile(r"(?i)secret_?access_?key")
"""What every match of ``_AWS_SECRET`` contains."""
_BOT_COOKIES = re.compile(
    r"__cf_bm|_cfuvid|cf_clearance|__cflb|__cfruid|__cfseq.*|_abck|ak_bmsc|bm_s[vz]|bm_mi|"
    r"datadome|incap_ses_.*|visid_incap_.*|nlbi_.*|AWSALB.*|AWSELB.*|_dd_s"
)
_SESSION_COOKIES = re.compile(r"(?i).*(?:session|sess|auth|token|jwt|sid|login).*")


@dataclass(frozen=True, slots=True)
class SecretFinding:
    index: int
    where: str
    kind: str
    preview: str
    rule: str = ""
    severity: Severity = Severity.ERROR

    def __str__(self) -> str:
        return f"interaction {self.index}: {self.kind} in {self.where} ({self.preview})"


def _finding(index: int, rule_id: str, where: str, value: str) -> SecretFinding:
    rule = RULES[rule_id]
    return SecretFinding(index, where, rule.title, preview(value), rule.id, rule.severity)


def _keys_in(index: int, where: str, text: str) -> Iterator[SecretFinding]:
    # every key format starts with a fixed prefix, and an AWS secret follows its name: one
    # scan for any of them spares a scan per rule of every text that has none (most of them)
    if _ANY_KEY.search(text):
        for rule in KEY_RULES:
            for match in rule.pattern.finditer(text):
                if not is_placeholder(match.group(0), prefix=_prefix(match.group(0))):
                    yield _finding(index, rule.id, where, match.group(0))
    if _AWS_SECRET_NAME.search(text):
        for match in _AWS_SECRET.finditer(text):
            if not is_placeholder(match.group(1)) and looks_random(match.group(1)):
                yield _finding(index, "aws-secret-access-key", where, match.group(1))


_KEY_PREFIX = re.compile(
    r"sk-ant-[a-z]+\d\d-|sk-[A-Za-z]+-|sk-|AIza|AKIA|ASIA|ABIA|ACCA|ya29\.|gh[pousr]_|"
    r"github_pat_|hf_|gsk_|xai-|xox[abprs]-"
)


def _prefix(key: str) -> str:
    """The fixed part of a key format (``sk-ant-api03-``, ``ghp_``): what is not random."""
    match = _KEY_PREFIX.match(key)
    return match.group(0) if match else ""


def _known_key(text: str) -> bool:
    return any(rule.pattern.search(text) for rule in KEY_RULES)


def _header_findings(interaction: Interaction) -> Iterator[SecretFinding]:
    index = interaction.index
    for name, value in interaction.request_headers.items():
        where = f"request header {quoted(name)}"
        yield from _keys_in(index, where, value)
        if _known_key(value):
            continue
        if name in _AUTH_HEADERS:
            yield from _authorization(index, where, value)
        elif name in _API_KEY_HEADERS:
            if not is_placeholder(value) and looks_random(value):
                yield _finding(index, "credential-header", where, value)
        elif name == "x-amz-security-token" and not is_placeholder(value) and len(value) >= 16:
            yield _finding(index, "aws-session-token", where, value)
        elif name == "cookie":
            yield from _cookies(index, where, value.split(";"))
    set_cookie = interaction.response_headers.get("set-cookie")
    if set_cookie:
        yield from _cookies(index, "response header 'set-cookie'", [set_cookie.split(";")[0]])


def _authorization(index: int, where: str, value: str) -> Iterator[SecretFinding]:
    scheme, _, credential = value.strip().partition(" ")
    if scheme.upper().startswith("AWS4-HMAC"):
        return  # a request signature: the key id in it is found by its pattern
    if not credential:
        scheme, credential = "", scheme
    if is_placeholder(credential) or not looks_random(credential.strip()):
        return
    rule = "bearer-token" if scheme.lower() in ("bearer", "token", "") else "credential-header"
    yield _finding(index, rule, where, credential.strip())


def _cookies(index: int, where: str, pairs: list[str]) -> Iterator[SecretFinding]:
    for pair in pairs:
        name, _, value = pair.strip().partition("=")
        if not value or is_placeholder(value):
            continue
        if _BOT_COOKIES.fullmatch(name):
            yield _finding(index, "bot-management-cookie", f"{where} ({name})", value)
        elif _SESSION_COOKIES.fullmatch(name) and len(value) >= 16:
            yield _finding(index, "session-cookie", f"{where} ({name})", value)


def _query_findings(interaction: Interaction) -> Iterator[SecretFinding]:
    try:
        query = urlsplit(interaction.uri).query
    except ValueError:
        return
    for name, value in parse_qsl(query, keep_blank_values=False):
        if _known_key(value) or not _QUERY_NAMES.fullmatch(name):
            continue
        if not is_placeholder(value) and looks_random(value):
            yield _finding(interaction.index, "url-credential", f"request URI ({name}=)", value)


def _body_findings(interaction: Interaction) -> Iterator[SecretFinding]:
    for where, body in (
        ("request body", interaction.request_body),
        ("response body", interaction.response_body),
    ):
        text = body.text()
        if not text:
            continue
        yield from _keys_in(interaction.index, where, text)
        for match in _JSON_FIELDS.finditer(text):
            value = match.group(2)
            if _known_key(value) or is_placeholder(value) or not looks_random(value):
                continue
            yield _finding(
                interaction.index, "json-credential", f"{where} ({match.group(1)})", value
            )


def find_secrets(cassette: Cassette) -> list[SecretFinding]:
    """Every credential-looking value in a cassette, with the interaction it is in."""
    findings: list[SecretFinding] = []
    seen: set[tuple[int, str, str, str]] = set()
    for interaction in cassette.interactions:
        for finding in (
            *_header_findings(interaction),
            *_keys_in(interaction.index, "request URI", interaction.uri),
            *_query_findings(interaction),
            *_body_findings(interaction),
        ):
            key = (finding.index, finding.rule, finding.where, finding.preview)
            if key not in seen:
                seen.add(key)
                findings.append(finding)
    return findings
