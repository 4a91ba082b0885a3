"""The page's own style sheet and script, and the Content-Security-Policy that admits only them.

Both are constants of this module: the policy names their SHA-256 hashes, so nothing else can
run or style the page, and it forbids every remote load (``default-src 'none'``).
"""

from __future__ import annotations

import base64
import hashlib

from costsim.render.html.markup import Trusted

__all__ = ["CSP", "SCRIPT", "STYLE"]

_CSS = """
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--grid:#dde2e7;
--line:#d1d9e0;--accent:#0969da;--zebra:#f6f8fa;--uncached:#0072b2;--read:#009e73;
--write:#d55e00;--output:#cc79a7;--other:#8c8c8c;--total:#6e7781;--save:#1a7f37;--add:#cf222e;
--band:#1f2328}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;
--grid:#262c34;--line:#3d444d;--accent:#4493f8;--zebra:#151b23;--uncached:#56b4e9;
--read:#35c08f;--write:#f07c3a;--output:#e89ac7;--other:#9a9a9a;--total:#8b949e;
--save:#3fb950;--add:#f85149;--band:#f0f6fc}}
body{margin:0 auto;max-width:1040px;padding:1rem 1.5rem 3rem;background:var(--bg);
color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
h1{font-size:1.5rem;margin:.3rem 0}
h2{font-size:1.25rem;margin:2.2rem 0 .6rem;border-bottom:1px solid var(--line);padding-bottom:.2rem}
h3{font-size:1.05rem;margin:1.6rem 0 .3rem}
.answer{font-size:1.1rem;font-weight:600;margin:.4rem 0}
.meta,.note,figcaption p{color:var(--muted)}
.flag{color:var(--add);font-weight:600}
nav ul{padding-left:1.2rem;columns:2}
figure{margin:1rem 0 1.8rem;break-inside:avoid}
figcaption{font-weight:600;margin-bottom:.4rem}
figcaption p{font-weight:400;margin:.1rem 0}
svg.chart{display:block;width:100%;max-width:760px;height:auto;overflow:visible}
svg text{fill:var(--fg);font-size:12px}
svg .tick{fill:var(--muted);font-size:10px}
svg .panel-title{font-weight:600}
svg .grid{stroke:var(--grid);stroke-width:1}
svg .baseline-axis{stroke:var(--muted)}
.c-uncached{fill:var(--uncached)}.c-cache_read{fill:var(--read)}
.c-cache_write{fill:var(--write)}.c-output{fill:var(--output)}.c-other{fill:var(--other)}
.c-total{fill:var(--total)}.c-def{fill:var(--accent)}.c-res{fill:var(--other)}.c-save{fill:var(--save)}.c-add{fill:var(--add)}
svg polygon{fill-opacity:.85}
svg .band{stroke:var(--band);stroke-width:2}
svg .ref{fill:none;stroke:var(--fg);stroke-width:1.5;stroke-dasharray:4 3}
svg .connector{stroke:var(--muted);stroke-dasharray:2 2}
svg rect:hover,svg polygon:hover{opacity:.75}
.scroll{overflow-x:auto}
table.data{border-collapse:collapse;margin:.3rem 0;font-size:13px;
font-variant-numeric:tabular-nums}
table.data caption{text-align:left;color:var(--muted);padding:.2rem 0}
th,td{padding:.2rem .6rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top;
white-space:nowrap}
td.w{white-space:normal;min-width:18rem;overflow-wrap:anywhere}
th.n,td.n{text-align:right;white-space:nowrap}
tbody tr:nth-child(even){background:var(--zebra)}
button.sort{all:unset;cursor:pointer;font-weight:600}
button.sort:focus-visible{outline:2px solid var(--accent)}
th[aria-sort=ascending] button::after{content:" \\25B2"}
th[aria-sort=descending] button::after{content:" \\25BC"}
details{margin:.3rem 0}
summary{cursor:pointer;color:var(--accent)}
.pager{display:flex;gap:.5rem;align-items:center;margin:.3rem 0;color:var(--muted)}
.pager button{font:inherit;color:var(--fg);background:var(--zebra);border:1px solid var(--line);
border-radius:4px;padding:.05rem .5rem;cursor:pointer}
@page{margin:1.2cm}
@media print{body{max-width:none;padding:0;font-size:11px}.pager{display:none}
tr[hidden]{display:table-row}summary{color:inherit}h2,h3{break-after:avoid}}
"""

_JS = """
(function () {
  "use strict";
  function key(row, column) {
    var td = row.cells[column], v = td.getAttribute("data-v");
    return v === null ? td.textContent.toLowerCase() : parseFloat(v);
  }
  function show(table, at) {
    var size = +table.getAttribute("data-page"), rows = table.tBodies[0].rows;
    var pages = Math.ceil(rows.length / size);
    at = Math.max(0, Math.min(at, pages - 1));
    table.pageAt = at;
    for (var i = 0; i < rows.length; i++) {
      rows[i].hidden = !table.showAll && (i < at * size || i >= (at + 1) * size);
    }
    var first = table.showAll ? 1 : at * size + 1;
    var last = table.showAll ? rows.length : Math.min((at + 1) * size, rows.length);
    table.pagerText.textContent = "rows " + first + "\\u2013" + last + " of " + rows.length;
  }
  function button(label, onClick) {
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.addEventListener("click", onClick);
    return b;
  }
  function pager(table) {
    var bar = document.createElement("div");
    bar.className = "pager";
    table.pagerText = document.createElement("span");
    bar.appendChild(button("\\u2039 previous", function () { show(table, table.pageAt - 1); }));
    bar.appendChild(table.pagerText);
    bar.appendChild(button("next \\u203a", function () { show(table, table.pageAt + 1); }));
    bar.appendChild(button("all rows", function () {
      table.showAll = !table.showAll;
      this.textContent = table.showAll ? "pages" : "all rows";
      show(table, 0);
    }));
    table.parentNode.insertBefore(bar, table.nextSibling);
    show(table, 0);
  }
  function sortBy(table, column, th) {
    var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    var down = th.getAttribute("aria-sort") !== "descending";
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) heads[i].removeAttribute("aria-sort");
    th.setAttribute("aria-sort", down ? "descending" : "ascending");
    rows.sort(function (a, b) {
      var x = key(a, column), y = key(b, column);
      var order = x < y ? -1 : x > y ? 1 : 0;
      return down ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    if (table.pagerText) show(table, 0);
  }
  document.querySelectorAll("table.data").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, column) {
      th.querySelector("button").addEventListener("click", function () {
        sortBy(table, column, th);
      });
    });
    if (table.hasAttribute("data-page")) pager(table);
  });
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  });
})();
"""


def _hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


STYLE = Trusted(_CSS)
SCRIPT = Trusted(_JS)
CSP = (
    "default-src 'none'; "
    f"style-src {_hash(_CSS)}; "
    f"script-src {_hash(_JS)}; "
    "img-src 'none'; base-uri 'none'; form-action 'none'"
)
"""Only this module's style sheet and script; no remote load of any kind."""
