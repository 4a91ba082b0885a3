"""Parse a cassette document (YAML or JSON) safely: no object built, no recursion unbounded.

YAML goes through vcrpy's own safe cassette loader, which refuses every Python tag that would
construct or call an object. costsim adds only the benign string-subclass tags real recorders
write for header names, in both the ``object/new`` and the ``object/apply`` form, and replaces
vcrpy's ``BytesIO`` / ``iter`` body constructors with ones that check their arguments. Before
the loader runs, the event stream is measured without recursion (:func:`costsim.limits.
scan_yaml`): too deep, or aliases expanding far beyond the file, is refused. Every parser
failure becomes a :class:`~costsim.errors.CassetteError` naming the file (and the interaction,
when the position tells).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from vcr.serializers import yamlserializer

from costsim.errors import CassetteError, UnsafeCassetteError
from costsim.limits import MAX_DEPTH, TooDeepError, check_json_depth, scan_yaml

__all__ = ["MIN_EXPANSION", "parse_document"]

# Header names recorded through aiohttp / multidict (and requests) are ``str`` subclasses.
# PyYAML writes them as ``!!python/object/new:<class> [name]`` or, through ``__reduce__``,
# ``!!python/object/apply:<class> [name]``. Both are read back as the plain string; nothing is
# imported, constructed or called, and any other object tag stays refused by vcrpy's loader.
_STR_SUBCLASSES = (
    "multidict._istr.istr",
    "multidict._multidict.istr",
    "multidict._multidict_py.istr",
    "multidict.istr",
    "requests.structures.CaseInsensitiveDict",
)
_STR_SUBCLASS_FORMS = ("python/object/new:", "python/object/apply:")


def _construct_str_subclass(loader: yaml.Loader, node: yaml.Node) -> str:
    if isinstance(node, yaml.SequenceNode):
        args = loader.construct_sequence(node)
    elif isinstance(node, yaml.MappingNode):
        args = loader.construct_mapping(node, deep=True).get("args", [])
    else:
        return str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if not isinstance(args, list | tuple) or len(args) != 1 or not isinstance(args[0], str):
        raise yaml.constructor.ConstructorError(
            None, None, f"unexpected arguments for {node.tag!r}", node.start_mark
        )
    return args[0]


def _bad_arguments(node: yaml.Node) -> yaml.constructor.ConstructorError:
    return yaml.constructor.ConstructorError(
        None, None, f"unexpected arguments for {node.tag!r}", node.start_mark
    )


def _construct_bytesio(loader: yaml.Loader, node: yaml.Node) -> io.BytesIO:
    """An older vcrpy's pickled ``BytesIO`` body, rebuilt from its byte content only."""
    if not isinstance(node, yaml.MappingNode):
        raise _bad_arguments(node)
    state = loader.construct_mapping(node, deep=True).get("state") or (b"",)
    data = state[0] if isinstance(state, list | tuple) and state else b""
    if isinstance(data, str):
        data = data.encode("utf-8", errors="surrogatepass")
    if not isinstance(data, bytes | None):
        raise _bad_arguments(node)
    return io.BytesIO(data or b"")


def _construct_iter(loader: yaml.Loader, node: yaml.Node) -> Iterator[Any]:
    """An iterator request body, rebuilt over its (safely constructed) sequence."""
    if not isinstance(node, yaml.MappingNode):
        raise _bad_arguments(node)
    args: Any = loader.construct_mapping(node, deep=True).get("args") or ([],)
    items = args[0] if isinstance(args, list | tuple) and args else []
    if not isinstance(items, list | tuple | str | bytes):
        raise _bad_arguments(node)
    return iter(items)


_PY = "tag:yaml.org,2002:"
_SERIALIZER = yamlserializer.with_custom_tags(
    {
        **{
            f"{_PY}{form}{name}": _construct_str_subclass
            for form in _STR_SUBCLASS_FORMS
            for name in _STR_SUBCLASSES
        },
        f"{_PY}python/object/new:_io.BytesIO": _construct_bytesio,
        f"{_PY}python/object/apply:builtins.iter": _construct_iter,
    }
)

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
        return f"is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})"
    return f"is not a usable JSON cassette ({_first_line(exc)})"


def _parse_yaml(path: Path, text: str, *, limit: int) -> Any:
    try:
        shape = scan_yaml(text)
    except TooDeepError as exc:
        mark = f"{_where_line(text, exc.line)}" if exc.line else ""
        raise CassetteError(path, f"{mark}YAML {exc}") from None
    except yaml.YAMLError as exc:
        raise _yaml_error(path, text, exc) from None
    if shape.nodes > limit:
        raise CassetteError(
            path,
            f"YAML aliases expand to about {shape.nodes:,} nodes, "
            "far beyond the file's size; refused",
        )
    try:
        return _SERIALIZER.deserialize(text)
    except yaml.YAMLError as exc:
        raise _yaml_error(path, text, exc) from None
    except (ValueError, TypeError, OverflowError) as exc:
        # A scalar the YAML constructors cannot hold: a 5,000-digit integer, a timestamp
        # with month 13, ... (PyYAML raises these bare, without a position).
        raise CassetteError(path, f"unreadable YAML: {_first_line(exc)}") from None
    except RecursionError:  # pragma: no cover - scan_yaml bounds the depth first
        raise CassetteError(path, f"YAML is nested more than {MAX_DEPTH} levels deep") from None


def _yaml_error(path: Path, text: str, exc: yaml.YAMLError) -> CassetteError:
    mark = getattr(exc, "problem_mark", None)
    where = _where(text, mark)
    if isinstance(exc, yaml.constructor.ConstructorError):
        tag = _tag_of(exc)
        if tag and "python/" in tag:
            return UnsafeCassetteError(
                path, f"{where}refuses YAML tag {tag!r}: it would construct a Python object"
            )
        return CassetteError(path, f"{where}unreadable YAML: {exc.problem}")
    problem = getattr(exc, "problem", None) or _first_line(exc)
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
