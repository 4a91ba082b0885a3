"""Output: tables, JSON and Markdown for every kind of result, through one registry
(:mod:`costsim.render.formats`)."""
