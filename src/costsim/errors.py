"""The exceptions costsim raises.

Every error costsim raises on purpose derives from :class:`CostsimError`, so a caller can catch
one class. The tree::

    CostsimError
    ├── InputError                      bad input from the user: exit code 2 in the CLI
    │   ├── CassetteError               a cassette file that cannot be read
    │   │   ├── CassetteNotFoundError   (also a FileNotFoundError)
    │   │   ├── WalkError               a folder it cannot read, a file that is not regular
    │   │   │                           (a FIFO, a device): --lenient leaves it out
    │   │   ├── UnsafeCassetteError     a YAML tag that would construct or call an object
    │   │   └── InteractionError        one interaction of a readable file is malformed
    │   └── ConfigError                 an option or configuration value is invalid
    │       ├── SettingsError           every problem of a [tool.costsim] table (io.config)
    │       └── ScenarioError           every problem of a scenario file (scenario.problems)
    └── DataError                       data costsim ships or depends on is missing or corrupt

Messages name the file, the interaction index and the offending value, so the CLI can print
them as one sentence without a traceback.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "CassetteError",
    "CassetteNotFoundError",
    "ConfigError",
    "CostsimError",
    "DataError",
    "InputError",
    "InteractionError",
    "OutputError",
    "UnsafeCassetteError",
    "WalkError",
]


class CostsimError(Exception):
    """Base class of every error costsim raises on purpose."""


class InputError(CostsimError):
    """The user's input (files, options) cannot be used as given."""


class CassetteError(InputError):
    """A cassette file cannot be read."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class CassetteNotFoundError(CassetteError, FileNotFoundError):
    """A path given as a cassette does not exist."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(path, "no such file or folder")


class WalkError(CassetteError):
    """A path costsim must not or cannot read cassettes from: a folder that cannot be listed,
    a file that is not a regular file (a FIFO, a device: reading one could wait or go on
    forever). ``lenient`` loading leaves it out with a warning instead."""


class UnsafeCassetteError(CassetteError):
    """A cassette carries a YAML tag that would construct or call a Python object."""


class InteractionError(CassetteError):
    """One interaction of an otherwise readable cassette is malformed."""

    def __init__(self, path: Path | str, index: int, reason: str) -> None:
        self.index = index
        self.problem = reason
        """What is wrong with the interaction (``reason`` is that after its index)."""
        super().__init__(path, f"interaction {index}: {reason}")


class ConfigError(InputError):
    """An option, scenario or configuration value is invalid."""


class OutputError(CostsimError):
    """Output could not be made or written where it must go (a temporary folder that is full,
    a cached output cut while read)."""


class DataError(CostsimError):
    """Data costsim ships or depends on (tokenizer files, price tables) is missing or corrupt."""
