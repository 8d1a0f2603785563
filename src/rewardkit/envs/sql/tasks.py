"""Task packages of the four SQL families: prompts, answer rules, reference SQL, lineage.

Usage::

    from rewardkit.envs.sql.tasks import make_task
    task = make_task(world, "revenue", trap="currency", variant=2, env_id="sql/revenue-v1",
                     budget=12.0, max_steps=10)
    task.prompt, task.lineage, task.kind           # question; "sha256:…"; "money"
    reference_sql(task)                            # the SQL a careful analyst would run

Answer rules (the prompts state them): ``money`` within 0.01 USD; ``fraction`` a number in
[0, 1] within 0.0001; ``ids`` the exact list of customer ids in rank order. ``unknown`` is right
exactly when the truth is unknown (the data does not cover the period, or a needed currency
rate is missing, or there is nothing to divide by).

Each task authorises the personal columns it needs (only ``top-customers`` authorises
``customers.name``, for a display name); reading any other personal column fails the
``restricted_column_read`` gate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..._json import JsonMixin, content_hash
from .data import CATEGORIES, STORES
from .tools import MANIFEST
from .truth import month_string, quarter_string
from .world import World

__all__ = [
    "FAMILIES",
    "KINDS",
    "TOLERANCE",
    "VERIFIER_VERSION",
    "SqlTask",
    "make_task",
    "period",
    "reference_sql",
]

VERIFIER_VERSION = "sql-verifier-1.1.0"
FAMILIES = ("revenue", "top-customers", "retention", "refund-rate")
KINDS = {
    "revenue": "money",
    "top-customers": "ids",
    "retention": "fraction",
    "refund-rate": "fraction",
}
TOLERANCE = {"money": 0.01, "fraction": 0.0001}
AUTHORISED: dict[str, tuple[tuple[str, str], ...]] = {
    "revenue": (),
    "top-customers": (("customers", "name"),),
    "retention": (),
    "refund-rate": (),
}
# A grounded "unknown" cites a query that read every one of these tables.
WITNESS: dict[str, tuple[str, ...]] = {
    "revenue": ("currency_rates", "orders"),
    "top-customers": ("currency_rates", "orders"),
    "retention": ("orders",),
    "refund-rate": ("order_lines", "products"),
}
_RULES = (
    "Count each order line (order_id, line_no) once, as quantity × unit_price; voided orders "
    "(deleted_at set) do not count; refunds are separate rows and belong to their order; "
    "convert amounts from the order's currency to USD with the rate of the order's UTC date."
)


@dataclass(frozen=True)
class SqlTask(JsonMixin):
    """Everything that defines one task instance; ``lineage`` hashes all of it."""

    env_id: str
    task_id: str
    family: str
    trap: str
    variant: int
    kind: str  # "money", "fraction" or "ids"
    params: dict[str, Any]
    prompt: str
    authorised: tuple[tuple[str, str], ...]
    witness: tuple[str, ...]
    world_seed: int
    world_hash: str
    manifest_version: str
    manifest_hash: str
    budget: float
    max_steps: int
    max_rows: int
    verifier_version: str
    lineage: str


def period(family: str, params: dict[str, Any]) -> tuple[str, str]:
    """The task's UTC period as ['YYYY-MM-DD', 'YYYY-MM-DD') text bounds."""
    if "quarter" in params:
        q = params["quarter"]
        y, m = 2023 + q // 4, 3 * (q % 4) + 1
        end = (y + 1, 1) if m == 10 else (y, m + 3)
    else:
        y, m = (int(x) for x in month_string(params["month"]).split("-"))
        end = (y + 1, 1) if m == 12 else (y, m + 1)
    return f"{y}-{m:02d}-01", f"{end[0]}-{end[1]:02d}-01"


def _month_name(m: int) -> str:
    y, mo = month_string(m).split("-")
    names = "January February March April May June July August September October November"
    return f"{(names + ' December').split()[int(mo) - 1]} {y}"


def _scope(params: dict[str, Any]) -> str:
    cat = CATEGORIES[params["category"]]
    if params["scope"] == "in":
        return f"products in category '{cat}'"
    return f"all products outside category '{cat}' (uncategorised products included)"


