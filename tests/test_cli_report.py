"""The report and cassettes commands through click's CliRunner, on the example cassettes."""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from costsim.cli import cli
from tests.conftest import EXAMPLES, ROOT, said
from tests.test_hostile_input import interaction, write_yaml

pytestmark = pytest.mark.usefixtures("columns_100")


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _schema() -> dict[str, object]:
    text = resources.files("costsim").joinpath("schemas/report.schema.json").read_text()
    schema: dict[str, object] = json.loads(text)
    return schema


def test_report_table_lists_cassettes_and_total() -> None:
    code, out, _ = _run("report", str(EXAMPLES))
    assert code == 0
    assert "anthropic_support_agent.yaml" in out and "TOTAL" in out
    assert "1 errored call: unbilled" in out
    assert out.startswith("6 LLM calls in 3 cassettes: $")  # the answer first


@pytest.mark.parametrize("by", ["cassette", "model", "provider", "flavour"])
def test_report_json_matches_schema(by: str) -> None:
    code, out, _ = _run("report", str(EXAMPLES), "--format", "json", "--by", by)
    assert code == 0
    document = json.loads(out)
    jsonschema.validate(document, _schema())
    assert document["by"] == by


def test_report_json_totals_by_hand() -> None:
    _, out, _ = _run("report", str(EXAMPLES), "--format", "json")
    totals = json.loads(out)["totals"]
    # anthropic: (412+1630) + (521+1630); chat: 31; responses: 1210 + 1236
    assert totals["prompt_tokens"] == 2042 + 2151 + 31 + 1210 + 1236
    assert totals["cache_read_tokens"] == 1630 + 1024
    assert totals["cache_write_tokens"] == 1630
    assert totals["output_tokens"] == 58 + 31 + 9 + 342 + 120
    assert totals["reasoning_tokens"] == 320 + 112
    assert (
        totals["llm_calls"] == 6
        and totals["calls_with_usage"] == 5
        and totals["errored_calls"] == 1
    )
    assert totals["cost_usd"] == totals["priced_cost_usd"]


def test_report_json_is_deterministic() -> None:
    first = _run("report", str(EXAMPLES), "--format", "json")[1]
    assert _run("report", str(EXAMPLES), "--format", "json")[1] == first


def test_report_markdown() -> None:
    code, out, _ = _run("report", str(EXAMPLES), "--format", "markdown", "--by", "model")
    assert code == 0
    assert out.startswith("## costsim report")
    assert "| **TOTAL** |" in out.replace("  ", " ") or "**TOTAL**" in out


