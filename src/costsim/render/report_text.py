"""A report as text: a one-line answer, a table that fits the width, then what the numbers
depend on (unpriced and estimated calls, notes about single interactions)."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

from costsim.analysis.report import Report, ReportNote
from costsim.model import LEFT_OUT_KINDS
from costsim.pricing.ledger import Totals
from costsim.render.embeddings_text import (
    embeddings_beside,
    embeddings_note,
    unpriced_reasons,
)
from costsim.render.report import (
    ESTIMATED,
    UNMETERED,
    UNREPORTED_THINKING,
    band_text,
    read_pricing_notes,
    snapshot_notes,
    thinking_cell,
)
from costsim.render.rows import cost_cells, merged, others_label, others_note, ranked, split_rows
from costsim.render.text import (
    Column,
    display_path,
    markdown_table,
    more_line,
    percent,
    plural,
    shorten_left,
    table,
    wrap,
)

__all__ = ["NOTES_SHOWN", "render_markdown", "render_table"]

NOTES_SHOWN = 10
"""Unpriced calls and notes about interactions listed without ``verbose``."""
EVERY_ROW = "-v lists every one, as do JSON and Markdown"


def _columns(first: str, wide: bool) -> list[Column]:
    split = [
        Column("usage"), Column("uncached"), Column("cache read"), Column("write 5m"),
        Column("write 1h"),
    ] if wide else []  # fmt: skip
    return [
        Column(first, align="left", cut="left", min_width=16),
        Column("calls"),
        *split[:1],
        Column("prompt"),
        *split[1:],
        Column("output", drop=1),
        *([Column("thinking")] if wide else []),
        Column("hit rate", drop=2),
        Column("cost"),
    ]


def _row(name: str, totals: Totals, cost: str, wide: bool) -> list[str]:
    estimated = f" ({totals.estimated_calls:,} est.)" if totals.estimated_calls else ""
    cells = [name, f"{totals.llm_calls:,}{estimated}"]
    if wide:
        cells.append(f"{totals.calls_with_usage:,}")
    cells.append(f"{totals.prompt_tokens:,}")
    if wide:
        cells += [
            f"{totals.uncached_input_tokens:,}",
            f"{totals.cache_read_tokens:,}",
            f"{totals.cache_write_5m_tokens:,}",
            f"{totals.cache_write_1h_tokens:,}",
        ]
    cells.append(f"{totals.output_tokens:,}")
    if wide:
        cells.append(thinking_cell(totals))
    return [*cells, percent(totals.cache_hit_rate), cost]


def _ranked(report: Report) -> list[tuple[str, Totals]]:
    """The rows, costliest first (by the priced part of an unknown cost), then by name in
    natural order: the table leads with what matters."""
    if report.by == "cassette":
        named = [(display_path(item.path), item.totals) for item in report.cassettes]
    else:
        named = list(report.groups.items())
    return ranked(named, lambda totals: totals.priced_cost)


def _listed(report: Report, every: bool) -> tuple[list[tuple[str, Totals]], int]:
    """The rows to list (the costliest and every one whose cost is not fully known, unless
    ``every``), then one summing the others, if any; and how many that one sums."""
    shown, others = split_rows(
        _ranked(report), every=every, keep=lambda row: row[1].cost_usd is None
    )
    if not others:
        return shown, 0
    summed = merged((totals for _, totals in others), Totals())
    return [*shown, (others_label(len(others)), summed)], len(others)


def _rows(named: list[tuple[str, Totals]], report: Report, wide: bool) -> list[list[str]]:
    """The table's rows, then TOTAL; a cassette of embeddings only costs ``-``: the columns
    are its LLM calls' (none), and its embeddings, priced or not, are said in their note."""
    only = {display_path(c.path) for c in report.cassettes if c.embeddings_only}
    shown = [None if report.by == "cassette" and name in only else t for name, t in named]
    named = [*named, ("TOTAL", report.totals)]
    costs = cost_cells([*shown, report.totals])
    return [
        _row(name, totals, cost, wide) for (name, totals), cost in zip(named, costs, strict=True)
    ]


