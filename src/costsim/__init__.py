"""costsim: what recorded LLM traffic cost, and what each optimisation would save.

The package root stays cheap to import (the pytest plugin imports it in every test run).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from costsim.errors import CostsimError

__all__ = ["CostsimError", "__version__"]

try:
    __version__ = version("costsim")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0"