def test_report_output_file_written(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.json"
    code, out, _ = _run("report", str(EXAMPLES), "--format", "json", "-o", str(target))
    assert code == 0 and out == ""
    assert json.loads(target.read_text())["format_version"] == 1


def test_report_as_of_is_stated() -> None:
    _, out, _ = _run("report", str(EXAMPLES), "--as-of", "2025-12-01")
    assert "Prices as of 2025-12-01" in out
    code, _, err = _run("report", str(EXAMPLES), "--as-of", "yesterday")
    assert code == 2 and "not a date" in err


def test_unknown_model_listed_as_unpriced(tmp_path: Path) -> None:
    text = (
        (EXAMPLES / "openai_chat_streaming.yaml")
        .read_text()
        .replace("gpt-4o-mini", "gpt-imaginary")
    )
    (tmp_path / "c.yaml").write_text(text)
    code, out, _ = _run("report", str(tmp_path), "--format", "json")
    document = json.loads(out)
    assert code == 0
    assert document["totals"]["cost_usd"] is None and document["totals"]["unpriced_calls"] == 1
    assert document["unpriced"][0]["model"] == "gpt-imaginary-2024-07-18"
    _, table, _ = _run("report", str(tmp_path))
    row = next(line for line in table.splitlines() if line.startswith("TOTAL"))
    assert row.endswith("unpriced*") and "$0.000000" not in row
    assert table.startswith("1 LLM call in 1 cassette: cost unknown (1 call unpriced).")
    assert "genai-prices has no price for openai model 'gpt-imaginary-2024-07-18'" in table


def test_missing_path_exits_2() -> None:
    code, _, err = _run("report", "no/such/dir")
    assert code == 2 and "no such file" in err


def test_cassettes_list_sorted_by_calls() -> None:
    code, out, _ = _run("cassettes", "list", str(EXAMPLES), "--sort", "calls")
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == "3 cassettes, 6 LLM calls."
    assert "anthropic_support_agent.yaml" in lines[4]
    assert "2025-11-03" in lines[4] and "claude-sonnet-4-5" in lines[4]


def test_cassettes_list_names_models_as_their_costs_do(monkeypatch: pytest.MonkeyPatch) -> None:
    """At 100 columns a trial's list cut every model to 16 characters (``claude-sonnet-4…``,
    which reads as Sonnet 4): a date stamp genai-prices prices the same is left off instead,
    so two snapshots of one model are one name; JSON keeps every name whole."""
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = _run("cassettes", "list", str(EXAMPLES))
    assert code == 0
    models = [line.split()[-1] for line in out.splitlines()[4:7]]
    # claude-sonnet-4-5 and its -20250929 snapshot: one name
    assert models == ["claude-sonnet-4-5", "gpt-4o-mini", "gpt-5-mini"]
    _, document, _ = _run("cassettes", "list", str(EXAMPLES), "--format", "json")
    named = [item["models"] for item in json.loads(document)["cassettes"]]
    assert ["claude-sonnet-4-5", "claude-sonnet-4-5-20250929"] in named


def test_cassettes_check_clean_examples() -> None:
    code, out, _ = _run("cassettes", "check", str(EXAMPLES))
    assert code == 0 and "nothing found" in out


def test_cassettes_check_finds_secrets_and_missing_usage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # paths are printed relative to the working folder
    source = yaml.safe_load((EXAMPLES / "anthropic_support_agent.yaml").read_text())
    key = "sk-ant-api03-" + "A1b2C3d4E5" * 9 + "xyzAA"
    source["interactions"][0]["request"]["headers"]["x-api-key"] = [key]
    source["interactions"][1]["request"]["body"] = source["interactions"][1]["request"][
        "body"
    ].replace("Rebuild", f"Rebuild (token sk-proj-{'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2' * 2})")
    (tmp_path / "leaky.yaml").write_text(yaml.safe_dump(source))
    chat = (
        (EXAMPLES / "openai_chat_streaming.yaml")
        .read_text()
        .replace('\\"usage\\":{\\"prompt_tokens\\":31', '\\"nousage\\":{\\"prompt_tokens\\":31')
    )
    (tmp_path / "nousage.yaml").write_text(chat)
    (tmp_path / "empty.yaml").write_text("interactions: []\nversion: 1\n")
    code, out, _ = _run("cassettes", "check", ".")
    assert code == 1
    assert (  # too long for one line of 100: the message goes under its place
        "leaky.yaml: interaction 0: [error] anthropic-api-key:\n"
        "    Anthropic API key in request header 'x-api-key'"
    ) in out
    assert "[error] openai-api-key:\n    OpenAI API key in request body" in out
    # it asked for its usage chunk (include_usage), which is not there: no recording hint
    assert "nousage.yaml: interaction 0: [warning] no-usage: openai-chat call without usage" in out
    assert "empty.yaml: [warning] no-llm-calls: no LLM calls" in out
    assert key not in out  # never print the secret itself
    assert out.startswith("4 findings in 3 of 3 cassettes checked")  # the answer first


def test_a_cassette_cut_between_interactions_is_flagged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trial cut a 7-call cassette after its third interaction, at a line's end: it still
    parses, and ``report`` billed 3 calls as the whole while ``check`` found nothing. Only
    the missing closing ``version`` key tells (some files are whole without it: a hint)."""
    monkeypatch.chdir(tmp_path)
    text = (EXAMPLES / "anthropic_support_agent.yaml").read_text()
    assert text.rstrip().endswith("version: 1")
    (tmp_path / "cut.yaml").write_text(text.rstrip().removesuffix("version: 1"))
    code, out, _ = _run("cassettes", "check", "cut.yaml")
    assert code == 0 and "nothing found" in out  # a hint: 6 of the corpus's files are whole
    code, out, _ = _run("cassettes", "check", "cut.yaml", "--show-info")
    assert "cut.yaml: [info] no-version:" in out
    assert "a file cut short between two interactions reads as whole" in " ".join(out.split())
    code, out, _ = _run("cassettes", "check", str(EXAMPLES))
    assert code == 0 and "no-version" not in out


def test_a_cassette_without_version_among_ones_with_it_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trial's suite: five calls recorded by pytest-recording, the file cut after the
    second interaction at a line's end; its folder's other cassettes all end with ``version:
    1``, which this one's recorder wrote too, so it is most likely cut: a warning (exit 1),
    not a hint hidden behind --show-info."""
    monkeypatch.chdir(tmp_path)
    text = (EXAMPLES / "anthropic_support_agent.yaml").read_text()
    (tmp_path / "whole.yaml").write_text(text)
    (tmp_path / "cut.yaml").write_text(text.rstrip().removesuffix("version: 1"))
    code, out, _ = _run("cassettes", "check", ".", "--format", "json")
    assert code == 1, out
    (finding,) = json.loads(out)["findings"]
    assert (finding["rule"], finding["severity"]) == ("cut-short", "warning")
    assert "where the other cassette of its folder ends with one" in finding["message"]
    # alone in its folder it stays the hint it was
    (tmp_path / "whole.yaml").unlink()
    code, out, _ = _run("cassettes", "check", ".")
    assert code == 0 and "nothing found" in out


@pytest.mark.parametrize("cache", [(), ("--no-cache",)], ids=["cache", "no-cache"])
def test_every_command_that_totals_a_cut_cassette_warns_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: tuple[str, ...]
) -> None:
    """The review: ``cut-short`` was only in ``cassettes check``; ``report``, ``compare``
    and ``simulate`` printed a cut file's totals without a word. Each warns of it, run after
    run (a cached or recalled run too), and the totals stay what the file holds."""
    monkeypatch.chdir(tmp_path)
    text = (EXAMPLES / "anthropic_support_agent.yaml").read_text()
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "whole.yaml").write_text(text)
    (tmp_path / "c" / "cut.yaml").write_text(text.rstrip().removesuffix("version: 1"))
    (tmp_path / "s.yaml").write_text(
        "name: s\ncassettes: [c/*.yaml]\nvariants:\n  t: [truncation]\n"
    )
    warning = "c/cut.yaml: no 'version' key, which vcrpy writes after the last interaction"
    for _ in range(2):
        for args in (
            ("report", "c"),
            ("compare", "s.yaml"),
            ("simulate", "c", "-s", "truncation"),
        ):
            code, out, err = _run(*args, *cache)
            assert code == 0, err
            assert f"warning: {warning}" in err and "other cassette of its folder ends" in err
        code, out, _ = _run("compare", "s.yaml", "--format", "json", *cache)
        (message,) = json.loads(out)["warnings"]
        assert message.startswith(warning)
    code, out, err = _run("report", "c/cut.yaml", *cache)  # alone: a hint for check only
    assert code == 0 and "warning" not in err