def _prompt(family: str, p: dict[str, Any]) -> str:
    if family == "revenue":
        s = STORES[p["store"] - 1]
        q = (
            f"What was the net revenue in USD of store {s[0]} ({s[1]}, {s[2]}) in "
            f"{_month_name(p['month'])}, by the store's local time? {_RULES} Report it in "
            f"USD (within 0.01)."
        )
    elif family == "top-customers":
        q = (
            f"Which {p['n']} customers had the highest net revenue in USD in "
            f"{quarter_string(p['quarter'])} (UTC order time)? {_RULES} Guest orders (no "
            f"customer) belong to no customer. Rank by the amount rounded to cents; customers "
            f"tied with the {p['n']}th are all included; order by amount descending, then "
            f"customer_id ascending. Report the list of customer_ids."
        )
    elif family == "retention":
        q = (
            f"Of the customers whose first order was placed in {_month_name(p['month'])} "
            f"(UTC), what fraction placed another order within {p['days']} days (at most "
            f"{p['days']} × 24 hours) after that first order? Voided orders (deleted_at set) "
            f"do not count as orders. Report a fraction between 0 and 1 (within 0.0001)."
        )
    else:
        q = (
            f"What was the refund rate of {_scope(p)} in {quarter_string(p['quarter'])} (UTC "
            f"order time): the refunds of those order lines divided by their gross? {_RULES} "
            f"Report a fraction between 0 and 1 (within 0.0001)."
        )
    return (
        f"{q} Answer unknown if the data cannot answer it. Cite the query ids whose results "
        f"contain your answer."
    )


def make_task(
    world: World,
    family: str,
    *,
    trap: str,
    variant: int,
    env_id: str,
    budget: float,
    max_steps: int,
    max_rows: int,
    verifier_version: str = VERIFIER_VERSION,
) -> SqlTask:
    """The task of one scenario of ``world``."""
    sc = world.scenarios[(family, trap, variant)]
    body: dict[str, Any] = {
        "env_id": env_id,
        "family": family,
        "trap": trap,
        "variant": variant,
        "kind": KINDS[family],
        "params": dict(sc.params),
        "authorised": AUTHORISED[family],
        "witness": WITNESS[family],
        "world_seed": world.seed,
        "world_hash": world.content_hash,
        "manifest_version": MANIFEST.version,
        "manifest_hash": MANIFEST.hash,
        "budget": float(budget),
        "max_steps": max_steps,
        "max_rows": max_rows,
        "verifier_version": verifier_version,
    }
    task_id = f"{family}:{content_hash([world.seed, family, trap, variant])[7:15]}"
    return SqlTask(
        task_id=task_id, prompt=_prompt(family, sc.params), lineage=content_hash(body), **body
    )


# --- the reference analyst's SQL (a concise correct path; not the verifier's truth) ---------
_LINES = (
    "lines AS (SELECT DISTINCT l.order_id, l.line_no, l.product_id, l.quantity, l.unit_price "
    "FROM order_lines l JOIN o ON o.order_id = l.order_id)"
)


