"""Pages of a synthetic shop as a Playwright MCP server renders them for the model.

A :class:`Tree` writes an accessibility snapshot in Playwright's YAML-like format, giving each
element a ref (``[ref=e123]``) from one counter per browser session: an element keeps its
ref, new elements get new numbers, as Playwright's ``ariaSnapshot({ref: true})`` does. Each
page function returns the snapshot text and the refs the session will act on.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["PRODUCTS", "Product", "Session", "Tree"]


@dataclass(frozen=True, slots=True)
class Product:
    slug: str
    name: str
    brand: str
    price: str
    watts: int
    length: str
    rating: float
    reviews: int


def _products() -> list[Product]:
    rng = random.Random(4242)
    brands = ["Anker", "Belkin", "Ugreen", "Baseus", "Voltcraft", "Satechi", "Amazon Basics"]
    kinds = [
        "USB-C to USB-C cable",
        "USB-C to USB-C braided cable",
        "USB-C 240W cable",
        "USB-C to Lightning cable",
        "USB-C to USB-A cable",
        "USB-C right-angle cable",
    ]
    products = []
    for index in range(16):
        brand, kind = rng.choice(brands), rng.choice(kinds)
        watts = rng.choice([60, 100, 100, 240]) if "USB-A" not in kind else 18
        length = rng.choice(["0.5 m", "1 m", "1.8 m", "2 m", "3 m"])
        price = f"£{rng.randint(5, 29)}.{rng.choice(['49', '99', '00', '79'])}"
        name = f"{brand} {kind}, {watts}W, {length}"
        slug = f"{brand.lower().replace(' ', '-')}-usb-c-{watts}w-{index:02d}"
        rating = round(rng.uniform(3.4, 4.9), 1)
        products.append(
            Product(slug, name, brand, price, watts, length, rating, rng.randint(3, 2400))
        )
    cheapest = Product(
        "voltcraft-usb-c-100w-1m",
        "Voltcraft USB-C to USB-C cable, 100W, 1 m",
        "Voltcraft",
        "£4.99",
        100,
        "1 m",
        4.3,
        318,
    )
    return [*products[:9], cheapest, *products[9:]]


PRODUCTS = _products()


@dataclass(slots=True)
class Tree:
    """One snapshot being written: lines, and the refs of elements worth acting on."""

    refs: Iterator[int]
    known: dict[str, int]
    lines: list[str] = field(default_factory=list)
    depth: int = 0

    def add(
        self,
        role: str,
        name: str | None = None,
        *,
        key: str | None = None,
        attrs: str = "",
        text: str | None = None,
        url: str | None = None,
        pointer: bool = False,
        children: bool = False,
    ) -> str:
        """One element; ``key`` names it so a later snapshot reuses its ref."""
        if key is not None and key in self.known:
            ref = self.known[key]
        else:
            ref = next(self.refs)
            if key is not None:
                self.known[key] = ref
        label = f' "{name}"' if name is not None else ""
        tail = f" {attrs}" if attrs else ""
        cursor = " [cursor=pointer]" if pointer or url else ""
        colon = ":" if children or url or text else ""
        after = f" {text}" if text and not (children or url) else ""
        self.lines.append(
            f"{'  ' * self.depth}- {role}{label}{tail} [ref=e{ref}]{cursor}{colon}{after}"
        )
        if url:
            self.lines.append(f"{'  ' * (self.depth + 1)}- /url: {url}")
        return f"e{ref}"

    def text(self, text: str) -> None:
        self.lines.append(f"{'  ' * self.depth}- text: {text}")

    def open(
        self, role: str, name: str | None = None, *, key: str | None = None, attrs: str = ""
    ) -> str:
        ref = self.add(role, name, key=key, attrs=attrs, children=True)
        self.depth += 1
        return ref

    def close(self) -> None:
        self.depth -= 1

    def render(self) -> str:
        return "\n".join(self.lines)


class Session:
    """The shop's pages; refs persist across the session's snapshots."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        counter = iter(range(1, 1 << 30))
        self._refs = counter
        self.known: dict[str, int] = {}
        self.cart = 0

    def tree(self) -> Tree:
        return Tree(self._refs, self.known)

    def _chrome(self, tree: Tree) -> None:
        tree.open("banner", key="banner")
        tree.add("link", "Voltcraft Supply home", key="logo", url="/")
        tree.open("search", key="search")
        tree.add("searchbox", "Search products", key="searchbox")
        tree.add("button", "Search", key="search-button", pointer=True)
        tree.close()
        tree.open("navigation", "Main", key="nav")
        for name in ["Cables", "Chargers", "Hubs & docks", "Audio", "Deals", "Help"]:
            tree.add("link", name, key=f"nav-{name}", url=f"/c/{name.lower().split()[0]}")
        tree.close()
        tree.add("link", "Account", key="account", url="/account")
        tree.add("link", f"Cart ({self.cart})", key="cart", url="/cart")
        tree.close()

    def _footer(self, tree: Tree) -> None:
        tree.open("contentinfo", key="footer")
        for heading, links in [
            ("Shop", ["Cables", "Chargers", "Hubs & docks", "Gift cards", "Outlet"]),
            ("Help", ["Delivery", "Returns", "Warranty", "Contact us", "Track my order"]),
            ("Company", ["About", "Careers", "Sustainability", "Press", "Affiliates"]),
        ]:
            tree.add("heading", heading, key=f"f-{heading}", attrs="[level=3]")
            tree.open("list", key=f"fl-{heading}")
            for link in links:
                tree.open("listitem", key=f"fi-{heading}-{link}")
                tree.add(
                    "link",
                    link,
                    key=f"f-{heading}-{link}",
                    url=f"/{link.lower().replace(' ', '-')}",
                )
                tree.close()
            tree.close()
        tree.add(
            "paragraph", key="copyright", text="© 2025 Voltcraft Supply Ltd. Prices include VAT."
        )
        tree.close()

    def home(self) -> tuple[str, dict[str, str]]:
        tree = self.tree()
        tree.open("generic", key="root")
        self._chrome(tree)
        tree.open("main", key="main-home")
        tree.add("heading", "Charge faster. Pay less.", attrs="[level=1]")
        tree.add("link", "Shop Black Friday deals", url="/deals")
        tree.add("heading", "Popular categories", attrs="[level=2]")
        for name in [
            "USB-C cables",
            "GaN chargers",
            "Power banks",
            "USB hubs",
            "Wireless chargers",
        ]:
            tree.add("link", name, url=f"/c/{name.lower().replace(' ', '-')}")
        tree.add("heading", "Best sellers", attrs="[level=2]")
        tree.open("list")
        for product in PRODUCTS[:6]:
            tree.open("listitem")
            tree.add("link", product.name, url=f"/p/{product.slug}")
            tree.text(product.price)
            tree.add("button", f"Add {product.name} to cart", pointer=True)
            tree.close()
        tree.close()
        tree.add("textbox", "Email for our newsletter")
        tree.add("button", "Subscribe", pointer=True)
        tree.close()
        self._footer(tree)
        tree.close()
        return tree.render(), {"search": f"e{self.known['searchbox']}"}

    def results(self, query: str, *, by_price: bool) -> tuple[str, dict[str, str]]:
        tree = self.tree()
        tree.open("generic", key="root")
        self._chrome(tree)
        tree.open("main", key="main-results")
        tree.add("heading", f'Results for "{query}"', key="results-h", attrs="[level=1]")
        tree.text(f"{len(PRODUCTS)} products")
        tree.open("complementary", "Filters", key="filters")
        for group, options in [
            ("Brand", ["Anker", "Belkin", "Ugreen", "Baseus", "Voltcraft"]),
            ("Power", ["60W", "100W", "240W"]),
            ("Length", ["0.5 m", "1 m", "2 m", "3 m"]),
        ]:
            tree.open("group", group, key=f"g-{group}")
            for option in options:
                tree.add("checkbox", f"{option} ({self.rng.randint(1, 9)})", key=f"cb-{option}")
            tree.close()
        tree.close()
        sort = tree.open("combobox", "Sort by", key="sort")
        for option in ["Relevance", "Price: low to high", "Price: high to low", "Rating"]:
            chosen = option == ("Price: low to high" if by_price else "Relevance")
            tree.add("option", option, key=f"sort-{option}", attrs="[selected]" if chosen else "")
        tree.close()
        products = sorted(PRODUCTS, key=lambda p: float(p.price[1:])) if by_price else PRODUCTS
        tree.open("list", "Products", key="product-list")
        for product in products:
            tree.open("listitem", key=f"li-{product.slug}")
            tree.add("link", product.name, key=f"link-{product.slug}", url=f"/p/{product.slug}")
            tree.add("img", f"Rated {product.rating} out of 5", key=f"rating-{product.slug}")
            tree.text(f"({product.reviews:,}) {product.price}")
            tree.add("button", "Add to cart", key=f"add-{product.slug}", pointer=True)
            tree.close()
        tree.close()
        tree.add("navigation", "Pagination", key="pages")
        tree.close()
        self._footer(tree)
        tree.close()
        refs = {"sort": sort, "cheapest": f"e{self.known['link-voltcraft-usb-c-100w-1m']}"}
        refs["price_option"] = f"e{self.known['sort-Price: low to high']}"
        return tree.render(), refs

    def product(self, length: str = "", added: bool = False) -> tuple[str, dict[str, str]]:
        product = PRODUCTS[9]
        tree = self.tree()
        tree.open("generic", key="root")
        self._chrome(tree)
        tree.open("main", key="main-product")
        tree.open("navigation", "Breadcrumb", key="crumbs")
        for crumb in ["Home", "Cables", "USB-C cables"]:
            tree.add("link", crumb, key=f"crumb-{crumb}", url="/")
        tree.close()
        tree.add("heading", product.name, key="p-title", attrs="[level=1]")
        for index in range(1, 6):
            tree.add("img", f"{product.name}, view {index}", key=f"p-img-{index}")
        tree.add("img", f"Rated {product.rating} out of 5", key="p-rating")
        tree.text(f"{product.reviews} reviews · {product.price} · In stock, dispatched today")
        tree.open("radiogroup", "Length", key="lengths")
        for option in ["0.5 m", "1 m", "2 m"]:
            checked = "[checked]" if option == length else ""
            tree.add("radio", option, key=f"len-{option}", attrs=checked)
        tree.close()
        tree.add("spinbutton", "Quantity", key="qty", text="1")
        tree.add("button", "Add to cart", key="p-add", pointer=True)
        if added:
            tree.add("alert", key="added", text="Added to your cart. Cart total £4.99.")
        tree.add(
            "link",
            "Datasheet (PDF)",
            key="datasheet",
            url="https://cdn.shop.example.com/docs/vc-usbc-100w.pdf",
        )
        tree.add("heading", "Specifications", key="spec-h", attrs="[level=2]")
        tree.open("table", key="specs")
        for spec, value in [
            ("Connectors", "USB-C male to USB-C male"),
            ("Power delivery", "100 W (20 V / 5 A), e-marker chip"),
            ("Data", "USB 2.0, 480 Mbit/s"),
            ("Length", "1 m"),
            ("Jacket", "Braided nylon"),
            ("Bend lifespan", "20,000 bends"),
            ("Warranty", "2 years"),
        ]:
            tree.open("row", f"{spec} {value}", key=f"spec-{spec}")
            tree.add("cell", spec, key=f"spec-k-{spec}")
            tree.add("cell", value, key=f"spec-v-{spec}")
            tree.close()
        tree.close()
        tree.add("heading", "Customer reviews", key="rev-h", attrs="[level=2]")
        for index in range(6):
            tree.open("article", key=f"rev-{index}")
            tree.add("img", f"Rated {self.rng.randint(3, 5)} out of 5", key=f"rev-stars-{index}")
            tree.add("paragraph", key=f"rev-text-{index}", text=REVIEWS[index])
            tree.close()
        tree.close()
        self._footer(tree)
        tree.close()
        refs = {f"len-{k}": f"e{self.known[f'len-{k}']}" for k in ["0.5 m", "1 m", "2 m"]}
        refs |= {"add": f"e{self.known['p-add']}", "datasheet": f"e{self.known['datasheet']}"}
        refs["cart"] = f"e{self.known['cart']}"
        return tree.render(), refs

    def datasheet(self) -> str:
        tree = self.tree()
        tree.open("generic", key="pdf-root")
        tree.add("heading", "VC-USBC-100W datasheet", attrs="[level=1]")
        tree.add("paragraph", text="Rated current 5 A at 20 V (100 W) with e-marker; USB PD 3.0.")
        tree.add(
            "paragraph",
            text="Conductor: 28 AWG data, 20 AWG power. Operating temperature -10 to 60 °C.",
        )
        tree.add("button", "Download", pointer=True)
        tree.close()
        return tree.render()

    def cart_page(self) -> tuple[str, dict[str, str]]:
        tree = self.tree()
        tree.open("generic", key="root")
        self._chrome(tree)
        tree.open("main", key="main-cart")
        tree.add("heading", "Your cart", attrs="[level=1]")
        tree.open("table", key="cart-table")
        tree.add("row", f"{PRODUCTS[9].name} 1 £4.99", key="cart-row")
        tree.close()
        tree.add("textbox", "Discount code", key="coupon")
        tree.add("button", "Apply", key="coupon-apply", pointer=True)
        tree.text("Subtotal £4.99 · Delivery calculated at checkout")
        tree.add("button", "Checkout", key="checkout", pointer=True)
        tree.close()
        self._footer(tree)
        tree.close()
        return tree.render(), {"checkout": f"e{self.known['checkout']}"}

    def checkout(self, values: dict[str, str], step: str) -> tuple[str, dict[str, str]]:
        tree = self.tree()
        tree.open("generic", key="root")
        tree.add("link", "Voltcraft Supply home", key="logo", url="/")
        tree.open("main", key=f"main-{step}")
        tree.add("heading", "Checkout", key="co-h", attrs="[level=1]")
        tree.open("list", "Steps", key="co-steps")
        for name in ["Details", "Delivery", "Payment"]:
            current = "[current]" if name.lower() == step else ""
            tree.add("listitem", name, key=f"co-step-{name}", attrs=current)
        tree.close()
        refs: dict[str, str] = {}
        if step == "details":
            for label in FIELDS:
                refs[label] = tree.add("textbox", label, key=f"f-{label}", text=values.get(label))
            tree.add("combobox", "Country", key="country", text="United Kingdom")
            refs["continue"] = tree.add(
                "button", "Continue to delivery", key="co-next", pointer=True
            )
        elif step == "delivery":
            tree.open("radiogroup", "Delivery method", key="ship")
            for option in [
                "Standard (3-5 working days) £2.99",
                "Next day £5.99",
                "Collect from locker £1.99",
            ]:
                refs[option.split()[0]] = tree.add("radio", option, key=f"ship-{option}")
            tree.close()
            refs["continue"] = tree.add("button", "Continue to payment", key="co-pay", pointer=True)
        else:
            tree.text("Order total £7.98 (incl. VAT £1.33)")
            for label in ["Card number", "Expiry date", "Security code", "Name on card"]:
                tree.add("textbox", label, key=f"card-{label}")
            tree.add("button", "Pay £7.98", key="pay", pointer=True)
        tree.add(
            "complementary", "Order summary", key="co-summary", text=f"{PRODUCTS[9].name} £4.99"
        )
        tree.close()
        tree.close()
        return tree.render(), refs


FIELDS = ["Email", "Full name", "Address line 1", "Town or city", "Postcode"]
REVIEWS = [
    "Charges my laptop at full speed, feels sturdy. The braided jacket is nicer than expected.",
    "Works with my MacBook Pro at 96 W, the charger reports 100 W capable. Good value.",
    "Shorter than I wanted, should have bought the 2 m one. Quality is fine.",
    "Stopped working after three months, replaced quickly under warranty.",
    "Does what it says. Not for video: USB 2.0 only, as the listing says.",
    "Cheapest 100 W cable I found that actually has an e-marker. Recommended.",
]
