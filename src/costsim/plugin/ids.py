"""Test ids cut to a width, keeping what tells them apart (light: the test process prints
them without loading costsim's library)."""

from __future__ import annotations

from costsim.render.cuts import ELLIPSIS, display_width, shorten_left, take, take_end

__all__ = ["cut_test_ids"]


def cut_test_ids(names: list[str], width: int) -> list[str]:
    """Test ids in ``width`` columns, each keeping what tells it apart: the test function
    whole when it fits (``…test_agent.py::test_refund[long]``, the path cut from the left),
    else the start of the function's name and the end of its parameters
    (``test_support_ag…customer_history]``). Ids that would read alike cut that way are cut
    from the left instead, as are all of them when that is as distinct."""
    cut = [_cut_test_id(name, width) for name in names]
    if len(set(cut)) < len(set(names)):
        return [shorten_left(name, width) for name in names]
    return cut


def _cut_test_id(name: str, width: int) -> str:
    if display_width(name) <= width:
        return name
    start = name.split("[", 1)[0].rfind("::")
    test = name[start + 2 :] if start >= 0 else name
    if display_width(test) < width or width < 12:
        return shorten_left(name, width)
    head = (width - 1) * 2 // 5
    return f"{take(test, head)}{ELLIPSIS}{take_end(test, width - 1 - head)}"
