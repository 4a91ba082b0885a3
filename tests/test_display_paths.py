"""How reports name a cassette given by its absolute path."""

from __future__ import annotations

from pathlib import Path

from costsim.render.paths import _display


def test_a_file_near_the_working_folder_is_named_relative_to_it() -> None:
    assert _display(Path("/srv/app/data/cassettes/x.yaml"), "/srv/app/proj") == (
        "../data/cassettes/x.yaml"
    )
    assert _display(Path("/srv/app/proj/tests/x.yaml"), "/srv/app/proj") == "tests/x.yaml"


def test_an_absolute_path_shorter_than_the_way_up_to_it_is_kept() -> None:
    """``costsim simulate /tmp/run/a.yaml`` from ``/work/main`` named the file
    ``../../tmp/run/a.yaml`` in every note."""
    assert _display(Path("/tmp/run/a.yaml"), "/work/main") == "/tmp/run/a.yaml"
    assert _display(Path("/x/a.yaml"), "/srv/app/proj/deep/er") == "/x/a.yaml"
