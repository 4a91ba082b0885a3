"""Parse a cassette document (YAML or JSON) safely: no object built, no recursion unbounded.

YAML goes through costsim's own safe loader (:mod:`costsim.io.safe_yaml`, the same under any
vcrpy version), which refuses every Python tag that would construct or call an object and
reads only the benign ones real recorders write (header names that are ``str`` subclasses,
in both the ``object/new`` and ``object/apply`` forms; ``BytesIO`` and iterator bodies, their
arguments checked). A plain document (no anchor, alias or Python tag: almost every real
cassette) is built in one pass over the parser's events, its depth bounded as it grows
(:mod:`costsim.io.yaml_events`); any other is first measured without recursion
(:func:`costsim.io.limits.scan_yaml`): too deep, or aliases expanding far beyond the file, is
refused before the loader sees it. Every parser failure becomes a
:class:`~costsim.errors.CassetteError` naming the file (and the interaction, when the position
tells).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from costsim.errors import CassetteError, UnsafeCassetteError
from costsim.io.bodies import json_problem
from costsim.io.limits import (
    MAX_DEPTH,
    DuplicateKeyError,
    TooDeepError,
    check_json_depth,
    scan_yaml,
)
from costsim.io.safe_yaml import load_yaml
from costsim.io.yaml_events import NotPlain, load_plain
from costsim.model.quoting import quoted

__all__ = ["MIN_EXPANSION", "parse_document"]

MIN_EXPANSION = 100_000
"""Real cassettes hold under 0.1 node per byte; aliases that expand past this are refused."""


def parse_document(path: Path, text: str, size: int) -> Any:
    """The cassette document in ``text`` (the file at ``path``, ``size`` bytes)."""
    suffix = path.suffix.lower()
    if suffix == ".json" or text.lstrip().startswith("{"):
        try:
            return _parse_json(text)
        except (ValueError, RecursionError) as exc:
            if suffix == ".json":
                raise CassetteError(path, _json_problem(exc)) from None
    return _parse_yaml(path, text, limit=max(MIN_EXPANSION, 2 * size))


def _parse_json(text: str) -> Any:
    check_json_depth(text)
    return json.loads(text)


def _json_problem(exc: ValueError | RecursionError) -> str:
    if isinstance(exc, TooDeepError):
        return f"is not a usable JSON cassette: it {exc}"
    if isinstance(exc, json.JSONDecodeError):
        return f"is not valid JSON ({json_problem(exc)})"
    return f"is not a usable JSON cassette ({_first_line(exc)})"


def _parse_yaml(path: Path, text: str, *, limit: int) -> Any:
    try:
        return load_plain(text)
    except TooDeepError as exc:
        raise _too_deep(path, text, exc) from None
    except DuplicateKeyError as exc:
        raise CassetteError(path, f"line {_key_line(text, exc)}: {exc}") from None
    except yaml.YAMLError as exc:
        raise _yaml_error(path, text, exc) from None
    except (NotPlain, ValueError, TypeError, OverflowError, LookupError, AttributeError):
        # anchors, aliases, Python tags, ...; or a scalar no constructor can hold (told
        # below, where a broken line further on is reported first, as always)
        pass
    try:
        shape = scan_yaml(text)
    except TooDeepError as exc:
        raise _too_deep(path, text, exc) from None
    except yaml.YAMLError as exc:
        raise _yaml_error(path, text, exc) from None
    if shape.nodes > limit:
        raise CassetteError(
            path,
            f"YAML aliases expand to about {shape.nodes:,} nodes, "
            "far beyond the file's size; refused",
        )
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        raise _yaml_error(path, text, exc) from None
    except (ValueError, TypeError, OverflowError, LookupError, AttributeError) as exc:
        # A scalar the YAML constructors cannot hold: a 5,000-digit integer, a timestamp
        # with month 13, "!!bool maybe", "!!int ''" ... (PyYAML raises these bare, without a
        # position, and not always as a ValueError).
        if isinstance(exc, LookupError | AttributeError):  # their own text says nothing
            raise CassetteError(path, "unreadable YAML: a value does not fit its tag") from None
        raise CassetteError(path, f"unreadable YAML: {_first_line(exc)}") from None
    except RecursionError:  # pragma: no cover - scan_yaml bounds the depth first
        raise CassetteError(path, f"YAML is nested more than {MAX_DEPTH} levels deep") from None


def _key_line(text: str, exc: DuplicateKeyError) -> int:
    """The line of the key written twice: the value's line (where the parser met it) or the
    nearest line above it that writes the key (a block collection starts below its key)."""
    lines = text.splitlines()
    names = {str(exc.key), f"'{exc.key}'", f'"{exc.key}"'}
    for number in range(min(exc.line, len(lines)), 0, -1):
        head = lines[number - 1].strip().removeprefix("- ")
        if any(head.startswith(f"{name}:") for name in names):
            return number
    return exc.line


def _too_deep(path: Path, text: str, exc: TooDeepError) -> CassetteError:
    mark = _where_line(text, exc.line) if exc.line else ""
    return CassetteError(path, f"{mark}YAML {exc}")


def _yaml_error(path: Path, text: str, exc: yaml.YAMLError) -> CassetteError:
    mark = getattr(exc, "problem_mark", None)
    where = _where(text, mark)
    if isinstance(exc, yaml.constructor.ConstructorError):
        tag = _tag_of(exc)
        if tag and "python/" in tag:
            return UnsafeCassetteError(
                path, f"{where}refuses YAML tag {quoted(tag)}: it would construct a Python object"
            )
        return CassetteError(path, f"{where}unreadable YAML: {exc.problem}")
    problem = getattr(exc, "problem", None) or _first_line(exc)
    if "nesting depth" in problem:
        # libyaml 0.2.6 and later (PyYAML 6.0.4's wheels) stop at their own depth limit, far
        # above costsim's, sometimes before the scan has seen the first level past it
        return CassetteError(
            path, f"{where}YAML is nested more than {MAX_DEPTH} levels deep; refused"
        )
    return CassetteError(path, f"{where}is not valid YAML ({problem}); truncated or corrupt?")


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "…"


def _tag_of(exc: yaml.constructor.ConstructorError) -> str | None:
    match = re.search(r"tag '([^']+)'", exc.problem or "") or re.search(
        r"unexpected arguments for '([^']+)'", exc.problem or ""
    )
    if not match:
        return None
    return match.group(1).replace("tag:yaml.org,2002:", "!!")


_INTERACTION_START = re.compile(r"(?m)^- +request:|^  - request:")


def _where(text: str, mark: yaml.Mark | None) -> str:
    """``"interaction N (line L): "`` for a YAML error position, as far as it can be told."""
    if mark is None:
        return ""
    return _where_offset(text, mark.index, mark.line + 1)


def _where_line(text: str, line: int) -> str:
    offset = 0
    for _ in range(line - 1):
        found = text.find("\n", offset)
        if found < 0:
            break
        offset = found + 1
    return _where_offset(text, offset, line)


def _where_offset(text: str, offset: int, line: int) -> str:
    index = sum(1 for m in _INTERACTION_START.finditer(text) if m.start() <= offset) - 1
    if index >= 0:
        return f"interaction {index} (line {line}): "
    return f"line {line}: "