def test_cassettes_check_names_unpriced_calls_and_empty_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unknown model made ``report`` say "cost unknown" while ``check`` found nothing; an
    empty file was "not a vcrpy cassette (no 'interactions' list)"."""
    monkeypatch.chdir(tmp_path)
    text = (EXAMPLES / "anthropic_support_agent.yaml").read_text()
    (tmp_path / "future.yaml").write_text(text.replace("claude-sonnet-4", "claude-sonnet-9"))
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "blank.yaml").write_text("\n\n")
    code, out, _ = _run("cassettes", "check", ".")
    assert code == 1
    assert "future.yaml: interaction 0: [warning] unpriced:" in out
    assert said(
        out,
        "*genai-prices has no price for anthropic model 'claude-sonnet-9*': its cost is unknown*",
    )
    assert "empty.yaml: [error] unreadable: is empty: not a vcrpy cassette" in out
    assert "blank.yaml: [error] unreadable: holds only blank space (2 bytes): not a vcrpy" in out


def test_placeholders_are_not_secrets(tmp_path: Path) -> None:
    source = yaml.safe_load((EXAMPLES / "anthropic_support_agent.yaml").read_text())
    for value in ("REDACTED", "AUTHORIZATION-XXX", "Bearer <API_KEY>", "sk-ant-fake"):
        source["interactions"][0]["request"]["headers"]["authorization"] = [value]
        (tmp_path / "c.yaml").write_text(yaml.safe_dump(source))
        code, out, _ = _run("cassettes", "check", str(tmp_path))
        assert code == 0, (value, out)


def test_verbose_names_each_errored_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """-v promises every event with its file and interaction: errored calls too."""
    monkeypatch.chdir(ROOT)
    _, quiet, _ = _run("report", "cassettes")
    _, verbose, _ = _run("report", "cassettes", "-v")
    assert "1 errored call: unbilled, no tokens counted." in quiet
    assert "errored: cassettes/anthropic_support_agent.yaml#2: Overloaded" in verbose
    assert "errored: " not in quiet


def test_scenario_files_beside_cassettes_are_left_out_with_a_warning() -> None:
    """``report scenarios/`` walks into the scenarios' cassettes and leaves the scenario files
    out, saying so (they are not recordings); a scenario named on its own is still an error."""
    result = CliRunner().invoke(cli, ["report", str(ROOT / "scenarios"), "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert len(document["cassettes"]) == 4
    assert "left out 5 costsim scenario file(s), not cassettes" in result.stderr
    code, _, err = _run("report", str(ROOT / "scenarios" / "browser_mcp.yaml"))
    assert code == 2 and "is a costsim scenario, not a vcrpy cassette" in err


def test_other_yaml_and_json_in_a_walked_folder_are_left_out_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``report .`` at a project's root stopped at its mkdocs.yml or at costsim's own
    --costsim-report JSON (exit 2, a trial's); files that say they are something else are
    now left out, said so, while cassettes in either format and vcrpy's pre-1.0 bare list
    are read, and a file named on its own is still an error."""
    monkeypatch.chdir(tmp_path)
    cassette = yaml.safe_load((EXAMPLES / "anthropic_support_agent.yaml").read_text())
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "a.json").write_text(json.dumps(cassette))
    (tmp_path / "cassettes" / "old.yaml").write_text(yaml.safe_dump(cassette["interactions"]))
    # a quoted key, and one written after 16 KB of something else: cassettes all the same
    quoted = yaml.safe_dump(cassette).replace("interactions:", '"interactions":', 1)
    (tmp_path / "cassettes" / "quoted.yaml").write_text(quoted)
    late = json.dumps({"notes": "x" * 20_000, **cassette}, indent=2)
    (tmp_path / "cassettes" / "late.json").write_text(late)
    (tmp_path / "mkdocs.yml").write_text("site_name: shop\nnav: []\n")
    (tmp_path / "out.json").write_text('{"format_version": 1, "kind": "costsim.pytest"}\n')
    result = CliRunner().invoke(cli, ["report", ".", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["cassettes"]) == 4
    assert (
        "left out 2 file(s) without an 'interactions' key, not vcrpy cassettes: "
        "mkdocs.yml, out.json" in " ".join(result.stderr.split())
    )
    code, _, err = _run("report", "mkdocs.yml")
    assert code == 2 and "is not a vcrpy cassette (no 'interactions' list)" in err


def test_the_answer_line_names_the_costliest_whole_in_markdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From ten rows the answer names the two costliest, cut to fit a terminal's line; a
    Markdown report has no line to fit and cut them all the same (a trial's)."""
    monkeypatch.chdir(tmp_path)
    deep = tmp_path / "tests" / "cassettes" / "test_support_agent_conversations"
    deep.mkdir(parents=True)
    for i in range(2):
        shutil.copy(EXAMPLES / "anthropic_support_agent.yaml", deep / f"refund_flow_{i}.yaml")
    for i in range(8):
        shutil.copy(EXAMPLES / "openai_chat_streaming.yaml", tmp_path / f"chat_{i}.yaml")
    _, table, _ = _run("report", ".")
    _, markdown, _ = _run("report", ".", "--format", "markdown")
    whole = "tests/cassettes/test_support_agent_conversations/refund_flow_0.yaml"
    assert "% of it in …" in table.splitlines()[0] and whole not in table.splitlines()[0]
    assert f"% of it in {whole} and " in markdown


def test_the_answer_line_says_what_it_leaves_out(tmp_path: Path) -> None:
    """A download of batch results is billed traffic costsim does not meter: the answer line
    says so beside its figure, not only a note further down."""
    lines = [{"custom_id": "a", "result": {"type": "succeeded", "message": {}}}]
    body = "\n".join(json.dumps(line) for line in lines)
    uri = "https://api.anthropic.com/v1/messages/batches/msgbatch_1/results"
    document = {
        "version": 1,
        "interactions": [
            {
                "request": {"method": "GET", "uri": uri, "body": None, "headers": {}},
                "response": {"status": {"code": 200, "message": "OK"}, "headers": {},
                             "body": {"string": body}},
            }
        ],
    }  # fmt: skip
    (tmp_path / "batch.yaml").write_text(yaml.safe_dump(document))
    code, out, _ = _run("report", str(tmp_path / "batch.yaml"), "--no-cache")
    assert code == 0
    # not $0.00: the interaction left out of every sum makes the cost unknown
    assert out.startswith(
        "0 LLM calls in 1 cassette: cost unknown; 1 LLM-looking interaction not metered.\n"
    )


def thinking_cassette(folder: Path) -> Path:
    """A call to Claude that thought (a thinking block) and, as Anthropic does, billed it
    inside 3,000 output tokens without counting it apart."""
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {"type": "thinking", "thinking": "Weigh both plans.", "signature": "sig"},
            {"type": "text", "text": "Plan B."},
        ],
        "usage": {"input_tokens": 200, "output_tokens": 3000},
    }
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 8000,
        "thinking": {"type": "enabled", "budget_tokens": 4000},
        "messages": [{"role": "user", "content": "Which plan?"}],
    }
    return write_yaml(folder / "thinks.yaml", [interaction(request=request, response=response)])


