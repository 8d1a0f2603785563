"""The raw tables of the synthetic retail database, as numpy arrays, deterministic from a seed.

Usage::

    from rewardkit.envs.sql.data import generate
    t = generate(seed=0)
    t.orders["ts"], t.lines["price"], t.rates           # (n_orders,), (n_lines,), (C, D)

The generator writes the traps into the data as a real warehouse has them: refunds are
separate rows (line-level, sometimes two for one line), about 3 % of orders are voided
(``deleted_at`` set) but keep their lines, about 2 % of order lines were loaded twice (same
``order_id`` and ``line_no``, a new ``line_id``), about 4 % of orders are guest checkouts
(``customer_id`` NULL), about 8 % of products have no category, prices are in the store's
currency, timestamps are UTC while stores report in local time, and two currencies have a gap
in their daily rates (2024-08-01 to 2024-09-30). ``world`` turns the arrays into SQLite and
picks the task scenarios; ``truth`` computes answers from these arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "CATEGORIES",
    "CURRENCIES",
    "DATA_END_DAY",
    "EPOCH",
    "RATE_GAP",
    "STORES",
    "Tables",
    "day_string",
    "generate",
]

EPOCH = np.datetime64("2023-01-01", "D")  # day 0; timestamps are seconds since its midnight UTC
DATA_END_DAY = 912  # 2025-07-01: the data covers days [0, 912), i.e. up to 2025-06-30 UTC
N_CUSTOMERS = 2_500
N_ORDERS = 12_000
N_PRODUCTS = 150
CURRENCIES = ("USD", "EUR", "GBP", "JPY", "CHF", "AUD")
_RATE_START = (1.0, 1.08, 1.26, 0.0068, 1.12, 0.66)  # USD per unit on day 0
RATE_GAP = ("2024-08-01", "2024-09-30")  # CHF and AUD have no rates on these days (inclusive)
_GAP_CURRENCIES = ("CHF", "AUD")
# (store_id, name, city, country, region or None, currency, UTC offset in minutes, weight)
STORES: tuple[tuple[int, str, str, str, str | None, str, int, float], ...] = (
    (1, "Fifth Avenue", "New York", "US", "Americas", "USD", -300, 1.6),
    (2, "Loop", "Chicago", "US", "Americas", "USD", -360, 1.0),
    (3, "Sunset", "Los Angeles", "US", None, "USD", -480, 1.0),
    (4, "Covent Garden", "London", "GB", "Europe", "GBP", 0, 1.3),
    (5, "Marais", "Paris", "FR", "Europe", "EUR", 60, 1.0),
    (6, "Mitte", "Berlin", "DE", "Europe", "EUR", 60, 0.9),
    (7, "Bahnhofstrasse", "Zurich", "CH", "Europe", "CHF", 60, 0.7),
    (8, "Ginza", "Tokyo", "JP", "Asia-Pacific", "JPY", 540, 1.0),
    (9, "Harbour", "Sydney", "AU", "Asia-Pacific", "AUD", 600, 0.8),
    (10, "Web", "Online", "US", "Online", "USD", 0, 1.5),
)
CATEGORIES = ("Apparel", "Books", "Electronics", "Home", "Toys", "Beauty", "Sports", "Garden")
_LAUNCH_DAY = {"Garden": 731}  # Garden products are sold from 2025-01-01 only
_GIVEN = [
    "Amelia",
    "Anders",
    "Aurora",
    "Bastian",
    "Beatriz",
    "Caspar",
    "Celeste",
    "Dario",
    "Delphine",
    "Emeric",
    "Esther",
    "Fabian",
    "Florence",
    "Gideon",
    "Greta",
    "Hamish",
    "Helena",
    "Ignatius",
    "Imogen",
    "Jasper",
    "Juliette",
    "Kasimir",
    "Leonora",
    "Lorcan",
    "Magnus",
    "Marisol",
    "Nikolai",
    "Noemi",
    "Octavia",
    "Orlando",
    "Penelope",
    "Quentin",
    "Rosalind",
    "Sebastian",
    "Seraphina",
    "Tobias",
    "Ursula",
    "Valentin",
    "Wilhelmina",
    "Xavier",
    "Yolanda",
    "Zacharias",
    "Annika",
    "Benedikt",
    "Clementine",
    "Desmond",
    "Evangeline",
    "Ferdinand",
    "Gwendolyn",
    "Horatio",
    "Isadora",
    "Joaquin",
    "Katarina",
    "Leopold",
    "Margarethe",
    "Nathaniel",
    "Ophelia",
    "Percival",
    "Rosamund",
    "Sigrid",
]
_FAMILY = [
    "Abernathy",
    "Bergstrom",
    "Castellano",
    "Dunleavy",
    "Eriksson",
    "Fairweather",
    "Galbraith",
    "Hargreaves",
    "Ingersoll",
    "Jablonski",
    "Kowalczyk",
    "Lindqvist",
    "Montgomery",
    "Nakamura",
    "Oyelaran",
    "Pemberton",
    "Quarshie",
    "Rasmussen",
    "Szymanski",
    "Thorvaldsen",
    "Underhill",
    "Vasquez",
    "Whitfield",
    "Yamaguchi",
    "Zielinski",
    "Achterberg",
    "Blackwood",
    "Cavendish",
    "Delacroix",
    "Eastwood",
    "Fitzgerald",
    "Gallagher",
    "Holloway",
    "Iwasaki",
    "Jorgensen",
    "Kirkpatrick",
    "Lancaster",
    "Moriarty",
    "Northcott",
    "Ostrowski",
    "Prendergast",
    "Quigley",
    "Ravensworth",
    "Sandoval",
    "Tennyson",
    "Vanderbilt",
    "Wainwright",
    "Yardley",
    "Zimmermann",
    "Ashcombe",
    "Brightwater",
    "Carmichael",
    "Drummond",
    "Ellsworth",
    "Fennimore",
    "Greenhalgh",
    "Huntington",
    "Inglewood",
    "Kensington",
    "Loughborough",
]
_STREETS = [
    "Alder",
    "Birch",
    "Cedar",
    "Chestnut",
    "Elm",
    "Hawthorn",
    "Juniper",
    "Larch",
    "Linden",
    "Magnolia",
    "Maple",
    "Oak",
    "Poplar",
    "Rowan",
    "Sycamore",
    "Willow",
    "Yew",
    "Acacia",
    "Beech",
    "Cypress",
]
_SUFFIXES = ("Street", "Avenue", "Road", "Lane", "Terrace", "Crescent")
_DOMAINS = ("example.com", "example.net", "example.org", "mail.example")
_PHONE_CC = {"US": "1", "GB": "44", "FR": "33", "DE": "49", "CH": "41", "JP": "81", "AU": "61"}


@dataclass(frozen=True, eq=False)
class Tables:
    """Column arrays of every table (index i of an array is the row with id i + 1)."""

    seed: int
    customers: dict[str, Any]  # name, email, phone, address, city, country: lists of str
    products: dict[str, np.ndarray]  # category (n,) int, −1 = NULL; price_usd (n,) float
    orders: dict[str, np.ndarray]  # customer (−1 guest), store (0-based), ts (s), voided
    lines: dict[str, np.ndarray]  # order, line_no, product, qty, price, dup (second copy)
    refunds: dict[str, np.ndarray]  # order, line_no, amount, ts
    rates: np.ndarray  # (len(CURRENCIES), DATA_END_DAY) USD per unit; NaN = missing


def day_string(day: int | np.integer) -> str:
    """Day number → 'YYYY-MM-DD'."""
    return str(EPOCH + np.timedelta64(int(day), "D"))


def _rates(rng: np.random.Generator) -> np.ndarray:
    steps = rng.normal(0.0, 0.004, size=(len(CURRENCIES), DATA_END_DAY))  # (C, D) log-returns
    steps[0] = 0.0
    rates = np.asarray(_RATE_START)[:, None] * np.exp(np.cumsum(steps, axis=1))
    rates = np.round(rates, 6)
    lo = int((np.datetime64(RATE_GAP[0]) - EPOCH).astype(int))
    hi = int((np.datetime64(RATE_GAP[1]) - EPOCH).astype(int))
    for cur in _GAP_CURRENCIES:
        rates[CURRENCIES.index(cur), lo : hi + 1] = np.nan
    return rates


def _customers(rng: np.random.Generator) -> dict[str, Any]:
    given = rng.integers(len(_GIVEN), size=N_CUSTOMERS)
    family = rng.integers(len(_FAMILY), size=N_CUSTOMERS)
    countries = [s[3] for s in STORES]
    home = rng.integers(len(STORES), size=N_CUSTOMERS)
    out: dict[str, Any] = {k: [] for k in ("name", "email", "phone", "address", "city", "country")}
    used_phones: set[str] = set()
    for i in range(N_CUSTOMERS):
        g, f = _GIVEN[given[i]], _FAMILY[family[i]]
        country = countries[home[i]]
        out["name"].append(f"{g} {f}")
        out["email"].append(f"{g.lower()}.{f.lower()}{i + 1}@{_DOMAINS[i % len(_DOMAINS)]}")
        while True:  # unique phone numbers
            digits = f"{int(rng.integers(200, 999))}{int(rng.integers(1_000_000, 9_999_999))}"
            if digits not in used_phones:
                used_phones.add(digits)
                break
        out["phone"].append(f"+{_PHONE_CC[country]} {digits[:3]} {digits[3:6]} {digits[6:]}")
        street = _STREETS[int(rng.integers(len(_STREETS)))]
        suffix = _SUFFIXES[int(rng.integers(len(_SUFFIXES)))]
        out["address"].append(f"{int(rng.integers(1, 400))} {street} {suffix}")
        out["city"].append(STORES[home[i]][2])
        out["country"].append(country)
    return out


def generate(seed: int = 0) -> Tables:
    """The raw tables for ``seed`` (the traps included; see the module docstring)."""
    rng = np.random.default_rng([seed, 17])
    rates = _rates(rng)
    customers = _customers(rng)

    cat = rng.integers(len(CATEGORIES), size=N_PRODUCTS)
    cat[rng.random(N_PRODUCTS) < 0.08] = -1  # products without a category (NULL)
    price_usd = np.round(rng.lognormal(3.2, 0.8, size=N_PRODUCTS).clip(3, 900), 2)

    # Orders: chronological ids, a store by weight, a customer by activity, 4 % guests.
    ts = np.sort(rng.integers(0, DATA_END_DAY * 86_400, size=N_ORDERS))
    weights = np.asarray([s[7] for s in STORES])
    store = rng.choice(len(STORES), size=N_ORDERS, p=weights / weights.sum())
    activity = rng.lognormal(0.0, 1.0, size=N_CUSTOMERS)
    customer = rng.choice(N_CUSTOMERS, size=N_ORDERS, p=activity / activity.sum())
    customer[rng.random(N_ORDERS) < 0.04] = -1
    voided = rng.random(N_ORDERS) < 0.03
    store_cur = np.asarray([CURRENCIES.index(s[5]) for s in STORES])
    rate_now = rates[store_cur[store], ts // 86_400]  # (n_orders,) may be NaN in the gap
    rate_now = np.where(np.isnan(rate_now), rates[store_cur[store], 0], rate_now)

    # Order lines: 1-4 per order; a product sold only after its category launched.
    n_lines = rng.integers(1, 5, size=N_ORDERS)
    l_order = np.repeat(np.arange(N_ORDERS), n_lines)
    l_no = np.concatenate([np.arange(1, k + 1) for k in n_lines])
    l_prod = rng.integers(N_PRODUCTS, size=len(l_order))
    launched = np.asarray([_LAUNCH_DAY.get(CATEGORIES[c], 0) if c >= 0 else 0 for c in cat])
    late = launched[l_prod] > ts[l_order] // 86_400
    early_products = np.flatnonzero(launched == 0)
    l_prod[late] = rng.choice(early_products, size=int(late.sum()))
    l_qty = rng.integers(1, 4, size=len(l_order))
    local_price = price_usd[l_prod] / rate_now[l_order]
    jpy = store_cur[store[l_order]] == CURRENCIES.index("JPY")
    l_price = np.where(jpy, np.round(local_price), np.round(local_price, 2))

    # Refunds: separate rows, line-level, for 6 % of lines of completed orders; some lines
    # are refunded in two parts.
    ok_line = ~voided[l_order]
    refunded = np.flatnonzero(ok_line & (rng.random(len(l_order)) < 0.06))
    r_order, r_line, r_amount, r_ts = [], [], [], []
    for j in refunded:
        full = l_qty[j] * l_price[j]
        share = rng.choice((1.0, 0.5, 0.3))
        parts = (share,) if rng.random() < 0.8 else (share / 2, share / 2)
        t = ts[l_order[j]] + int(rng.integers(1, 40)) * 86_400 + int(rng.integers(0, 86_400))
        for k, p in enumerate(parts):
            amt = round(full * p) if jpy[j] else round(full * p, 2)
            r_order.append(l_order[j])
            r_line.append(l_no[j])
            r_amount.append(amt)
            r_ts.append(min(t + k * 3_600, DATA_END_DAY * 86_400 - 1))

    # The loader inserted 2 % of lines twice: same order and line_no, a new line_id.
    dup = np.flatnonzero(rng.random(len(l_order)) < 0.02)
    order = np.concatenate([l_order, l_order[dup]])
    lines = {
        "order": order,
        "line_no": np.concatenate([l_no, l_no[dup]]),
        "product": np.concatenate([l_prod, l_prod[dup]]),
        "qty": np.concatenate([l_qty, l_qty[dup]]),
        "price": np.concatenate([l_price, l_price[dup]]),
        "dup": np.concatenate([np.zeros(len(l_order), bool), np.ones(len(dup), bool)]),
    }
    # Line ids in load order: the copies sit next to their original (stable sort by order).
    perm = np.argsort(lines["order"], kind="stable")
    lines = {k: v[perm] for k, v in lines.items()}
    return Tables(
        seed=seed,
        customers=customers,
        products={"category": cat, "price_usd": price_usd},
        orders={"customer": customer, "store": store, "ts": ts, "voided": voided},
        lines=lines,
        refunds={
            "order": np.asarray(r_order, dtype=np.int64),
            "line_no": np.asarray(r_line, dtype=np.int64),
            "amount": np.asarray(r_amount, dtype=float),
            "ts": np.asarray(r_ts, dtype=np.int64),
        },
        rates=rates,
    )


def add_order(
    t: Tables, *, customer: int, store: int, ts: int, product: int, qty: int, price: float
) -> int:
    """Append one completed order with one line (used to plant exact ties); its index."""
    o = t.orders
    for key, val in (("customer", customer), ("store", store), ("ts", ts), ("voided", False)):
        o[key] = np.append(o[key], val)
    idx = len(o["ts"]) - 1
    ln = t.lines
    values: tuple[tuple[str, Any], ...] = (
        ("order", idx),
        ("line_no", 1),
        ("product", product),
        ("qty", qty),
        ("price", price),
        ("dup", False),
    )
    for key, val in values:
        ln[key] = np.append(ln[key], val)
    return idx