def answer_line(report: Report, cost: str, *, cut: int | None = 40) -> str:
    """What was billed in one sentence (``cost``: the TOTAL row's cell); the costliest rows'
    names cut to ``cut`` characters (None: whole, where lines do not have to fit)."""
    totals = report.totals
    if not report.cassettes and report.skipped:  # none read: that is the answer
        every = "the only cassette" if len(report.skipped) == 1 else "every cassette"
        return f"No LLM calls reported: {every} was unreadable and skipped (--lenient)."
    if not report.cassettes:
        return "No cassettes: nothing to report."
    cost = cost.rstrip("*")
    if not cost.startswith(("$", "≥")):
        cost = "cost unknown"
    where = plural(len(report.cassettes), "cassette")
    unpriced = f" ({plural(totals.unpriced_calls, 'call')} unpriced)" if totals.unpriced else ""
    missed = sum(1 for note in report.notes if note.kind in LEFT_OUT_KINDS)
    if missed:  # not in the figure: said beside it, not only in a note below
        unpriced += f"; {plural(missed, 'LLM-looking interaction')} not metered"
    unpriced += embeddings_beside(report.embeddings)  # billed, in no LLM figure: beside it
    if report.skipped:  # read leniently: what the skipped files held is in no figure
        unpriced += f"; {plural(len(report.skipped), 'unreadable cassette')} skipped"
    line = f"{plural(totals.llm_calls, 'LLM call')} in {where}: {cost}{unpriced}."
    rows = _ranked(report)
    whole = totals.priced_cost
    if len(rows) >= 10 and whole > 0:  # where the rows are too many to scan
        top = rows[:2]
        share = sum((row[1].priced_cost for row in top), start=Decimal(0)) / whole
        if share >= Decimal("0.25"):
            names = " and ".join(shorten_left(name, cut) if cut else name for name, _ in top)
            line += f" {share:.0%} of it in {names}."
    return line


def _where(path_text: str, index: int, width: int) -> str:
    return f"{shorten_left(path_text, max(width // 2, 24))}#{index}"


def _unpriced(report: Report, width: int, verbose: bool) -> list[str]:
    totals = report.totals
    if not totals.unpriced:
        return []
    lines = wrap(
        f"* {plural(totals.unpriced_calls, 'unpriced call')}: costs shown are a lower bound, "
        "the total cost is unknown.",
        width,
    )
    reasons = Counter(u.reason for u in totals.unpriced)
    for reason, count in reasons.most_common():
        lines += wrap(f"{reason} ({plural(count, 'call')})", width, indent="  ")
    if verbose:
        for u in totals.unpriced:
            where = _where(display_path(u.provenance.path), u.provenance.index, width)
            lines += wrap(f"unpriced: {where}: {u.reason}", width, indent="  ")
    return lines


def report_notes(report: Report) -> list[str]:
    """What the totals rest on, one sentence each (estimated and unmetered calls, gateway
    prices, errored calls, other providers, undated calls, skipped files): the table and the
    HTML page say the same."""
    totals = report.totals
    notes: list[str] = []
    if totals.estimated_calls:
        notes.append(
            f"est.: {plural(totals.estimated_calls, 'call')} {ESTIMATED}; estimator error: "
            + "; ".join(band_text(band) for band in report.estimator)
        )
    if totals.unmetered_calls:
        notes.append(f"* {plural(totals.unmetered_calls, 'call')} {UNMETERED}.")
    if totals.left_out_calls:
        notes.append(
            f"* {plural(totals.left_out_calls, 'LLM-looking interaction')} costsim cannot "
            "meter: in no sum, so costs shown are a lower bound (the notes say which)."
        )
    if totals.gateway_priced_calls:
        notes.append(
            f"{plural(totals.gateway_priced_calls, 'call')} priced from the cost the gateway "
            "recorded (genai-prices has no price for their model)."
        )
    notes += read_pricing_notes(totals.read_pricing)
    if totals.errored_calls:
        notes.append(
            f"{plural(totals.errored_calls, 'errored call')}: unbilled, no tokens counted."
        )
    if totals.unreported_thinking_calls:
        notes.append(
            f"thinking: {plural(totals.unreported_thinking_calls, 'call')} {UNREPORTED_THINKING}."
        )
    foreign = sum((item.foreign_calls for item in report.cassettes), start=Counter[str]())
    if foreign:
        listed = ", ".join(f"{n} to {host}" for host, n in sorted(foreign.items()))
        notes.append(f"Served by other providers' hosts, priced from their price lists: {listed}.")
    notes += [said for said in [embeddings_note(report.embeddings)] if said]
    proxied = sum((item.proxied_calls for item in report.cassettes), start=Counter[str]())
    if proxied:
        listed = ", ".join(f"{n} to {host}" for host, n in sorted(proxied.items()))
        notes.append(
            "Through hosts no provider is known by (a proxy, gateway or self-hosted server), "
            f"priced (where a price is known) at the list price of the model each call names: "
            f"{listed}."
        )
    if totals.undated_calls and not report.as_of:
        notes.append(
            f"{plural(totals.undated_calls, 'call')} "
            f"{'has' if totals.undated_calls == 1 else 'have'} no recorded date: priced at today's "
            "prices (pin a date with --as-of)."
        )
    if report.as_of:
        notes.append(f"Prices as of {report.as_of.date().isoformat()} (--as-of).")
        notes += snapshot_notes(totals.early_snapshots, source="--as-of")
    if report.skipped:
        notes.append(
            f"{plural(len(report.skipped), 'unreadable cassette')} skipped (--lenient): "
            + "; ".join(item.error for item in report.skipped[:3])
            + ("; …" if len(report.skipped) > 3 else "")
        )
    return notes


