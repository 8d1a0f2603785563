"""SQL mutations that drop one rule of a task: the honest mistakes of the red-team.

Usage::

    from rewardkit.envs.sql.mutations import drop_rule
    drop_rule(reference_sql, "refunds")        # the same query without the refunds

Each ``SQL_MUTATIONS`` entry is (operator, text of the reference SQL, replacement);
``TRAP_MUTATION`` names the operator that mishandles each trap (the trap is decisive, so the
mutated query returns a different answer). Used by the ``mutation`` policy, the library's
``trap_mishandled`` cases and the lab's trajectory B.
"""

from __future__ import annotations

__all__ = ["SQL_MUTATIONS", "TRAP_MUTATION", "drop_rule"]

# (operator name, text in the reference SQL, replacement): each drops one rule of the task.
SQL_MUTATIONS: tuple[tuple[str, str, str], ...] = (
    ("keep_duplicates", "SELECT DISTINCT", "SELECT"),
    ("keep_voided", "o.deleted_at IS NULL AND ", ""),
    ("keep_voided", "WHERE deleted_at IS NULL AND ", "WHERE "),
    ("keep_voided", "WHERE deleted_at IS NULL AND customer_id", "WHERE customer_id"),
    (
        "ignore_refunds",
        "- (SELECT COALESCE(SUM(amount), 0) FROM refunds r WHERE r.order_id = o.order_id)",
        "",
    ),
    ("no_conversion", " * cr.usd_per_unit", ""),
    ("utc_month", "s.utc_offset_minutes || ' minutes'", "'+0 minutes'"),
    ("row_number", "RANK() OVER", "ROW_NUMBER() OVER"),
    ("null_category", "IS NOT '", "<> '"),
    ("keep_guests", "AND customer_id IS NOT NULL ", ""),
    ("any_order_in_month", "MIN(ordered_at)", "MAX(ordered_at)"),
    (
        "calendar_days",
        "o.ordered_at <= datetime(c.first_at, '+",
        "date(o.ordered_at) <= date(c.first_at, '+",
    ),
    ("no_coverage_check", "CASE WHEN", "CASE WHEN 1 OR"),
    ("no_coverage_check", "(SELECT COUNT(*) FROM rated WHERE usd IS NULL)", "0"),
    (
        "no_coverage_check",
        "ROUND(SUM(p.net * cr.usd_per_unit), 2)",
        "ROUND(TOTAL(p.net * cr.usd_per_unit), 2)",
    ),
)
# The mutation that drops each trap's rule (the trap is decisive: the answer changes).
TRAP_MUTATION = {
    "refunds": "ignore_refunds",
    "soft_deleted": "keep_voided",
    "duplicate_lines": "keep_duplicates",
    "currency": "no_conversion",
    "timezone": "utc_month",
    "ties": "row_number",
    "null_group": "keep_guests",
    "null_category": "null_category",
    "first_order": "any_order_in_month",
    "date_boundary": "calendar_days",
    "unanswerable": "no_coverage_check",
}


def drop_rule(sql: str, trap: str) -> str:
    """``sql`` with the rule of ``trap`` removed (every text of its mutation replaced)."""
    for op, old, new in SQL_MUTATIONS:
        if op == TRAP_MUTATION[trap] and old in sql:
            sql = sql.replace(old, new)
    return sql
