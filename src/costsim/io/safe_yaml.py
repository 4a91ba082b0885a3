"""A safe YAML loader for cassettes, independent of the vcrpy version installed.

vcrpy before 9.0 loads cassettes with PyYAML's full loader, which constructs any Python object a
file names. costsim never does: this loader is PyYAML's safe loader (libyaml's when present)
plus the few Python tags real recorders write for harmless values — strings, tuples, a
``BytesIO`` or iterator request body, and header names that are ``str`` subclasses. Each is
rebuilt from its plain content by a constructor bound to that exact tag; no class is looked up,
nothing is called. Every other ``!!python/...`` tag is refused.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import Any

import yaml

__all__ = ["STR_SUBCLASSES", "CassetteLoader", "UniqueKeys", "load_yaml", "yaml_word"]

_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PREFIX = "tag:yaml.org,2002:python/"

STR_SUBCLASSES = (
    "multidict._istr.istr",
    "multidict._multidict.istr",
    "multidict._multidict_py.istr",
    "multidict.istr",
    "requests.structures.CaseInsensitiveDict",
)
"""``str`` subclasses recorders write for header names (aiohttp / multidict): read as text."""


_MERGE = "tag:yaml.org,2002:merge"


def yaml_word(value: str, tag: str) -> str:
    """A key as YAML writes it (``true``, ``null``, ``'1'``), for a message."""
    shown = value if len(value) <= 40 else value[:39] + "…"
    return repr(shown) if tag.endswith(":str") else shown


class UniqueKeys:
    """A loader mix-in that refuses a key written twice in one mapping (YAML keeps the last,
    losing the first in silence). Keys are compared as YAML resolves them (``1`` and ``'1'``
    differ), each mapping as written, before merge keys (``<<``) bring others in."""

    _checked: set[int]

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        checked = self.__dict__.setdefault("_checked", set())
        if id(node) not in checked:  # as written: flattening rewrites the node in place
            checked.add(id(node))
            seen: dict[tuple[str, str], int] = {}
            for key, _ in node.value:
                if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE:
                    continue
                first = seen.get((key.tag, key.value))
                if first is None:
                    seen[(key.tag, key.value)] = key.start_mark.line
                else:
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"the key {yaml_word(key.value, key.tag)} is written twice in one "
                        f"mapping (first at line {first + 1}): YAML keeps only the last",
                        key.start_mark,
                    )
        super().flatten_mapping(node)  # type: ignore[misc]


class CassetteLoader(UniqueKeys, _Base):  # type: ignore[misc,valid-type]
    """The safe loader with the benign cassette tags (see the module docstring), refusing a
    key written twice."""


def _arguments(loader: yaml.SafeLoader, node: yaml.Node) -> list[Any]:
    """The arguments of an ``object/new`` or ``object/apply`` node (a list, or ``args:``)."""
    if isinstance(node, yaml.SequenceNode):
        return list(loader.construct_sequence(node, deep=True))
    if isinstance(node, yaml.MappingNode):
        arguments = loader.construct_mapping(node, deep=True).get("args", [])
        return list(arguments) if isinstance(arguments, list | tuple) else [arguments]
    return [loader.construct_scalar(node)]  # type: ignore[arg-type]


def _refuse(node: yaml.Node, why: str) -> yaml.constructor.ConstructorError:
    return yaml.constructor.ConstructorError(
        None, None, f"unexpected arguments for {node.tag!r}: {why}", node.start_mark
    )


def _text(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    """A ``str`` subclass with its string as the only argument: the string."""
    arguments = _arguments(loader, node)
    if len(arguments) != 1 or not isinstance(arguments[0], str):
        raise _refuse(node, "expected one string")
    return arguments[0]


def _scalar_text(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


def _tuple(loader: yaml.SafeLoader, node: yaml.Node) -> tuple[Any, ...]:
    return tuple(loader.construct_sequence(node, deep=True))  # type: ignore[arg-type]


def _bytes_io(loader: yaml.SafeLoader, node: yaml.Node) -> io.BytesIO:
    """A pickled ``BytesIO`` body: its ``state`` holds the buffer's content first."""
    if not isinstance(node, yaml.MappingNode):
        raise _refuse(node, "expected a mapping with a state")
    state = loader.construct_mapping(node, deep=True).get("state") or (b"",)
    content = state[0] if isinstance(state, list | tuple) and state else b""
    if isinstance(content, str):
        content = content.encode("utf-8")
    if not isinstance(content, bytes):
        raise _refuse(node, "the buffer is not bytes")
    return io.BytesIO(content)


def _iterator(loader: yaml.SafeLoader, node: yaml.Node) -> Iterator[Any]:
    """An iterator body (``builtins.iter`` of a list of chunks)."""
    arguments = _arguments(loader, node)
    if len(arguments) != 1 or not isinstance(arguments[0], list | tuple):
        raise _refuse(node, "expected one list of chunks")
    return iter(arguments[0])


_CONSTRUCTORS: dict[str, Callable[[yaml.SafeLoader, yaml.Node], Any]] = {
    "str": _scalar_text,
    "unicode": _scalar_text,
    "tuple": _tuple,
    "object/new:_io.BytesIO": _bytes_io,
    "object/apply:builtins.iter": _iterator,
    **{f"object/new:{name}": _text for name in STR_SUBCLASSES},
    **{f"object/apply:{name}": _text for name in STR_SUBCLASSES},
}
for _tag, _constructor in _CONSTRUCTORS.items():
    CassetteLoader.add_constructor(_PREFIX + _tag, _constructor)


def load_yaml(text: str) -> Any:
    """Parse a cassette's YAML; an unknown ``!!python/...`` tag raises ConstructorError."""
    return yaml.load(text, Loader=CassetteLoader)
