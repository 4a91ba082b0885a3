"""A typed tree of HTML and SVG elements, written out in one place with everything escaped.

Every page and chart is built as :class:`Node` values; text and attribute values are
escaped when the tree is written (:meth:`Node.html`), so a string from a recording (a file
name, a model, a message) can only ever reach the page as text. The one way to put markup in
unescaped is :class:`Trusted`, which only the page's own constant style sheet and script use.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from html import escape

from costsim.render.visible import visible, visible_lines

__all__ = ["Node", "Trusted", "el", "number"]

VOID = frozenset({"meta", "br", "hr", "img", "input", "link", "wbr"})
"""HTML elements that have no end tag."""
SELF_CLOSING = frozenset({"rect", "line", "path", "polyline", "polygon", "circle", "stop"})
"""SVG shapes written as ``<rect .../>`` when empty."""

AttrValue = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class Trusted:
    """Markup written as it is: only for the page's own constants (style sheet, script)."""

    markup: str


@dataclass(frozen=True, slots=True)
class Node:
    """One element: its tag, attributes (None and False are left out) and children."""

    tag: str
    attrs: tuple[tuple[str, AttrValue], ...] = ()
    children: tuple[Node | Trusted | str, ...] = ()

    def html(self) -> str:
        parts: list[str] = []
        self._write(parts)
        return "".join(parts)

    def _write(self, out: list[str]) -> None:
        out.append(f"<{self.tag}")
        for name, value in self.attrs:
            if value is None or value is False:
                continue
            if value is True:
                out.append(f" {name}")
            else:
                out.append(f' {name}="{escape(visible(_attr(value)), quote=True)}"')
        if self.tag in VOID:
            out.append(">")
            return
        if not self.children and self.tag in SELF_CLOSING:
            out.append("/>")
            return
        out.append(">")
        for child in self.children:
            if isinstance(child, Node):
                child._write(out)
            elif isinstance(child, Trusted):
                out.append(child.markup)
            else:
                # a control character is no HTML (and sets a terminal's title when the page
                # is written to one): shown as its escape, as every text format shows it
                out.append(escape(visible_lines(child), quote=False))
        out.append(f"</{self.tag}>")

    def walk(self) -> Iterable[Node]:
        """This node and every node below it, in document order."""
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.walk()


def number(value: float) -> str:
    """A coordinate: at most two decimals, no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _attr(value: str | int | float) -> str:
    if isinstance(value, float):
        return number(value)
    return str(value)


def el(tag: str, *children: Node | Trusted | str | None, **attrs: AttrValue) -> Node:
    """``el("rect", x=1, class_="bar")``: trailing ``_`` is dropped, other ``_`` become ``-``
    (``aria_label`` -> ``aria-label``, ``text_anchor`` -> ``text-anchor``); None children are
    left out."""
    return Node(
        tag,
        tuple((name.rstrip("_").replace("_", "-"), value) for name, value in attrs.items()),
        tuple(child for child in children if child is not None),
    )
