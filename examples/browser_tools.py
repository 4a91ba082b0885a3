"""Playwright MCP's browser tools as an MCP client sends them, and their Markdown results.

The schemas and descriptions follow microsoft/playwright-mcp; a result has the sections that
server writes: ``### Result``, ``### Ran Playwright code``, ``### Page state`` (URL, title and
the accessibility snapshot), ``### Open tabs``, ``### Console messages``, ``### Downloads``.
"""

# ruff: noqa: E501  (verbatim tool descriptions and console lines)

from __future__ import annotations

from examples.recorder import Json

__all__ = ["CONSOLE", "OUTPUT_DIR", "SHOP", "TOOLS", "result"]

SHOP = "https://shop.example.com"


def _tool(name: str, description: str, properties: Json, required: list[str]) -> Json:
    schema = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
        "$schema": "http://json-schema.org/draft-07/schema#",
    }
    return {"name": name, "description": description, "input_schema": schema}


_ELEMENT = {
    "element": {
        "type": "string",
        "description": "Human-readable element description used to obtain permission to interact with the element",
    },
    "ref": {
        "type": "string",
        "description": "Exact target element reference from the page snapshot",
    },
}
TOOLS = [
    _tool(
        "browser_navigate",
        "Navigate to a URL",
        {"url": {"type": "string", "description": "The URL to navigate to"}},
        ["url"],
    ),
    _tool(
        "browser_click",
        "Perform click on a web page",
        {
            **_ELEMENT,
            "doubleClick": {
                "type": "boolean",
                "description": "Whether to perform a double click instead of a single click",
            },
            "button": {
                "type": "string",
                "enum": ["left", "right", "middle"],
                "description": "Button to click, defaults to left",
            },
        },
        ["element", "ref"],
    ),
    _tool(
        "browser_type",
        "Type text into editable element",
        {
            **_ELEMENT,
            "text": {"type": "string", "description": "Text to type into the element"},
            "submit": {
                "type": "boolean",
                "description": "Whether to submit entered text (press Enter after)",
            },
            "slowly": {
                "type": "boolean",
                "description": "Whether to type one character at a time. Useful for triggering key handlers in the page. By default entire text is filled in at once.",
            },
        },
        ["element", "ref", "text"],
    ),
    _tool(
        "browser_snapshot",
        "Capture accessibility snapshot of the current page, this is better than screenshot",
        {},
        [],
    ),
    _tool(
        "browser_take_screenshot",
        "Take a screenshot of the current page. You can't perform actions based on the screenshot, use browser_snapshot for actions.",
        {
            "type": {
                "type": "string",
                "enum": ["png", "jpeg"],
                "default": "png",
                "description": "Image format for the screenshot. Default is png.",
            },
            "filename": {
                "type": "string",
                "description": "File name to save the screenshot to. Defaults to `page-{timestamp}.{png|jpeg}` if not specified.",
            },
            "fullPage": {
                "type": "boolean",
                "description": "When true, takes a screenshot of the full scrollable page, instead of the currently visible viewport.",
            },
        },
        [],
    ),
    _tool(
        "browser_evaluate",
        "Evaluate JavaScript expression on page or element",
        {
            "function": {
                "type": "string",
                "description": "() => { /* code */ } or (element) => { /* code */ } when element is provided",
            },
            "element": _ELEMENT["element"],
            "ref": _ELEMENT["ref"],
        },
        ["function"],
    ),
    _tool(
        "browser_tabs",
        "List, create, close, or select a browser tab.",
        {
            "action": {
                "type": "string",
                "enum": ["list", "new", "close", "select"],
                "description": "Operation to perform",
            },
            "index": {
                "type": "number",
                "description": "Tab index, used for close/select. If omitted for close, current tab is closed.",
            },
        },
        ["action"],
    ),
]
CONSOLE = [
    "[LOG] [analytics] page_view {{path: {path}}} @ {shop}/static/js/analytics.8c1f2a.js:1",
    "[WARNING] [Violation] 'setTimeout' handler took 63ms @ {shop}/static/js/app.3f9c2e.js:1",
    "[ERROR] Failed to load resource: the server responded with a status of 404 () @ https://cdn.shop.example.com/img/promo-bf-2025.webp:0",
    "[LOG] [consent] no stored preference, showing banner @ {shop}/static/js/consent.js:44",
    "[WARNING] Third-party cookie will be blocked in future Chrome versions @ {shop}{path}:0",
    "[LOG] [cart] hydrate cart=0 items @ {shop}/static/js/app.3f9c2e.js:1",
]
OUTPUT_DIR = "/tmp/playwright-mcp-output/1763634021516"


def result(
    code: str,
    *,
    url: str = "",
    title: str = "",
    snapshot: str = "",
    console: int = 0,
    tabs: list[str] | None = None,
    downloads: str = "",
    result: str = "",
) -> str:
    """A tool result in Playwright MCP's Markdown sections."""
    parts = [f"### Result\n{result}"] if result else []
    parts.append(f"### Ran Playwright code\n```js\n{code}\n```")
    if snapshot:
        parts.append(
            f"### Page state\n- Page URL: {url}\n- Page Title: {title}\n"
            f"- Page Snapshot:\n```yaml\n{snapshot}\n```"
        )
    if tabs:
        parts.append("### Open tabs\n" + "\n".join(tabs))
    if console:
        path = url.removeprefix(SHOP) or "/"
        lines = [line.format(shop=SHOP, path=path) for line in CONSOLE[:console]]
        parts.append("### Console messages\n" + "\n".join(f"- {line}" for line in lines))
    if downloads:
        parts.append(f"### Downloads\n{downloads}")
    return "\n\n".join(parts)
