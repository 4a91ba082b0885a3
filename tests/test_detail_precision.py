"""Lines of details under a table show their figures: a trial read ``truncation saves
$0.000`` and ``-$0.100 (-$0.100 to -$0.100, p90)`` under a table of three decimals."""

from __future__ import annotations

from decimal import Decimal

from costsim.render.text import finer


def test_finer_adds_decimals_until_each_figure_shows() -> None:
    assert finer(3, [Decimal("0.1002"), Decimal("0.00031")]) == 4  # $0.0003, not $0.000
    assert finer(3, [Decimal("0.0000001")]) == 6  # at most 6: <$0.000001 said as such
    assert finer(3, [Decimal(0), None, Decimal("0.5")]) == 3  # zero is zero
    ends = [Decimal("-0.10031"), Decimal("-0.10019"), Decimal("-0.10007")]
    assert finer(3, ends, apart=ends) == 4  # -$0.1003 to -$0.1001, not -$0.100 to -$0.100
    alike = [Decimal("-0.1"), Decimal("-0.1")]
    assert finer(3, alike, apart=alike) == 3  # the same amount twice: nothing to tell apart


def test_the_band_line_under_a_table_of_three_decimals() -> None:
    """A range whose ends read alike is said as the band column says it."""
    from types import SimpleNamespace

    from costsim.analysis.spread import Band, Spread
    from costsim.render.band_text import band_detail

    band = Band(Decimal("-0.10019"), Spread(Decimal("0.00012"), Decimal("0.00012")), True)
    summary = SimpleNamespace(delta=band, resimulation_gap=(None, None), resimulated_calls=0)
    assert band_detail(summary, 3) == [  # type: ignore[arg-type]
        "Δ cost -$0.100 (±<$0.001, p90) against the recording"
    ]


def test_the_attribution_line_shows_a_step_worth_hundredths_of_a_cent() -> None:
    from types import SimpleNamespace

    from costsim.render.comparison_text import _attribution

    summary = SimpleNamespace(
        attribution={"truncation": Decimal("0.00031"), "routing": Decimal("0.0979")},
        attribution_bands={},
        interaction=None,
        interaction_band=None,
    )
    assert _attribution(summary, 3) == (  # type: ignore[arg-type]
        "attribution (leave-one-out): truncation saves $0.0003; routing saves $0.0979"
    )


def test_the_html_headline_says_a_tight_range_and_the_divergences_as_the_text_does() -> None:
    """A trial: the HTML said ``p90 $0.200 to $0.200`` and no divergence where the text's
    answer said ``p90 band ±<$0.00001; 21 divergences``."""
    import costsim
    from tests.conftest import EXAMPLES

    result = costsim.simulate(str(EXAMPLES), "routing:models.claude-sonnet-4-5=claude-haiku-4-5")
    page = result.render("html")
    assert "saves $0.00610 (50.6%), p90 ±&lt;$0.00001; 1 divergence." in page
    text = " ".join(result.render("table", width=100).split())
    assert "p90 band ±<$0.00001; 1 divergence." in text


def test_an_amount_too_small_to_show_reads_as_less_than_the_last_digit() -> None:
    """Eight tokens of text-embedding-3-small ($0.00000016) read ``$0.000000``: free."""
    from costsim.render.text import money_cells

    tiny, none = Decimal("0.00000016"), Decimal(0)
    assert money_cells([tiny, Decimal("1.5"), none]) == ["<$0.000001", "$1.500000", "$0.000000"]
    assert money_cells([-tiny, tiny], signed=True) == ["-<$0.000001", "+<$0.000001"]
    assert money_cells([Decimal("0.0004")], decimals=3) == ["<$0.001"]
    assert money_cells([Decimal("0.0005")], decimals=3) == ["$0.001"]  # rounds half up
