"""``costsim cassettes check``: credentials that matter are found, stand-ins are not.

Planted values are generated at run time (seeded), valid in shape and obviously fake: no
literal that looks like a key is committed. Acceptance: 50 planted credentials of the common
families, 50 found; 50 decoys (placeholders real recorders and docs leave), at most 2 flagged.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.analysis.checks import check_cassette
from costsim.analysis.secret_rules import Severity, is_placeholder
from costsim.analysis.secrets import find_secrets
from costsim.cli import cli
from costsim.io.cassette import load_cassette

ALNUM = string.ascii_letters + string.digits


def _random(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _interaction(
    *,
    uri: str = "https://api.anthropic.com/v1/messages",
    headers: dict[str, str] | None = None,
    body: Any = None,
    response_headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    request_body = body if body is not None else {"model": "claude-3-5-haiku-20241022"}
    request_body.setdefault("messages", [{"role": "user", "content": "hi"}])
    return {
        "request": {
            "body": json.dumps(request_body),
            "headers": {k: [v] for k, v in (headers or {}).items()},
            "method": "POST",
            "uri": uri,
        },
        "response": {
            "body": {
                "string": json.dumps(
                    {
                        "type": "message",
                        "model": "claude-3-5-haiku-20241022",
                        "content": [{"type": "text", "text": "hello"}],
                        "usage": {"input_tokens": 5, "output_tokens": 2},
                    }
                )
            },
            "headers": {k: [v] for k, v in (response_headers or {}).items()},
            "status": {"code": 200, "message": "OK"},
        },
    }


def _planted(rng: random.Random) -> list[tuple[str, str, dict[str, Any]]]:
    """(family, value, interaction) for 50 credentials in headers, URLs and bodies."""
    values = {
        "anthropic": lambda: f"sk-ant-api03-{_random(rng, 93, ALNUM + '-_')}AA",
        "openai-project": lambda: f"sk-proj-{_random(rng, 64, ALNUM + '-_')}",
        "openai-service": lambda: f"sk-svcacct-{_random(rng, 64, ALNUM + '-_')}",
        "aws": lambda: "AKIA" + _random(rng, 16, string.ascii_uppercase + "234567"),
        "google": lambda: "AIza" + _random(rng, 35, ALNUM + "-_"),
        "github": lambda: "ghp_" + _random(rng, 36),
        "github-pat": lambda: "github_pat_" + _random(rng, 82, ALNUM + "_"),
        "bearer": lambda: _random(rng, 40, ALNUM + "-._"),
    }
    places = [
        lambda v: _interaction(headers={"x-api-key": v}),
        lambda v: _interaction(headers={"Authorization": f"Bearer {v}"}),
        lambda v: _interaction(uri=f"https://generativelanguage.googleapis.com/v1/x?key={v}"),
        lambda v: _interaction(uri=f"https://api.example.com/v1/chat?alt=sse&api_key={v}"),
        lambda v: _interaction(body={"model": "m", "api_key": v}),
    ]
    planted = []
    families = list(values)
    for n in range(50):
        family = families[n % len(families)]
        value = values[family]()
        place = places[(n // len(families)) % len(places)]
        if family == "bearer":  # a bare token counts in an Authorization header or URL
            place = places[(n // len(families)) % 2 + 1]
        planted.append((family, value, place(value)))
    return planted


def _decoys(rng: random.Random) -> list[dict[str, Any]]:
    """50 interactions whose credential-looking values are stand-ins or not credentials."""
    b64 = _random(rng, 400, ALNUM + "+/")
    hexes = _random(rng, 64, "0123456789abcdef")
    header_values = [
        ("x-api-key", "sk-ant-api03-REDACTED"),
        ("x-api-key", "sk-ant-api03-" + "x" * 93 + "AA"),
        ("x-api-key", "sk-proj-" + "0" * 48),
        ("x-api-key", "sk-proj-" + "X" * 48),
        ("x-api-key", "your-api-key-here"),
        ("x-api-key", "DUMMY_KEY"),
        ("x-api-key", "sk-ant-api03-..."),
        ("x-api-key", "<ANTHROPIC_API_KEY>"),
        ("x-goog-api-key", "AIza" + "X" * 35),
        ("x-goog-api-key", "AIzaSyDummyKeyForTestingPurposes0000000"),
        ("Authorization", "Bearer <YOUR_API_KEY>"),
        ("Authorization", "Bearer ${OPENAI_API_KEY}"),
        ("Authorization", "Bearer {{token}}"),
        ("Authorization", "Bearer REDACTED"),
        ("Authorization", "Bearer test-token-1234"),
        ("Authorization", "Bearer sk-..."),
        ("Authorization", "Bearer " + "0" * 40),
        ("Authorization", "Basic dXNlcjpwYXNz"),
        ("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20250101/us-east-1"),
        ("Authorization", "Bearer " + "ghp_" + "x" * 36),
        ("Authorization", "Bearer github_pat_" + "X" * 60),
        ("Authorization", "Bearer hf_" + "x" * 34),
        ("request-id", "req_" + _random(rng, 24)),
        ("x-request-id", "8f14e45f-ceea-467a-9575-5a1b2c3d4e5f"),
        ("openai-organization", "org-" + _random(rng, 24)),
        ("anthropic-version", "2023-06-01"),
        ("Cookie", f"__cf_bm={_random(rng, 43)}; _cfuvid={_random(rng, 40)}"),
        ("x-api-key", "AKIA0000000000000000"),
        ("x-api-key", "sk-ant-api03-abcabcabcabcabcabcabcabcabcabcabcabcabcabcab"),
        ("x-api-key", "FILTERED"),
    ]
    decoys = [_interaction(headers={name: value}) for name, value in header_values]
    uris = [
        "?key=REDACTED",
        "?api_key=xxxxxxxxxxxxxxxx",
        "?key=<KEY>",
        "?key=value",
        "?alt=sse&key=%3CGOOGLE_API_KEY%3E",
    ]
    decoys += [_interaction(uri=f"https://generativelanguage.googleapis.com/v1/m{q}") for q in uris]
    bodies: list[dict[str, Any]] = [
        {"api_key": "********"},
        {"api_key": "sk-ant-api03-FILTERED"},
        {"password": "changeme"},
        {"aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
        {"image": f"data:image/png;base64,{b64[:100]}sk-ant-api03-{b64[100:300]}"},
        {"image": f"data:image/png;base64,{b64[:50]}AKIA{b64[50:80].upper()}"},
        {"etag": hexes, "sha": hexes},
        {"id": "chatcmpl-" + _random(rng, 29)},
        {"logprobs": [{"token": "internationalization", "logprob": -0.1}]},
        {"api_key": "None"},
        {"api_key": "null"},
        {"client_secret": "<client-secret>"},
        {"apiKey": "sk-proj-*****"},
        {"session_id": _random(rng, 32)},
        {"text": "Use AKIA keys only in examples like AKIAIOSFODNN7EXAMPLE."},
    ]
    decoys += [_interaction(body={"model": "m", **body}) for body in bodies]
    return decoys


def _write(path: Path, interactions: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}))
    return path


def _run(*args: str | Path, cwd: Path | None = None) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_fifty_planted_credentials_are_all_found(tmp_path: Path) -> None:
    planted = _planted(random.Random(1401))
    path = _write(tmp_path / "planted.yaml", [item for _, _, item in planted])

    findings = [f for f in check_cassette(path) if f.severity is not Severity.INFO]

    rules = {
        "anthropic": {"anthropic-api-key"},
        "openai-project": {"openai-api-key"},
        "openai-service": {"openai-api-key"},
        "aws": {"aws-access-key-id"},
        "google": {"google-api-key"},
        "github": {"github-token"},
        "github-pat": {"github-token"},
        "bearer": {"bearer-token", "url-credential"},
    }
    found = {(f.interaction, f.rule): f for f in findings}
    missed = [
        (i, family)
        for i, (family, _, _) in enumerate(planted)
        if not any((i, rule) in found for rule in rules[family])
    ]
    assert missed == []
    assert len(planted) == 50
    assert {family for family, _, _ in planted} == set(rules)
    for finding in findings:
        _, value, _ = planted[finding.interaction or 0]
        assert value not in finding.message  # never the whole secret
        assert value[-12:] not in finding.message
        if finding.rule != "usage-only":
            assert finding.severity is Severity.ERROR


def test_fifty_decoys_at_most_two_flagged(tmp_path: Path) -> None:
    decoys = _decoys(random.Random(1402))
    path = _write(tmp_path / "decoys.yaml", decoys)

    flagged = [
        f for f in check_cassette(path) if f.severity is not Severity.INFO and f.rule != "no-usage"
    ]

    assert len(decoys) == 50
    assert len({f.interaction for f in flagged}) <= 2, [f.line() for f in flagged]


@pytest.mark.parametrize(
    "value",
    [
        "sk-ant-api03-REDACTED",
        "<API_KEY>",
        "${OPENAI_API_KEY}",
        "your-api-key-here",
        "AKIAIOSFODNN7EXAMPLE",
        "sk-proj-" + "0" * 40,
        "xxxxxxxxxxxxxxxxxxxx",
    ],
)
def test_placeholders_by_whole_value(value: str) -> None:
    assert is_placeholder(value, prefix=value[:8] if value.startswith("sk-") else "")


def test_a_real_key_containing_xxx_or_test_is_still_a_key(tmp_path: Path) -> None:
    rng = random.Random(1403)
    key = f"sk-ant-api03-{_random(rng, 40)}XXX{_random(rng, 20)}test{_random(rng, 29)}AA"
    path = _write(tmp_path / "k.yaml", [_interaction(headers={"x-api-key": key})])

    findings = find_secrets(load_cassette(path))

    assert [f.rule for f in findings] == ["anthropic-api-key"]
    assert key not in str(findings[0])


def _cookie_cassette(tmp_path: Path) -> Path:
    rng = random.Random(1404)
    key = "sk-proj-" + _random(rng, 60)
    return _write(
        tmp_path / "c.yaml",
        [
            _interaction(headers={"Cookie": f"__cf_bm={_random(rng, 43)}"}),
            _interaction(headers={"Authorization": f"Bearer {key}"}),
        ],
    )


def test_cli_severities_ignore_and_json(tmp_path: Path) -> None:
    path = _cookie_cassette(tmp_path)

    default = _run("cassettes", "check", path)
    info = _run("cassettes", "check", "--show-info", path)
    ignored = _run("cassettes", "check", "--ignore", "openai-api-key", path)
    as_json = _run("cassettes", "check", "--format", "json", "--show-info", path)

    assert default.exit_code == 1
    assert "[error] openai-api-key" in default.stdout
    assert "bot-management-cookie" not in default.stdout
    answer = " ".join(line.strip() for line in default.stdout.splitlines()[:2])
    assert "1 informational hidden" in answer  # the answer first (wrapped to the width)
    assert "bot-management-cookie" in info.stdout
    assert ignored.exit_code == 0, ignored.output
    assert "1 ignored" in " ".join(ignored.stdout.split())  # the answer may wrap
    document = json.loads(as_json.stdout)
    assert document["kind"] == "costsim.cassettes-check"
    assert sorted(f["rule"] for f in document["findings"]) == [
        "bot-management-cookie",
        "openai-api-key",
    ]
    assert {f["severity"] for f in document["findings"]} == {"error", "info"}


def test_cli_ignore_from_pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _cookie_cassette(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.costsim]\nsecrets.ignore = ["openai-api-key"]\n'
    )
    monkeypatch.chdir(tmp_path)

    result = _run("cassettes", "check", path)

    assert result.exit_code == 0, result.output


def test_cli_unknown_rule_is_a_usage_error(tmp_path: Path) -> None:
    path = _cookie_cassette(tmp_path)

    result = _run("cassettes", "check", "--ignore", "openai-api-kye", path)

    assert result.exit_code == 2
    assert "Did you mean 'openai-api-key'" in result.stderr
    assert "Traceback" not in result.output


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_prefix_scan_misses_no_key(data: st.DataObject) -> None:
    """Texts without a key prefix skip the per-rule scans: every rule's match starts where
    the prefix scan finds one, whatever text surrounds it."""
    from costsim.analysis import secrets
    from costsim.analysis.secret_rules import KEY_RULES

    rule = data.draw(st.sampled_from(KEY_RULES))
    text = data.draw(st.from_regex(rule.pattern, fullmatch=False))
    for match in rule.pattern.finditer(text):
        assert secrets._ANY_KEY.match(text, match.start()), (rule.id, match.group(0))


def test_every_rule_is_in_the_readme_table() -> None:
    """A finding's rule a user meets in ``cassettes check`` is listed in the README's table,
    under its severity (a trial met ``unpriced`` exiting 1 with no word of it there)."""
    from costsim.analysis.checks import ALL_RULES
    from tests.conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| severity | rules |") :]
    rows = {line.split("|")[1].strip(): line for line in table.splitlines()[2:5]}
    for rule in ALL_RULES.values():
        severity = rule.severity.value
        row = next(text for name, text in rows.items() if name.startswith(severity))
        assert f"`{rule.id}`" in row, f"{rule.id} ({severity}) missing from the README table"
