"""The hidden verifier's truth: every task's answer computed from the generator's arrays (not
from SQL), optionally with one trap deliberately mishandled.

Usage::

    from rewardkit.envs.sql.truth import Facts
    f = Facts(tables)
    f.revenue(store=3, month=14)                          # USD, or None (unknown)
    f.revenue(store=3, month=14, mishandle="refunds")     # what ignoring refunds gives
    f.top_customers(quarter=2, n=5)                       # [customer_id, ...] or None

``mishandle`` names the trap a naive analysis falls into; the scenario picker keeps only tasks
where it changes the answer (every trap decisive). The held-out verifier recomputes the same
answers with its own SQL on the database, so this module and ``heldout`` check each other.

Definitions (the task prompts state them):
- money is converted to USD with the rate of the order's UTC date (refunds at their order's
  rate); a line is (order_id, line_no), counted once; voided orders (``deleted_at`` set) do
  not count; refunds belong to their order's period;
- ``revenue``: net (lines − refunds) of one store in one month of the store's local time;
  unknown when a needed rate is missing or the month is not covered by the data;
- ``top_customers``: the N customers (guests excluded) with the highest net revenue in a UTC
  quarter, ranked by the amount rounded to cents, everyone tied with the N-th included, ties
  by customer_id; unknown when the quarter is not covered or a rate is missing;
- ``retention``: of the customers whose first order falls in a UTC month, the fraction with
  another order at most D × 24 h after that first order; unknown when the window passes the
  end of the data;
- ``refund_rate``: refunds / gross of the lines of one category (or of every product outside
  it, uncategorised ones included) in a UTC quarter; unknown when there is no gross.
"""

from __future__ import annotations

from functools import cached_property, lru_cache

import numpy as np

from .data import CURRENCIES, DATA_END_DAY, EPOCH, STORES, Tables

__all__ = ["N_MONTHS", "N_QUARTERS", "Facts", "month_string", "quarter_string"]

N_MONTHS = 30  # months covered by the data: 2023-01 … 2025-06 (index 0 … 29)
N_QUARTERS = 10  # 2023Q1 … 2025Q2
_OFFSET_S = np.asarray([s[6] * 60 for s in STORES])  # (S,) local − UTC in seconds
_STORE_CUR = np.asarray([CURRENCIES.index(s[5]) for s in STORES])
_EPOCH_M = EPOCH.astype("datetime64[M]")


def month_string(m: int) -> str:
    return str(_EPOCH_M + np.timedelta64(int(m), "M"))


def quarter_string(q: int) -> str:
    return f"{2023 + q // 4}-Q{q % 4 + 1}"


def _month_of(seconds: np.ndarray) -> np.ndarray:
    stamps = (EPOCH + seconds.astype("timedelta64[s]")).astype("datetime64[M]")
    return (stamps - _EPOCH_M).astype(np.int64)


@lru_cache(maxsize=256)
def _month_start_s(m: int) -> int:
    day = (_EPOCH_M + np.timedelta64(m, "M")).astype("datetime64[D]") - EPOCH
    return int(day.astype(np.int64)) * 86_400


