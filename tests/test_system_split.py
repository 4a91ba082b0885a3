"""``caching``'s static/dynamic split: only the system lines that change between calls of one
agent move after the cached prefix.

It moved everything after the shared opening: a timestamp line near the top of a 37,000-
character prompt took the rules after it out of the cache too, so one recording showed a 24%
rise where moving the one line saves 54% (what the same prompt with the line at its end
showed). Where two versions of a prompt differed inside a line, the split sent one version's
opening with the other's rest.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from costsim.engine import Engine, Variant, make_step
from costsim.model import Call, Flavour, Provenance, TextBlock
from costsim.providers.normalise import load_trace
from costsim.strategies.system_split import SystemSplit, agent_key, system_splits
from tests.test_hostile_input import ANTHROPIC_RESPONSE, ANTHROPIC_URI, interaction, write_yaml

HEAD = "You are the support agent for Acme Shop. Follow these rules.\n"
RULES = "".join(f"Rule {i}: confirm the order id, never invent order data.\n" for i in range(400))


def _line(k: int) -> str:
    return f"Current time: 2025-11-03T10:0{k}:00Z. Open tickets: {k + 3}.\n"


def _cassette(tmp_path: Path, where: str) -> Path:
    """Four calls of one conversation a minute apart; the changing line in the ``middle``
    of the system prompt (after its opening) or at its ``end``; no breakpoint recorded."""
    interactions = []
    messages: list[dict[str, object]] = []
    head = HEAD * 3  # an agent is known by its first 120 characters
    for k in range(4):
        system = head + _line(k) + RULES if where == "middle" else head + RULES + _line(k)
        messages = [*messages, {"role": "user", "content": f"Where is order 5512{k}?"}]
        request = {"model": "claude-sonnet-4-5", "max_tokens": 512, "system": system}
        reply = {**ANTHROPIC_RESPONSE, "model": "claude-sonnet-4-5"}
        reply["usage"] = {"input_tokens": 5600 + 40 * k, "output_tokens": 20}
        item = interaction(ANTHROPIC_URI, {**request, "messages": messages}, reply)
        item["response"]["headers"]["Date"] = [f"Mon, 03 Nov 2025 10:0{k}:00 GMT"]
        interactions.append(item)
        messages = [*messages, {"role": "assistant", "content": "Hello!"}]
    (tmp_path / where).mkdir(parents=True, exist_ok=True)
    return write_yaml(tmp_path / where / "conv.yaml", interactions)


def test_only_the_changing_line_moves_and_the_rules_after_it_are_cached(tmp_path: Path) -> None:
    middle = load_trace(_cassette(tmp_path, "middle"))
    end = load_trace(_cassette(tmp_path, "end"))
    (split,) = system_splits(call for call in middle.calls).values()
    assert split.static == HEAD * 3 + RULES
    variant = Variant("caching", (make_step("caching", {}),))
    moved, at_end = (Engine([trace]).run(variant) for trace in (middle, end))
    # the same prompt with its timestamp line in the middle or at the end: the same bill
    assert moved.totals().cost_usd == at_end.totals().cost_usd
    assert moved.totals().cache_read_tokens == at_end.totals().cache_read_tokens > 0
    # each call sends the static text (its breakpoint at its end), then its own line
    for k, item in enumerate(moved.traces[0].calls):
        static, changing = item.sim.call.system
        assert (static.text, changing.text) == (HEAD * 3 + RULES, _line(k))
        assert static.cache_control is not None
    said = [e.message for e in moved.events if e.message.startswith("moved")]
    assert (
        said
        == [
            f"moved {len(_line(0))} changing system characters after the "
            f"{len(HEAD * 3 + RULES):,} every call of the agent sends"
        ]
        * 4
    )


def test_two_versions_differing_inside_a_line_keep_each_call_s_own_text() -> None:
    """crewAI's manager prompt in two versions (``coworker(task: str…`` and ``coworker\\n``):
    the head was cut after the line end of one, which the other does not share."""
    one = HEAD * 5 + "Tool Name: Delegate work to coworker(task: str)\nmore\n"
    two = HEAD * 5 + "Tool Name: Delegate work to coworker\nTool Arguments: {}\nmore\n"
    (split,) = system_splits([_call(one), _call(two)]).values()
    assert split.static == HEAD * 5 + "more\n"
    assert split.changing(one) == "Tool Name: Delegate work to coworker(task: str)\n"
    assert split.changing(two) == "Tool Name: Delegate work to coworker\nTool Arguments: {}\n"


def test_changing_lines_spread_through_the_prompt_each_move() -> None:
    """A time line at the top, a ticket count and a queue depth between the rules: everything
    from the first to the last changing line was moved (saving 1.8% where moving the three
    lines saves 54%)."""
    lines = RULES.splitlines(keepends=True)
    rules = ["".join(lines[i : i + 40]) for i in (0, 40, 80)]
    texts = [
        HEAD * 3 + _line(k) + rules[0] + f"Tickets: {k}\n" + rules[1] + f"Queue: {k}\n" + rules[2]
        for k in range(3)
    ]
    (split,) = system_splits(_call(text) for text in texts).values()
    assert split.static == HEAD * 3 + "".join(rules)
    assert split.changing(texts[2]) == _line(2) + "Tickets: 2\n" + "Queue: 2\n"


def test_two_workers_whose_prompts_differ_by_their_number_are_two_agents() -> None:
    """Grouped with their digits aside, worker 1 and worker 2 were one agent: nothing static
    was left to cache (+24.8% where each worker's own split saves half)."""
    texts = [
        f"You are worker {w}. Follow your rules.\n"
        + HEAD * 3
        + _line(k)
        + RULES.replace("Rule", f"W{w}")
        for w in (1, 2)
        for k in range(3)
    ]
    splits = system_splits(_call(text) for text in texts)
    assert len(splits) == 2
    for text in texts:
        assert splits[agent_key(text)].changing(text) in {_line(k) for k in range(3)}


def test_a_prompt_that_opens_with_its_changing_line_is_still_one_agent() -> None:
    """``Today is 2025-11-03.`` first: each prompt opened unlike every other, so none was split
    (the auditor's recording with a 61-character head: +23.8% where the split saves 54%)."""
    texts = [f"Today is 2025-11-0{k}. {HEAD}" + RULES for k in range(1, 4)]
    splits = system_splits(_call(text) for text in texts)
    split = splits[agent_key(texts[0])]
    assert all(splits[agent_key(text)] is split for text in texts)  # one agent's
    assert split.static == RULES
    assert split.changing(texts[1]) == f"Today is 2025-11-02. {HEAD}"


def test_prompts_that_share_little_but_their_opening_are_not_one_agent() -> None:
    """Two workers whose prompts open alike but for their number, each with its own rules and
    none changing: grouped, each would have sent its own rules after the breakpoint."""
    texts = [f"You are worker {w}.\n" + RULES.replace("Rule", f"W{w}") for w in (1, 2)]
    assert system_splits(_call(text) for text in texts) == {}


def test_a_last_line_without_a_line_end_never_runs_into_the_changing_text() -> None:
    """Moved after the static text, the changing line ran into its last line (``endnow 1``)."""
    texts = [HEAD * 3 + f"now {k}\n" + RULES + "end" for k in range(3)]
    calls = [_call(text) for text in texts]
    (split,) = system_splits(calls).values()
    assert split.static == HEAD * 3 + RULES + "end"
    changing = split.changing(texts[1])
    assert changing == "now 1\n"
    static, moved = split.apply(calls[1], changing, None).system
    assert (static.text, moved.text) == (HEAD * 3 + RULES + "end\n", "now 1")
    assert sorted(static.text + moved.text) == sorted(texts[1])  # the same characters


def test_a_short_prompt_opening_like_the_agent_s_is_left_as_it_is() -> None:
    split = SystemSplit(HEAD + RULES, {HEAD + "now\n" + RULES: "now\n"})
    assert split.changing(HEAD + "short") is None


LINES = st.lists(st.sampled_from(["rule one\n", "rule two\n", "x\n", "now 1\n", "now 2\n"]))


@given(st.lists(LINES, min_size=2, max_size=5))
def test_every_text_of_an_agent_is_its_static_lines_and_its_changing_ones(
    bodies: list[list[str]],
) -> None:
    opening = "Agent prompt " + "-" * 200 + "\n"
    texts = [opening + "".join(body) for body in bodies]
    for split in system_splits(_call(text) for text in texts).values():
        static = split.static.splitlines(keepends=True)
        for text in set(texts):
            changing = split.changing(text)
            assert changing is not None
            lines = text.splitlines(keepends=True)
            # the same lines: the static ones in the text's order, the rest changing
            assert sorted(static + changing.splitlines(keepends=True)) == sorted(lines)
            found = iter(lines)
            assert all(line in found for line in static)


def _call(text: str) -> Call:
    """A call whose system prompt is ``text``."""
    return Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=Provenance(Path("x.yaml"), 0),
        system=(TextBlock(text),),
    )