def test_thinking_that_is_not_reported_is_said_not_counted_as_none(tmp_path: Path) -> None:
    """Anthropic bills thinking inside output_tokens and does not count it apart: the report
    said 'thinking 0' of a call that thought. It now says how many calls thought without
    reporting it, in the text and the JSON, and counts only what was reported."""
    path = thinking_cassette(tmp_path)
    code, out, _ = _run("report", str(path), "--format", "json")
    assert code == 0
    totals = json.loads(out)["totals"]
    jsonschema.validate(json.loads(out), _schema())
    assert (totals["reasoning_tokens"], totals["unreported_thinking_calls"]) == (0, 1)
    assert totals["output_tokens"] == 3000
    _, text, _ = _run("report", str(path))
    assert "thinking: 1 call thought without reporting how much" in " ".join(text.split())
    # the thinking column is a lower bound there, in a report and in a comparison
    _, wide, _ = _run("report", str(path), "--wide")
    header, _, row = wide.splitlines()[2:5]
    assert header.split()[-4:-1] == ["thinking", "hit", "rate"] and row.split()[-3] == "≥0"
    _, compared, _ = _run("simulate", str(path), "-s", "thinking_budget:budget=1024", "--wide")
    assert "≥0" in compared
    assert "baseline: 1 call thought without reporting how much" in " ".join(compared.split())


