"""A browser-automation session through a Playwright MCP server, on Claude Sonnet 4.5.

The agent finds the cheapest 100 W USB-C cable on a shop and checks out up to the payment
step. Tool results are the Markdown Playwright MCP returns: the code it ran, the page state
with a full accessibility snapshot (element refs like ``[ref=e123]``), console messages, open
tabs and downloads. Later tool inputs use refs from the latest snapshot; long runs of turns
call tools without any text (what batching merges).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from examples.browser_pages import FIELDS, PRODUCTS, Session
from examples.browser_tools import OUTPUT_DIR, SHOP, TOOLS, result
from examples.recorder import Json, Recorder

__all__ = ["CALLS", "generate"]

MODEL = "claude-sonnet-4-5"
TASK = (
    "On shop.example.com, find the cheapest USB-C to USB-C cable that does 100 W charging and "
    "is at least 1 m long, add it to the cart and go through checkout up to the payment step "
    "with my details: jane.doe@example.com, Jane Doe, 12 Harbour Street, Bristol, BS1 4RN. "
    "Standard delivery. Do not pay."
)
DETAILS = dict(
    zip(
        FIELDS,
        ["jane.doe@example.com", "Jane Doe", "12 Harbour Street", "Bristol", "BS1 4RN"],
        strict=True,
    )
)
SYSTEM = (
    "You are a browser automation assistant. You control a real Chromium browser through the "
    "Playwright MCP tools to complete the user's task on the web.\n\n"
    "- Work from the page snapshot: it lists the page's accessibility tree with a ref for each "
    "element. Use exactly those refs in browser_click, browser_type and the other element tools; "
    "refs from older snapshots may no longer exist.\n"
    "- Describe the element in `element` in plain words, so the user can approve the action.\n"
    "- Prefer browser_snapshot to screenshots for deciding what to do; take a screenshot only "
    "to show the user a result.\n"
    "- Never enter payment details, passwords or one-time codes, and never press a button that "
    "pays, orders or deletes something, unless the user told you to in this conversation.\n"
    "- Dismiss cookie banners with the least permissive option.\n"
    "- When the task is done or you are blocked, stop calling tools and tell the user what you "
    "did, with the final page's URL."
)


class _Browse:
    """The conversation: each step records one call and appends its tool result."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.messages: list[Json] = [{"role": "user", "content": TASK}]

    def step(self, text: str | None, tool: str, arguments: Json, result: str) -> None:
        use = {"type": "tool_use", "id": self.recorder.tool_id(), "name": tool, "input": arguments}
        content = [{"type": "text", "text": text}, use] if text else [use]
        request = {
            "model": MODEL,
            "max_tokens": 8192,
            "system": SYSTEM,
            "tools": TOOLS,
            "messages": self.messages,
        }
        self.recorder.anthropic(request, content)
        block = {
            "type": "tool_result",
            "tool_use_id": use["id"],
            "content": [{"type": "text", "text": result}],
        }
        self.messages = [
            *self.messages,
            {"role": "assistant", "content": content},
            {"role": "user", "content": [block]},
        ]

    def click(self, element: str, ref: str, text: str | None = None, **page: Any) -> None:
        """A ``browser_click`` on ``element`` whose result shows ``page`` (see ``result``)."""
        arguments, code = _click(element, ref)
        self.step(text, "browser_click", arguments, result(code, **page))

    def finish(self, text: str) -> None:
        request = {
            "model": MODEL,
            "max_tokens": 8192,
            "system": SYSTEM,
            "tools": TOOLS,
            "messages": self.messages,
        }
        self.recorder.anthropic(request, [{"type": "text", "text": text}])


def _click(element: str, ref: str) -> tuple[Json, str]:
    """Arguments of a click on ``element`` ("<name> <role>") and the code Playwright runs."""
    name, role = element.rsplit(" ", 1)
    return (
        {"element": element, "ref": ref},
        f"await page.getByRole('{role}', {{ name: '{name}' }}).click();",
    )