def _notes(report: Report, width: int, verbose: bool) -> list[str]:
    lines = _unpriced(report, width, verbose)
    embeddings = embeddings_note(report.embeddings)
    for note in report_notes(report):
        lines += wrap(note, width)
        if note == embeddings:  # under it, its calls without a price
            lines += _unpriced_embeddings(report, width, verbose)
    return lines + _errored(report, width, verbose) + _recording_notes(report, width, verbose)


def _unpriced_embeddings(report: Report, width: int, verbose: bool) -> list[str]:
    """Why embeddings calls have no price; with ``verbose``, each one, where it was recorded
    (as :func:`_unpriced` says the LLM calls)."""
    found = report.embeddings
    lines = [out for reason in unpriced_reasons(found) for out in wrap(reason, width, indent="  ")]
    if verbose:
        for u in found.unpriced:
            where = _where(display_path(u.provenance.path), u.provenance.index, width)
            lines += wrap(f"unpriced: {where}: {u.reason}", width, indent="  ")
    return lines


def _errored(report: Report, width: int, verbose: bool) -> list[str]:
    """With ``verbose``, each errored call: where, and what the API answered."""
    if not verbose:
        return []
    lines: list[str] = []
    for cassette in report.cassettes:
        for item in cassette.calls:
            call = item.call
            if call.errored:
                where = _where(display_path(call.provenance.path), call.provenance.index, width)
                lines += wrap(f"errored: {where}: {call.error or 'an error'}", width, indent="  ")
    return lines


def _recording_notes(report: Report, width: int, verbose: bool) -> list[str]:
    """Notes about single interactions: every one with ``verbose``; otherwise each distinct
    note once, with how many interactions it concerns and the first of them."""
    if not report.notes:
        return []
    lines = [f"* {plural(len(report.notes), 'note')} about the recordings:"]
    if verbose:
        for note in report.notes:
            where = _where(display_path(note.provenance.path), note.provenance.index, width)
            lines += wrap(f"{where}: [{note.kind.value}] {note.message}", width, indent="  ")
        return lines
    groups: dict[tuple[str, str], list[ReportNote]] = {}
    for note in report.notes:
        groups.setdefault((note.kind.value, note.message), []).append(note)
    for (kind, message), notes in list(groups.items())[:NOTES_SHOWN]:
        first = notes[0].provenance
        where = _where(display_path(first.path), first.index, width)
        more = f" (and {plural(len(notes) - 1, 'other')})" if len(notes) > 1 else ""
        lines += wrap(f"[{kind}] {message}: {where}{more}", width, indent="  ")
    hidden = sum(len(notes) for notes in list(groups.values())[NOTES_SHOWN:])
    return lines + more_line(hidden)


def render_table(report: Report, *, width: int, verbose: bool, wide: bool) -> str:
    listed, summed = _listed(report, verbose)
    rows = _rows(listed, report, wide)
    lines = wrap(answer_line(report, rows[-1][-1]), width)
    if report.cassettes:
        lines += ["", *table(_columns(report.by, wide), rows, width=width)]
        if summed:
            lines += wrap(others_note(summed, report.by, EVERY_ROW), width)
    notes = _notes(report, width, verbose)
    return "\n".join([*lines, *([""] if notes else []), *notes]) + "\n"


def render_markdown(report: Report, *, verbose: bool) -> str:
    rows = _rows(_ranked(report), report, True)
    answer = answer_line(report, rows[-1][-1], cut=None)
    rows[-1] = [f"**{cell}**" if cell else cell for cell in rows[-1]]
    body = f"## costsim report\n\n{answer}\n\n"
    if report.cassettes:
        body += "\n".join(markdown_table(_columns(report.by, True), rows)) + "\n"
    notes = _notes(report, 10**6, verbose)
    if notes:
        body += "\n" + "\n".join(_bullet(note) for note in notes) + "\n"
    return body


def _bullet(line: str) -> str:
    if line.startswith("  "):
        return f"  - {line.strip()}"
    return f"- {line.lstrip('* ').strip()}"