def test_calls_through_a_proxy_are_priced_at_list_and_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trial's LiteLLM proxy on localhost:4000: its gpt-4o-mini calls were priced at
    OpenAI's list price without a word (a proxy may route a name to another deployment). The
    total stays the list price; the report says which calls it assumed it for."""
    monkeypatch.chdir(tmp_path)
    text = (EXAMPLES / "openai_chat_streaming.yaml").read_text()
    (tmp_path / "direct.yaml").write_text(text)
    (tmp_path / "proxy.yaml").write_text(
        text.replace("https://api.openai.com/", "http://localhost:4000/")
    )
    code, out, _ = _run("report", ".", "--format", "json")
    assert code == 0
    rows = {row["path"]: row for row in json.loads(out)["cassettes"]}
    assert rows["proxy.yaml"]["proxied_calls"] == {"localhost": 1}
    assert rows["direct.yaml"]["proxied_calls"] == {}
    assert rows["proxy.yaml"]["cost_usd"] == rows["direct.yaml"]["cost_usd"]
    jsonschema.validate(json.loads(out), _schema())
    code, out, _ = _run("report", ".")
    assert said(out, "*Through hosts no provider is known by*at the list price of the model*")
    assert "1 to localhost." in out
    code, out, _ = _run("report", "direct.yaml")
    assert "Through hosts" not in out


def test_a_call_a_lenient_read_cannot_read_is_named_as_check_names_it(tmp_path: Path) -> None:
    """The review: a recognised Anthropic call whose gzip body is corrupt was an
    ``unrecognised-llm-call`` in a lenient report while ``cassettes check`` said
    ``unreadable``. Both say ``unreadable`` now, and it still makes the total a lower bound."""
    from tests.test_hostile_input import _bad_interactions, with_bad_second

    bad, _ = _bad_interactions()["response-corrupt-gzip"]
    path = with_bad_second(tmp_path / "bad.yaml", bad)
    code, out, _ = _run("report", str(path), "--lenient", "--format", "json")
    assert code == 0
    document = json.loads(out)
    jsonschema.validate(document, _schema())
    assert [note["kind"] for note in document["notes"]] == ["unreadable"]
    assert document["totals"]["cost_usd"] is None and document["totals"]["left_out_calls"] == 1
    code, out, _ = _run("report", str(path), "--lenient")
    assert "1 LLM-looking interaction not metered" in out and "[unreadable]" in out
    code, out, _ = _run("cassettes", "check", str(path))
    assert "interaction 1: [error] unreadable:" in out


def test_the_report_schema_names_every_kind_of_note() -> None:
    from costsim.model import NoteKind

    kinds = _schema()["properties"]["notes"]["items"]["properties"]["kind"]["enum"]
    assert sorted(kinds) == sorted(kind.value for kind in NoteKind)


def test_a_lenient_report_says_in_its_answer_that_files_were_skipped(tmp_path: Path) -> None:
    """A trial: a lenient report's first line read as the whole bill while a cassette holding
    calls had been skipped (said only on stderr, which CI logs often drop)."""
    shutil.copy(EXAMPLES / "anthropic_support_agent.yaml", tmp_path / "whole.yaml")
    (tmp_path / "cut.json").write_text('{"interactions": [')
    code, out, err = _run("report", str(tmp_path), "--lenient")
    assert code == 0 and "skipped" in err
    assert out.splitlines()[0].endswith("; 1 unreadable cassette skipped.")
    code, out, _ = _run("report", str(tmp_path / "whole.yaml"))
    assert "skipped" not in out