def generate(folder: Path) -> None:
    recorder = Recorder(
        seed=20251120,
        start=datetime(2025, 11, 20, 10, 20, 5, tzinfo=UTC),
        about="A browser-automation MCP session (Claude Sonnet 4.5, Playwright MCP tools).",
        spacing=(4, 25),
    )
    shop, browse = Session(recorder.rng), _Browse(recorder)
    product = PRODUCTS[9]
    product_url, product_title = f"{SHOP}/p/{product.slug}", f"{product.name} | Voltcraft Supply"
    results_url = f"{SHOP}/search?q=usb-c+cable+100w"

    page, refs = shop.home()
    browse.step(
        "I'll open the shop and search for 100 W USB-C cables.",
        "browser_navigate",
        {"url": f"{SHOP}/"},
        result(
            f"await page.goto('{SHOP}/');",
            url=f"{SHOP}/",
            title="Voltcraft Supply | Cables, chargers and hubs",
            snapshot=page,
            console=4,
        ),
    )
    page, found = shop.results("usb-c cable 100w", by_price=False)
    browse.step(
        None,
        "browser_type",
        {
            "element": "Search products searchbox",
            "ref": refs["search"],
            "text": "usb-c cable 100w",
            "submit": True,
        },
        result(
            "await page.getByRole('searchbox', { name: 'Search products' })"
            ".fill('usb-c cable 100w');\n"
            "await page.getByRole('searchbox', { name: 'Search products' }).press('Enter');",
            url=results_url,
            title="Search: usb-c cable 100w | Voltcraft Supply",
            snapshot=page,
            console=2,
        ),
    )
    page, found = shop.results("usb-c cable 100w", by_price=True)
    browse.click(
        "Price: low to high option",
        found["price_option"],
        url=results_url + "&sort=price_asc",
        title="Search: usb-c cable 100w | Voltcraft Supply",
        snapshot=page,
        console=1,
    )
    listing = [
        {"name": p.name, "price": p.price}
        for p in sorted(PRODUCTS, key=lambda p: float(p.price[1:]))[:6]
    ]
    function = (
        "() => [...document.querySelectorAll('[data-testid=product-card]')].slice(0, 6)"
        ".map(c => ({ name: c.querySelector('a').textContent.trim(), price: c.dataset.price }))"
    )
    browse.step(
        "Sorted by price. I'll read the first cards' names and prices to compare power and length.",
        "browser_evaluate",
        {"function": function},
        result(
            f"await page.evaluate('{function}');",
            result=json.dumps(listing, indent=2, ensure_ascii=False),
            console=1,
        ),
    )
    page, refs = shop.product()
    browse.click(
        f"{product.name} link",
        found["cheapest"],
        f"The cheapest cable that is 100 W and at least 1 m is the {product.name} at "
        f"{product.price}. Opening it.",
        url=product_url,
        title=product_title,
        snapshot=page,
        console=3,
    )
    sheet_url = "https://cdn.shop.example.com/docs/vc-usbc-100w.html"
    tabs = [
        f"- 0: [{product_title}] ({product_url})",
        f"- 1: (current) [VC-USBC-100W datasheet] ({sheet_url})",
    ]
    browse.click(
        "Datasheet (PDF) link",
        refs["datasheet"],
        url=sheet_url,
        title="VC-USBC-100W datasheet",
        snapshot=shop.datasheet(),
        tabs=tabs,
        downloads=f"- Downloaded file vc-usbc-100w.pdf to {OUTPUT_DIR}/vc-usbc-100w.pdf",
    )
    page, refs = shop.product()
    browse.step(
        "The datasheet confirms 5 A at 20 V with an e-marker, so 100 W is real. Closing it.",
        "browser_tabs",
        {"action": "close", "index": 1},
        result(
            "await page.close();",
            url=product_url,
            title=product_title,
            snapshot=page,
            tabs=[f"- 0: (current) [{product_title}] ({product_url})"],
        ),
    )
    page, refs = shop.product(length="1 m")
    browse.click(
        "1 m radio",
        refs["len-1 m"],
        url=product_url + "?length=1m",
        title=product_title,
        snapshot=page,
    )
    shop.cart = 1
    page, refs = shop.product(length="1 m", added=True)
    browse.click(
        "Add to cart button",
        refs["add"],
        url=product_url + "?length=1m",
        title=product_title,
        snapshot=page,
        console=2,
    )
    shot = f"{OUTPUT_DIR}/page-2025-11-20T10-24-51-318Z.png"
    browse.step(
        None,
        "browser_take_screenshot",
        {"type": "png"},
        result(
            f"// Screenshot viewport and save it as {shot}\n"
            "await page.screenshot({\n  scale: 'css',\n  type: 'png'\n});",
            result=f"Took the viewport screenshot and saved it as {shot}",
        ),
    )
    page, found = shop.cart_page()
    browse.click(
        "Cart (1) link",
        refs["cart"],
        f"The cable is in the cart ({product.price}). Going to checkout.",
        url=f"{SHOP}/cart",
        title="Your cart | Voltcraft Supply",
        snapshot=page,
        console=1,
    )
    values: dict[str, str] = {}
    page, refs = shop.checkout(values, "details")
    browse.click(
        "Checkout button",
        found["checkout"],
        url=f"{SHOP}/checkout/details",
        title="Checkout | Voltcraft Supply",
        snapshot=page,
        console=2,
    )
    for label, value in DETAILS.items():
        values[label] = value
        ref = refs[label]
        page, refs = shop.checkout(values, "details")
        code = f"await page.getByRole('textbox', {{ name: '{label}' }}).fill('{value}');"
        browse.step(
            None,
            "browser_type",
            {"element": f"{label} textbox", "ref": ref, "text": value},
            result(
                code,
                url=f"{SHOP}/checkout/details",
                title="Checkout | Voltcraft Supply",
                snapshot=page,
            ),
        )
    continue_ref = refs["continue"]
    page, refs = shop.checkout(values, "delivery")
    browse.click(
        "Continue to delivery button",
        continue_ref,
        url=f"{SHOP}/checkout/delivery",
        title="Checkout | Voltcraft Supply",
        snapshot=page,
        console=1,
    )
    browse.click(
        "Standard delivery radio",
        refs["Standard"],
        url=f"{SHOP}/checkout/delivery",
        title="Checkout | Voltcraft Supply",
        snapshot=page,
    )
    clicked = refs["continue"]
    page, refs = shop.checkout(values, "payment")
    browse.click(
        "Continue to payment button",
        clicked,
        url=f"{SHOP}/checkout/payment",
        title="Checkout | Voltcraft Supply",
        snapshot=page,
        console=2,
    )
    browse.finish(
        f"Done up to payment, without paying. In the cart: {product.name}, {product.price} "
        "(the cheapest 100 W cable of at least 1 m; its datasheet confirms an e-marker). "
        "Details entered for Jane Doe, 12 Harbour Street, Bristol BS1 4RN, standard delivery "
        f"£2.99, order total £7.98. The browser is on {SHOP}/checkout/payment; the datasheet "
        f"was also saved to {OUTPUT_DIR}/vc-usbc-100w.pdf and a screenshot to {shot}."
    )
    recorder.write(folder / "checkout_session.yaml")


CALLS = 21