class Facts:
    """Answers of every task family over one set of tables (see the module docstring)."""

    def __init__(self, t: Tables) -> None:
        self.t = t
        o = t.orders
        self.n_customers = len(t.customers["name"])
        self.day = o["ts"] // 86_400
        self.utc_month = _month_of(o["ts"])
        self.local_month = _month_of(o["ts"] + _OFFSET_S[o["store"]])
        self.cur = _STORE_CUR[o["store"]]
        self.rate = t.rates[self.cur, np.minimum(self.day, DATA_END_DAY - 1)]  # NaN = missing
        ln = t.lines
        self.line_native = ln["qty"] * ln["price"]  # (n_lines,) in the order's currency
        r = t.refunds
        self.refund_native = r["amount"]

    # --- shared pieces ------------------------------------------------------------------------
    def _money(self, mishandle: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per line and per refund: the amount to add (USD or native) and the order mask."""
        cache = self.__dict__.setdefault("_mon", {})
        if mishandle not in cache:
            cache[mishandle] = self._money_now(mishandle)
        out: tuple[np.ndarray, np.ndarray, np.ndarray] = cache[mishandle]
        return out

    def _money_now(self, mishandle: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rate = np.ones_like(self.rate) if mishandle == "currency" else self.rate
        ln, r = self.t.lines, self.t.refunds
        keep_order = (
            np.ones(len(rate), bool) if mishandle == "soft_deleted" else ~self.t.orders["voided"]
        )
        line_ok = keep_order[ln["order"]] & (True if mishandle == "duplicate_lines" else ~ln["dup"])
        line_usd = np.where(line_ok, self.line_native * rate[ln["order"]], 0.0)
        ref_usd = self.refund_native * rate[r["order"]]
        ref_ok = keep_order[r["order"]]
        if mishandle == "refunds":
            ref_ok = np.zeros(len(ref_usd), bool)
        ref_usd = np.where(ref_ok, ref_usd, 0.0)
        return line_usd, ref_usd, keep_order

    # --- revenue ------------------------------------------------------------------------------
    def revenue_table(self, mishandle: str | None = None) -> np.ndarray:
        """(S, N_MONTHS + 2) net USD per store and local month; NaN where unknown."""
        S, M = len(STORES), N_MONTHS + 2
        line_usd, ref_usd, _ = self._money(mishandle)
        o, ln, r = self.t.orders, self.t.lines, self.t.refunds
        month = self.utc_month if mishandle == "timezone" else self.local_month
        key = o["store"] * M + np.clip(month, 0, M - 1)
        ok_key = (month >= 0) & (month < M)
        missing = np.isnan(line_usd) & ok_key[ln["order"]]
        if mishandle == "unanswerable":  # missing rates read as 0 (an inner join drops them)
            line_usd = np.nan_to_num(line_usd)
            ref_usd = np.nan_to_num(ref_usd)
        net = np.bincount(key[ln["order"]], np.where(ok_key[ln["order"]], line_usd, 0.0), S * M)
        net -= np.bincount(key[r["order"]], np.where(ok_key[r["order"]], ref_usd, 0.0), S * M)
        table = net.reshape(S, M)
        if mishandle != "unanswerable":
            bad = np.bincount(key[ln["order"]], missing.astype(float), S * M).reshape(S, M)
            table[bad > 0] = np.nan
            # A local month must lie inside the data (2023-01-01 … 2025-06-30 UTC).
            for s in range(S):
                for m in range(M):
                    lo = _month_start_s(m) - _OFFSET_S[s]
                    hi = _month_start_s(m + 1) - _OFFSET_S[s]
                    if lo < 0 or hi > DATA_END_DAY * 86_400:
                        table[s, m] = np.nan
        return table

    def revenue(self, store: int, month: int, mishandle: str | None = None) -> float | None:
        x = self._revenue_cached(mishandle)[store - 1, month]
        return None if np.isnan(x) else float(x)

    def _revenue_cached(self, mishandle: str | None) -> np.ndarray:
        cache = self.__dict__.setdefault("_rev", {})
        if mishandle not in cache:
            cache[mishandle] = self.revenue_table(mishandle)
        out: np.ndarray = cache[mishandle]
        return out

    # --- top customers ------------------------------------------------------------------------
    def _customer_quarter(self, mishandle: str | None) -> tuple[np.ndarray, np.ndarray]:
        """(C + 1, Q) net USD per customer (row C = guests) and UTC quarter; (C + 1, Q) counts
        of orders that count; plus missing-rate flags per quarter in the last call."""
        C, Q = self.n_customers + 1, N_QUARTERS + 2
        line_usd, ref_usd, keep = self._money(mishandle)
        o, ln, r = self.t.orders, self.t.lines, self.t.refunds
        cust = np.where(o["customer"] < 0, C - 1, o["customer"])
        q = np.clip(self.utc_month // 3, 0, Q - 1)
        key = cust * Q + q
        net = np.bincount(key[ln["order"]], np.nan_to_num(line_usd), C * Q)
        net -= np.bincount(key[r["order"]], np.nan_to_num(ref_usd), C * Q)
        n = np.bincount(key, keep.astype(float), C * Q)
        return net.reshape(C, Q), n.reshape(C, Q)

    @cached_property
    def _quarter_missing(self) -> np.ndarray:
        """(Q,) True when a counted order of the quarter has no rate."""
        Q = N_QUARTERS + 2
        q = np.clip(self.utc_month // 3, 0, Q - 1)
        bad = np.isnan(self.rate) & ~self.t.orders["voided"]
        return np.bincount(q, bad.astype(float), Q) > 0

    def top_customers(
        self, quarter: int, n: int, mishandle: str | None = None
    ) -> list[int | None] | None:
        """Customer ids (None = the guests' NULL group, only when mishandled)."""
        if mishandle != "unanswerable" and (
            quarter >= N_QUARTERS or self._quarter_missing[quarter]
        ):
            return None
        cache = self.__dict__.setdefault("_cq", {})
        if mishandle not in cache:
            cache[mishandle] = self._customer_quarter(mishandle)
        net, count = cache[mishandle]
        rows = np.flatnonzero(count[:, quarter] > 0)
        if mishandle != "null_group":
            rows = rows[rows < self.n_customers]
        cents = np.round(net[rows, quarter] * 100).astype(np.int64)
        order = np.lexsort((rows, -cents))  # by cents desc, then customer index asc
        rows, cents = rows[order], cents[order]
        if len(rows) <= n:
            cut = len(rows)
        elif mishandle == "ties":
            cut = n
        else:
            cut = n
            while cut < len(rows) and cents[cut] == cents[n - 1]:
                cut += 1
        return [None if i == self.n_customers else int(i) + 1 for i in rows[:cut]]

    def customer_cents(self, quarter: int) -> tuple[np.ndarray, np.ndarray]:
        """Customer indices with an order in ``quarter`` and their net cents, best first."""
        net, count = self._customer_quarter(None)
        rows = np.flatnonzero(count[: self.n_customers, quarter] > 0)
        cents = np.round(net[rows, quarter] * 100).astype(np.int64)
        order = np.lexsort((rows, -cents))
        return rows[order], cents[order]

    # --- retention ----------------------------------------------------------------------------
    def _ordered(self, with_voided: bool) -> tuple[np.ndarray, ...]:
        """Customers' orders by customer then time: customer, ts, UTC month, the next order's
        ts of the same customer (−1: none), first-order flag (computed once)."""
        cache = self.__dict__.setdefault("_ord", {})
        if with_voided not in cache:
            o = self.t.orders
            keep = (o["customer"] >= 0) & (True if with_voided else ~o["voided"])
            idx = np.flatnonzero(keep)
            idx = idx[np.lexsort((o["ts"][idx], o["customer"][idx]))]
            cust, ts = o["customer"][idx], o["ts"][idx]
            first = np.r_[True, cust[1:] != cust[:-1]]
            same_next = np.r_[cust[1:] == cust[:-1], False]
            next_ts = np.where(same_next, np.r_[ts[1:], 0], -1)
            cache[with_voided] = (cust, ts, _month_of(ts), next_ts, first)
        out: tuple[np.ndarray, ...] = cache[with_voided]
        return out

    def retention(self, month: int, days: int, mishandle: str | None = None) -> float | None:
        if mishandle != "unanswerable" and (
            _month_start_s(month + 1) + days * 86_400 > DATA_END_DAY * 86_400
        ):
            return None
        cust, ts, month_of, next_ts, first = self._ordered(mishandle == "soft_deleted")
        if mishandle == "first_order":  # anchor: a customer's first order *in* the month
            in_m = month_of == month
            anchor = in_m & np.r_[True, (cust[1:] != cust[:-1]) | (month_of[:-1] != month)]
        else:
            anchor = first & (month_of == month)
        if not anchor.any():
            return None
        a_ts, a_next = ts[anchor], next_ts[anchor]
        if mishandle == "date_boundary":  # calendar days instead of D × 24 h
            ok = (a_next >= 0) & (a_next // 86_400 <= a_ts // 86_400 + days)
        else:
            ok = (a_next >= 0) & (a_next <= a_ts + days * 86_400)
        return float(ok.mean())

    @cached_property
    def _line_keys(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per line its category (−1 NULL) and (order, line_no) key; per refund its key."""
        ln, r = self.t.lines, self.t.refunds
        return (
            self.t.products["category"][ln["product"]],
            ln["order"] * 16 + ln["line_no"],
            r["order"] * 16 + r["line_no"],
        )

    # --- refund rate --------------------------------------------------------------------------
    def refund_rate(
        self, quarter: int, category: int, scope: str, mishandle: str | None = None
    ) -> float | None:
        """``scope`` "in": products of ``category``; "outside": every other product, those
        without a category included."""
        if mishandle != "unanswerable" and (
            quarter >= N_QUARTERS or self._quarter_missing[quarter]
        ):
            return None
        line_usd, _, keep = self._money(mishandle)
        ln, r = self.t.lines, self.t.refunds
        cat, line_key, ref_key = self._line_keys
        q_line = self.utc_month[ln["order"]] // 3 == quarter
        if scope == "in":
            in_scope = cat == category
        elif mishandle == "null_category":  # category <> 'X' drops the NULLs
            in_scope = (cat != category) & (cat >= 0)
        else:
            in_scope = cat != category
        sel = q_line & in_scope & (line_usd != 0)
        gross = float(np.nansum(line_usd[sel]))
        # Refunds of the selected lines: matched on (order, line_no); a join against lines
        # with their duplicates counts a refund once per copy.
        chosen, copies = np.unique(line_key[sel], return_counts=True)
        rate = np.ones_like(self.rate) if mishandle == "currency" else self.rate
        refunds = 0.0
        if len(chosen):
            pos = np.minimum(np.searchsorted(chosen, ref_key), len(chosen) - 1)
            ok = (chosen[pos] == ref_key) & keep[r["order"]]
            mult = copies[pos] if mishandle == "duplicate_lines" else 1
            amounts = np.nan_to_num(self.refund_native * rate[r["order"]]) * mult
            refunds = float(np.sum(np.where(ok, amounts, 0.0)))
        if gross == 0.0:
            return 0.0 if mishandle == "unanswerable" else None
        return refunds / gross
