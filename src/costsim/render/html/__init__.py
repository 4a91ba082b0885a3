"""Self-contained HTML pages with inline SVG charts: one page per kind of result.

Entries of the output-format registry (:mod:`costsim.render.formats`) as the ``html`` format.
Built as typed element trees (:mod:`~costsim.render.html.markup`), escaped in one place.
"""

from __future__ import annotations

from costsim.render.html.comparison import scenario_page, scenarios_page, simulation_page
from costsim.render.html.report import report_page

__all__ = ["report_page", "scenario_page", "scenarios_page", "simulation_page"]
