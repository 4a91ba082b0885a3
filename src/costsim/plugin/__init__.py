"""The pytest plugin (``pytest --costsim``): hooks in :mod:`costsim.plugin.hooks`, the run's
state in :mod:`costsim.plugin.session`, its output in :mod:`costsim.plugin.render`."""