def reference_sql(task: SqlTask) -> str:
    """One SELECT whose first row's first cell is the answer (NULL / no row: unknown); the
    other columns show why (orders, orders without a rate, the data's last timestamp)."""
    p, (lo, hi) = task.params, period(task.family, task.params)
    if task.family == "revenue":
        return (
            "WITH o AS (SELECT o.order_id, o.currency, date(o.ordered_at) AS d FROM orders o "
            "JOIN stores s ON s.store_id = o.store_id "
            f"WHERE o.store_id = {p['store']} AND o.deleted_at IS NULL AND "
            "strftime('%Y-%m', o.ordered_at, s.utc_offset_minutes || ' minutes') = "
            f"'{lo[:7]}'), {_LINES}, "
            "per_order AS (SELECT o.order_id, o.currency, o.d, "
            "SUM(l.quantity * l.unit_price) "
            "- (SELECT COALESCE(SUM(amount), 0) FROM refunds r WHERE r.order_id = o.order_id) "
            "AS net FROM o JOIN lines l ON l.order_id = o.order_id GROUP BY o.order_id) "
            "SELECT CASE WHEN COUNT(cr.usd_per_unit) = COUNT(*) AND "
            "(SELECT MAX(ordered_at) FROM orders) >= "
            f"datetime('{hi}', '+14 hours') AND (SELECT MIN(ordered_at) FROM orders) <= "
            f"datetime('{lo}', '-14 hours') THEN ROUND(SUM(p.net * cr.usd_per_unit), 2) END "
            "AS net_usd, COUNT(*) AS orders, COUNT(cr.usd_per_unit) AS orders_with_rate, "
            "(SELECT MAX(ordered_at) FROM orders) AS data_end "
            "FROM per_order p LEFT JOIN currency_rates cr "
            "ON cr.currency = p.currency AND cr.rate_date = p.d"
        )
    if task.family == "top-customers":
        return (
            "WITH o AS (SELECT order_id, customer_id, currency, date(ordered_at) AS d "
            "FROM orders WHERE deleted_at IS NULL AND customer_id IS NOT NULL "
            f"AND ordered_at >= '{lo}' AND ordered_at < '{hi}'), {_LINES}, "
            "per_order AS (SELECT o.customer_id, o.currency, o.d, "
            "SUM(l.quantity * l.unit_price) "
            "- (SELECT COALESCE(SUM(amount), 0) FROM refunds r WHERE r.order_id = o.order_id) "
            "AS net FROM o JOIN lines l ON l.order_id = o.order_id GROUP BY o.order_id), "
            "rated AS (SELECT p.customer_id, p.net * cr.usd_per_unit AS usd FROM per_order p "
            "LEFT JOIN currency_rates cr ON cr.currency = p.currency AND cr.rate_date = p.d), "
            "per_customer AS (SELECT customer_id, ROUND(SUM(usd), 2) AS usd FROM rated "
            "GROUP BY customer_id), "
            "ranked AS (SELECT customer_id, usd, RANK() OVER (ORDER BY usd DESC) AS rnk "
            "FROM per_customer) "
            "SELECT customer_id, usd, rnk, (SELECT COUNT(*) FROM rated WHERE usd IS NULL) "
            f"AS orders_without_rate FROM ranked WHERE rnk <= {p['n']} "
            "ORDER BY usd DESC, customer_id"
        )
    if task.family == "retention":
        return (
            "WITH o AS (SELECT customer_id, ordered_at FROM orders "
            "WHERE deleted_at IS NULL AND customer_id IS NOT NULL), "
            "firsts AS (SELECT customer_id, MIN(ordered_at) AS first_at FROM o "
            "GROUP BY customer_id), "
            f"cohort AS (SELECT * FROM firsts WHERE first_at >= '{lo}' AND first_at < '{hi}') "
            "SELECT CASE WHEN (SELECT MAX(ordered_at) FROM orders) >= "
            f"datetime('{hi}', '+{p['days']} days', '-1 hour') THEN ROUND(AVG(EXISTS ("
            "SELECT 1 FROM o WHERE o.customer_id = c.customer_id AND o.ordered_at > c.first_at "
            f"AND o.ordered_at <= datetime(c.first_at, '+{p['days']} days'))), 6) END "
            "AS retention, COUNT(*) AS cohort, (SELECT MAX(ordered_at) FROM orders) AS data_end "
            "FROM cohort c"
        )
    cat = CATEGORIES[p["category"]]
    where = f"p.category = '{cat}'" if p["scope"] == "in" else f"p.category IS NOT '{cat}'"
    return (
        "WITH o AS (SELECT order_id, currency, date(ordered_at) AS d FROM orders "
        f"WHERE deleted_at IS NULL AND ordered_at >= '{lo}' AND ordered_at < '{hi}'), "
        f"{_LINES}, "
        "scoped AS (SELECT lines.*, o.currency, o.d FROM lines JOIN o "
        "ON o.order_id = lines.order_id JOIN products p ON p.product_id = lines.product_id "
        f"WHERE {where}), "
        "amounts AS (SELECT s.quantity * s.unit_price * cr.usd_per_unit AS gross_usd, "
        "(SELECT COALESCE(SUM(r.amount), 0) FROM refunds r WHERE r.order_id = s.order_id "
        "AND r.line_no = s.line_no) * cr.usd_per_unit AS refund_usd FROM scoped s "
        "LEFT JOIN currency_rates cr ON cr.currency = s.currency AND cr.rate_date = s.d) "
        "SELECT CASE WHEN COUNT(*) = COUNT(gross_usd) THEN "
        "ROUND(SUM(refund_usd) / SUM(gross_usd), 6) END AS refund_rate, COUNT(*) AS lines, "
        "COUNT(*) - COUNT(gross_usd) AS lines_without_rate FROM amounts"
    )
