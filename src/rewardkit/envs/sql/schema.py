"""The retail database's schema: tables, the data dictionary, the view, the personal columns.

Usage::

    from rewardkit.envs.sql.schema import SCHEMA, PERSONAL_COLUMNS
    SCHEMA["orders"]              # ((column, SQL type, description), ...)
    ("customers", "email") in PERSONAL_COLUMNS

``describe_table`` shows the descriptions and the personal flags to the agent; the
``restricted_column_read`` gate reads ``PERSONAL_COLUMNS``.
"""

from __future__ import annotations

__all__ = ["INDEXES", "PERSONAL_COLUMNS", "SCHEMA", "VIEWS"]

# table → ((column, SQL type, description), ...); descriptions are the data dictionary the
# agent reads through describe_table.
SCHEMA: dict[str, tuple[tuple[str, str, str], ...]] = {
    "stores": (
        ("store_id", "INTEGER PRIMARY KEY", "store id"),
        ("name", "TEXT NOT NULL", "store name"),
        ("city", "TEXT NOT NULL", "city"),
        ("country", "TEXT NOT NULL", "ISO country code"),
        ("region", "TEXT", "sales region; NULL when unassigned"),
        ("currency", "TEXT NOT NULL", "currency of the store's prices and refunds"),
        ("utc_offset_minutes", "INTEGER NOT NULL", "local time − UTC, minutes (no DST)"),
    ),
    "customers": (
        ("customer_id", "INTEGER PRIMARY KEY", "customer id"),
        ("name", "TEXT NOT NULL", "full name (personal data)"),
        ("email", "TEXT NOT NULL", "email address (personal data)"),
        ("phone", "TEXT NOT NULL", "phone number (personal data)"),
        ("address", "TEXT NOT NULL", "street address (personal data)"),
        ("city", "TEXT NOT NULL", "home city"),
        ("country", "TEXT NOT NULL", "home country"),
    ),
    "products": (
        ("product_id", "INTEGER PRIMARY KEY", "product id"),
        ("sku", "TEXT NOT NULL", "stock-keeping unit"),
        ("category", "TEXT", "product category; NULL when uncategorised"),
        ("list_price_usd", "REAL NOT NULL", "list price in USD"),
    ),
    "orders": (
        ("order_id", "INTEGER PRIMARY KEY", "order id"),
        ("customer_id", "INTEGER", "customer; NULL for a guest checkout"),
        ("store_id", "INTEGER NOT NULL", "store"),
        ("ordered_at", "TEXT NOT NULL", "UTC timestamp 'YYYY-MM-DD HH:MM:SS'"),
        ("currency", "TEXT NOT NULL", "currency of the order's prices"),
        ("deleted_at", "TEXT", "set when the order was voided; voided orders are not sales"),
    ),
    "order_lines": (
        ("line_id", "INTEGER PRIMARY KEY", "row id of the load"),
        ("order_id", "INTEGER NOT NULL", "order"),
        ("line_no", "INTEGER NOT NULL", "line number; (order_id, line_no) identifies a line"),
        ("product_id", "INTEGER NOT NULL", "product"),
        ("quantity", "INTEGER NOT NULL", "units"),
        ("unit_price", "REAL NOT NULL", "price per unit in the order's currency"),
    ),
    "refunds": (
        ("refund_id", "INTEGER PRIMARY KEY", "refund id"),
        ("order_id", "INTEGER NOT NULL", "order"),
        ("line_no", "INTEGER NOT NULL", "refunded line of the order"),
        ("refunded_at", "TEXT NOT NULL", "UTC timestamp"),
        ("amount", "REAL NOT NULL", "refunded amount in the order's currency"),
    ),
    "currency_rates": (
        ("currency", "TEXT NOT NULL", "currency code"),
        ("rate_date", "TEXT NOT NULL", "UTC date 'YYYY-MM-DD'"),
        ("usd_per_unit", "REAL NOT NULL", "USD per unit of the currency on that date"),
    ),
}
VIEWS: dict[str, tuple[str, str]] = {
    "customer_orders": (
        "SELECT o.order_id, o.customer_id, c.name AS customer_name, c.email AS customer_email, "
        "o.store_id, o.ordered_at, o.deleted_at FROM orders o JOIN customers c "
        "ON c.customer_id = o.customer_id",
        "orders with the customer's name and email (personal data)",
    ),
}
PERSONAL_COLUMNS: frozenset[tuple[str, str]] = frozenset(
    ("customers", c) for c in ("name", "email", "phone", "address")
)
INDEXES = (
    "CREATE INDEX orders_store_time ON orders(store_id, ordered_at)",
    "CREATE INDEX orders_customer_time ON orders(customer_id, ordered_at)",
    "CREATE INDEX orders_time ON orders(ordered_at)",
    "CREATE INDEX lines_order ON order_lines(order_id, line_no)",
    "CREATE INDEX refunds_order ON refunds(order_id, line_no)",
    "CREATE UNIQUE INDEX rates_key ON currency_rates(currency, rate_date)",
)
