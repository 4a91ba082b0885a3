"""Text from a recording made harmless to show: on a terminal, in a log, on a Markdown page.

A recorded string (a model or tool name, a test id, a file name, text a note quotes) may hold
control characters: ESC starts a sequence that sets the terminal's title or colours, BEL rings,
CR and LF split a table's row. :func:`visible` writes each as an escape, as Python's ``repr``
does (``\\x1b``, ``\\x07``, ``\\r``, ``\\n``); so are DEL, the C1 controls (U+009B starts a
sequence too), the line and paragraph separators, the bidirectional marks, overrides and
isolates (which reorder the rest of the line) and lone surrogates (a file name's byte that is
not UTF-8 as ``\\xNN``, as :func:`~costsim.render.paths.printable` writes it).

Every table cell and wrapped line is :func:`visible` before it is measured
(:mod:`costsim.render.text`, the plugin's table and lines); every text format's output is
:func:`visible_lines` once more where it is written (:mod:`costsim.render.formats`, stderr), so
a character that took another way in is an escape too (a line feed there would still end its
line: lines made without :func:`~costsim.render.text.wrap` are made :func:`visible` one by
one). A Markdown document is pasted into pull requests and rendered as HTML:
:func:`markdown_lines` writes ``<`` and ``>`` as entities too, so a recorded ``<script>``
shows as text. JSON escapes C0 itself but writes DEL, C1 and the separators as they are:
:func:`json_escaped` writes them as ``\\u`` escapes, the same strings.
"""

from __future__ import annotations

import re

from costsim.render.paths import printable

__all__ = ["json_escaped", "markdown_cell", "markdown_lines", "visible", "visible_lines"]

_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
"""C0 (tab and line feed too), DEL, C1, the bidirectional marks, embeddings, overrides and
isolates, the line and paragraph separators, and lone surrogates."""
_UNSAFE_IN_LINES = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
_HTML = str.maketrans({"<": "&lt;", ">": "&gt;"})
_PIPE = re.compile(r"(\\*)\|")
"""A ``|`` and the backslashes before it (``a\\|b`` would end a cell at its ``|``)."""
_BRACKET = re.compile(r"(\\*)([\[\]])")
"""A ``[`` or ``]`` and the backslashes before it (``\\[`` would leave the bracket open)."""
_TICKS = re.compile(r"(\\*)(`+)")
"""A run of backticks and the backslashes before it (an odd number escapes the run: no code
span starts there, as CommonMark reads it)."""
_ENTITY = re.compile("&(?=[#A-Za-z])")
"""An ``&`` that could start an entity (``&lt;``, ``&#60;``): one before a space cannot."""


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character written as an escape (``x\\x1b]0;t\\x07``)."""
    if text.isprintable():  # no control, separator or surrogate (the usual case)
        return text
    return _UNSAFE.sub(_escape, printable(text))  # a file name's bytes not UTF-8 as \xNN


def visible_lines(text: str) -> str:
    """Lines of output, each :func:`visible` (the line feeds between them kept)."""
    if _UNSAFE_IN_LINES.search(text) is None:
        return text
    return _UNSAFE_IN_LINES.sub(_escape, printable(text))


def _html_escaped(text: str) -> str:
    if "&" in text:
        text = _ENTITY.sub("&amp;", text)
    return text.translate(_HTML)


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text``'s code spans are: a run of backticks not escaped by a backslash, up to
    the next run of as many. Anything else, an escaped or unclosed run too, is text."""
    spans: list[tuple[int, int]] = []
    end = 0
    for run in _TICKS.finditer(text):
        if run.start(2) < end or len(run.group(1)) % 2:
            continue
        ticks = run.group(2)
        close = re.compile(f"(?<!`){ticks}(?!`)").search(text, run.end())
        if close is not None:
            spans.append((run.start(2), close.end()))
            end = close.end()
    return spans


def _escape_brackets(text: str) -> str:
    return _BRACKET.sub(lambda m: m.group(1) * 2 + "\\" + m.group(2), text)


def _brackets(text: str) -> str:
    """Every ``[`` and ``]`` outside code spans escaped (each backslash before one doubled):
    costsim writes no links, so a recorded ``[text](url)`` or ``![](url)`` shows as written
    instead of becoming a link or an image fetched by whoever reads the page."""
    if "[" not in text and "]" not in text:
        return text
    out: list[str] = []
    start = 0
    for begin, end in _code_spans(text):
        out += [_escape_brackets(text[start:begin]), text[begin:end]]
        start = end
    out.append(_escape_brackets(text[start:]))
    return "".join(out)


def markdown_lines(text: str) -> str:
    """A Markdown document: :func:`visible_lines`, with ``<`` and ``>`` as HTML's entities
    (``&lt;script&gt;``), so nothing in it becomes HTML, ``&`` where it could start one
    (a recorded ``&lt;`` shows as written; ``a & b``, a stack of strategies, stays), and
    brackets escaped, so nothing becomes a link or an image (:func:`_brackets`)."""
    return "\n".join(_brackets(line) for line in _html_escaped(visible_lines(text)).split("\n"))


def markdown_cell(text: str) -> str:
    """``text`` for a cell of a Markdown table: :func:`visible` (a line feed never splits the
    row), each ``|`` escaped and each backslash before one doubled (a cell never splits)."""
    text = visible(text)
    if "|" not in text:
        return text
    return _PIPE.sub(lambda match: match.group(1) * 2 + "\\|", text)


def json_escaped(text: str) -> str:
    """JSON text with DEL, the C1 controls, the bidirectional controls and the line and
    paragraph separators written as ``\\u`` escapes (JSON writes only C0 that way): the
    same strings, and nothing a terminal acts on when the JSON is printed."""
    if text.isascii() and "\x7f" not in text:  # DEL is ASCII too: it was left raw here
        return text
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
