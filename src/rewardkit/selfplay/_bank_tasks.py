"""The embedded task bank's definitions: small Python functions, each with a reference
solution, sometimes a correct variant, boundary inputs and a random input generator.

Inputs are argument tuples. A definition is data only; ``bank.py`` turns it into GT tests
(expected values come from running the reference) and candidate programs (mutants).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Gen = Callable[[np.random.Generator], tuple[Any, ...]]


def _ints(rng: np.random.Generator, lo: int = -5, hi: int = 9, n_max: int = 7) -> list[int]:
    return [int(v) for v in rng.integers(lo, hi + 1, size=int(rng.integers(1, n_max + 1)))]


def _word(rng: np.random.Generator, n_max: int = 7, alphabet: str = "abcdeio") -> str:
    return "".join(rng.choice(list(alphabet), size=int(rng.integers(1, n_max + 1))))


def _d(
    task_id: str,
    prompt: str,
    reference: str,
    boundary: tuple[str, ...],
    gen: Gen,
    *,
    variants: tuple[str, ...] = (),
    extra: tuple[tuple[str, str, str], ...] = (),
    gt_inputs: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "prompt": prompt,
        "reference": reference.strip() + "\n",
        "boundary": boundary,
        "gen": gen,
        "variants": tuple(v.strip() + "\n" for v in variants),
        "extra": tuple((name, fam, src.strip() + "\n") for name, fam, src in extra),
        "gt_inputs": gt_inputs,
    }


# CoVer appendix E.4: code #7 rebinds instead of copying. It passes every test whose value does
# not occur in the list and fails the four GT tests where it does: y = 0.5, accepted by any suite
# that only probes the modal "value absent" case.
E4_ALIASING = """
def remove_all(xs, v):
    ys = xs
    for x in list(xs):
        if x == v:
            ys.remove(x)
    return ys, len(xs) - len(ys)
"""

DEFINITIONS: tuple[dict[str, Any], ...] = (
    _d(
        "remove_all",
        "Return (xs without any v, how many were removed); do not modify xs.",
        """
def remove_all(xs, v):
    ys = list(xs)
    for x in xs:
        if x == v:
            ys.remove(x)
    return ys, len(xs) - len(ys)
""",
        ("([], 1)", "([1], 1)", "([2, 2], 2)"),
        lambda r: (_ints(r, 0, 6), int(r.integers(0, 7))),
        extra=(("e4_aliasing", "aliasing", E4_ALIASING),),
        gt_inputs=(
            "([1, 2, 3], 2)",
            "([4, 4, 5], 4)",
            "([7], 7)",
            "([1, 0, 1, 0], 0)",
            "([1, 2, 3], 9)",
            "([], 3)",
            "([5, 6], 1)",
            "([8, 8], 3)",
        ),
    ),
    _d(
        "sorted_with_original",
        "Return (a sorted copy of xs, xs unchanged).",
        """
def sorted_with_original(xs):
    ys = list(xs)
    ys.sort()
    return ys, xs
""",
        ("([],)", "([1],)", "([1, 2, 3],)"),
        lambda r: (_ints(r),),
        variants=("def sorted_with_original(xs):\n    return sorted(xs), xs",),
    ),
    _d(
        "sum_evens",
        "Return the sum of the even numbers in xs.",
        """
def sum_evens(xs):
    total = 0
    for x in xs:
        if x % 2 == 0:
            total += x
    return total
""",
        ("([],)", "([1, 3],)", "([0, -2],)"),
        lambda r: (_ints(r),),
        variants=("def sum_evens(xs):\n    return sum(x for x in xs if x % 2 == 0)",),
    ),
    _d(
        "max_of",
        "Return the largest element of xs, or None when xs is empty.",
        """
def max_of(xs):
    if not xs:
        return None
    best = xs[0]
    for x in xs[1:]:
        if x > best:
            best = x
    return best
""",
        ("([],)", "([-3],)", "([-5, -1, -9],)"),
        lambda r: (_ints(r),),
        variants=("def max_of(xs):\n    return max(xs) if xs else None",),
    ),
    _d(
        "count_greater",
        "Return how many elements of xs are strictly greater than t.",
        """
def count_greater(xs, t):
    n = 0
    for x in xs:
        if x > t:
            n += 1
    return n
""",
        ("([], 0)", "([3, 3, 3], 3)", "([4], 3)"),
        lambda r: (_ints(r, 0, 6), int(r.integers(0, 7))),
    ),
    _d(
        "running_sum",
        "Return the list of prefix sums of xs.",
        """
def running_sum(xs):
    out = []
    total = 0
    for x in xs:
        total += x
        out.append(total)
    return out
""",
        ("([],)", "([5],)", "([1, -1, 1],)"),
        lambda r: (_ints(r),),
    ),
    _d(
        "second_largest",
        "Return the second largest distinct value of xs, or None if there is none.",
        """
def second_largest(xs):
    vals = sorted(set(xs))
    if len(vals) < 2:
        return None
    return vals[len(vals) - 2]
""",
        ("([],)", "([4, 4],)", "([1, 2],)"),
        lambda r: (_ints(r, 0, 5),),
    ),
    _d(
        "is_palindrome",
        "Return True when the string s reads the same backwards.",
        """
def is_palindrome(s):
    n = len(s)
    for i in range(n // 2):
        if s[i] != s[n - 1 - i]:
            return False
    return True
""",
        ("('',)", "('a',)", "('ab',)"),
        lambda r: (
            ((lambda w: w + w[::-1][int(r.integers(0, 2)) :])(_word(r, 4, "abc")),)
            if r.random() < 0.6
            else (_word(r, 5, "ab"),)
        ),
    ),
    _d(
        "fizzbuzz",
        "Return the FizzBuzz strings for 1..n.",
        """
def fizzbuzz(n):
    out = []
    for i in range(1, n + 1):
        if i % 15 == 0:
            out.append('FizzBuzz')
        elif i % 3 == 0:
            out.append('Fizz')
        elif i % 5 == 0:
            out.append('Buzz')
        else:
            out.append(str(i))
    return out
""",
        ("(0,)", "(1,)", "(15,)"),
        lambda r: (int(r.integers(0, 41)),),
    ),
    _d(
        "factorial",
        "Return n! for n >= 0.",
        """
def factorial(n):
    result = 1
    for i in range(2, n + 1):
        result *= i
    return result
""",
        ("(0,)", "(1,)", "(2,)"),
        lambda r: (int(r.integers(0, 30)),),
    ),
    _d(
        "clamp_all",
        "Clamp every element of xs into [lo, hi].",
        """
def clamp_all(xs, lo, hi):
    out = []
    for x in xs:
        if x < lo:
            x = lo
        elif x > hi:
            x = hi
        out.append(x)
    return out
""",
        ("([], 0, 1)", "([0, 5], 0, 5)", "([-1, 6], 0, 5)"),
        lambda r: (_ints(r, -3, 8), 0, 5),
    ),
    _d(
        "index_of",
        "Return the first index of v in xs, or -1.",
        """
def index_of(xs, v):
    for i in range(len(xs)):
        if xs[i] == v:
            return i
    return -1
""",
        ("([], 1)", "([1], 1)", "([2, 1, 1], 1)"),
        lambda r: (_ints(r, 0, 5), int(r.integers(0, 6))),
    ),
    _d(
        "count_vowels",
        "Return the number of vowels (aeiou) in s.",
        """
def count_vowels(s):
    n = 0
    for ch in s:
        if ch in 'aeiou':
            n += 1
    return n
""",
        ("('',)", "('xyz',)", "('aeiou',)"),
        lambda r: (_word(r, 8, "abcdeiouxy"),),
    ),
    _d(
        "pairwise_diffs",
        "Return [xs[i+1] - xs[i] for each adjacent pair].",
        """
def pairwise_diffs(xs):
    out = []
    for i in range(len(xs) - 1):
        out.append(xs[i + 1] - xs[i])
    return out
""",
        ("([],)", "([3],)", "([1, 4],)"),
        lambda r: (_ints(r),),
    ),
    _d(
        "dedupe",
        "Return xs without repeated values, keeping first occurrences in order.",
        """
def dedupe(xs):
    if len(xs) == 0:
        return []
    seen = set()
    out = []
    for x in xs:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out
""",
        ("([],)", "([2, 2],)", "([1, 2, 1],)"),
        lambda r: (_ints(r, 0, 4),),
    ),
    _d(
        "longest_run",
        "Return the length of the longest run of equal adjacent values (0 for empty).",
        """
def longest_run(xs):
    if not xs:
        return 0
    best = 1
    cur = 1
    for i in range(1, len(xs)):
        if xs[i] == xs[i - 1]:
            cur += 1
        else:
            cur = 1
        if cur > best:
            best = cur
    return best
""",
        ("([],)", "([7],)", "([1, 1, 2, 2, 2],)"),
        lambda r: (_ints(r, 0, 2, 8),),
    ),
    _d(
        "rotate_left",
        "Rotate xs left by k positions (k may exceed len(xs)).",
        """
def rotate_left(xs, k):
    if not xs:
        return []
    k = k % len(xs)
    return xs[k:] + xs[:k]
""",
        ("([], 3)", "([1], 5)", "([1, 2, 3], 3)"),
        lambda r: (_ints(r), int(r.integers(0, 9))),
    ),
    _d(
        "prefix_max",
        "Return the running maximum of xs.",
        """
def prefix_max(xs):
    out = []
    for i in range(len(xs)):
        if i == 0 or xs[i] > out[-1]:
            out.append(xs[i])
        else:
            out.append(out[-1])
    return out
""",
        ("([],)", "([-2],)", "([3, 1, 4],)"),
        lambda r: (_ints(r),),
    ),
    _d(
        "count_inversions",
        "Return the number of pairs i < j with xs[i] > xs[j].",
        """
def count_inversions(xs):
    n = 0
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            if xs[i] > xs[j]:
                n += 1
    return n
""",
        ("([],)", "([1, 1],)", "([2, 1],)"),
        lambda r: (_ints(r, 0, 5),),
    ),
    _d(
        "digit_sum",
        "Return the sum of the decimal digits of |n|.",
        """
def digit_sum(n):
    total = 0
    for ch in str(abs(n)):
        total += int(ch)
    return total
""",
        ("(0,)", "(-7,)", "(10,)"),
        lambda r: (int(r.integers(-999, 1000)),),
    ),
    _d(
        "mean_or_zero",
        "Return the arithmetic mean of xs, or 0.0 when xs is empty.",
        """
def mean_or_zero(xs):
    if len(xs) == 0:
        return 0.0
    return sum(xs) / len(xs)
""",
        ("([],)", "([3],)", "([1, 2],)"),
        lambda r: (_ints(r),),
    ),
    _d(
        "gcd_all",
        "Return the gcd of all numbers in xs (0 for empty).",
        """
def gcd_all(xs):
    import math
    g = 0
    for x in xs:
        g = math.gcd(g, x)
    return g
""",
        ("([],)", "([0],)", "([4, 6],)"),
        lambda r: ([int(v) * int(r.integers(1, 4)) for v in _ints(r, 0, 12, 4)],),
    ),
    _d(
        "insert_sorted",
        "Return (xs with v inserted in sorted position, the original length); xs is sorted.",
        """
def insert_sorted(xs, v):
    ys = list(xs)
    ys.append(v)
    ys.sort()
    return ys, len(xs)
""",
        ("([], 1)", "([1], 0)", "([1, 2], 3)"),
        lambda r: (sorted(_ints(r)), int(r.integers(-5, 10))),
    ),
    _d(
        "top_k",
        "Return the k largest elements of xs in descending order ([] for k <= 0).",
        """
def top_k(xs, k):
    if k <= 0:
        return []
    ys = sorted(xs, reverse=True)
    return ys[:k]
""",
        ("([], 2)", "([1, 2], 0)", "([3, 1, 2], 5)"),
        lambda r: (_ints(r), int(r.integers(0, 5))),
    ),
    _d(
        "above_average",
        "Return the elements of xs strictly above their mean ([] for empty).",
        """
def above_average(xs):
    if not xs:
        return []
    avg = sum(xs) / len(xs)
    return [x for x in xs if x > avg]
""",
        ("([],)", "([2, 2],)", "([1, 3],)"),
        lambda r: (_ints(r, 0, 6),),
    ),
    _d(
        "shift_to_zero",
        "Subtract min(xs) from every element ([] for empty).",
        """
def shift_to_zero(xs):
    if not xs:
        return []
    lo = xs[0]
    for x in xs:
        if x < lo:
            lo = x
    return [x - lo for x in xs]
""",
        ("([],)", "([5],)", "([3, -1, 2],)"),
        lambda r: (_ints(r),),
    ),
    _d(
        "transpose",
        "Transpose a rectangular matrix given as a list of rows.",
        """
def transpose(rows):
    if not rows:
        return []
    out = []
    for j in range(len(rows[0])):
        out.append([rows[i][j] for i in range(len(rows))])
    return out
""",
        ("([],)", "([[1]],)", "([[1, 2], [3, 4]],)"),
        lambda r: (
            (lambda n, k: [[int(v) for v in r.integers(0, 9, size=k)] for _ in range(n)])(
                int(r.integers(1, 4)), int(r.integers(1, 4))
            ),
        ),
    ),
    _d(
        "count_pairs_sum",
        "Return how many pairs i < j have xs[i] + xs[j] == t.",
        """
def count_pairs_sum(xs, t):
    n = 0
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            if xs[i] + xs[j] == t:
                n += 1
    return n
""",
        ("([], 0)", "([2], 4)", "([2, 2], 4)"),
        lambda r: (_ints(r, 0, 5), int(r.integers(0, 9))),
    ),
    _d(
        "swap_ends",
        "Return (a copy of xs with first and last swapped, xs unchanged).",
        """
def swap_ends(xs):
    ys = xs[:]
    if len(ys) < 2:
        return ys, xs
    ys[0], ys[-1] = ys[-1], ys[0]
    return ys, xs
""",
        ("([],)", "([1],)", "([1, 2],)"),
        lambda r: (_ints(r),),
    ),
    _d(
        "cumulative_product",
        "Return the running products of xs.",
        """
def cumulative_product(xs):
    out = []
    p = 1
    for x in xs:
        p *= x
        out.append(p)
    return out
""",
        ("([],)", "([0, 5],)", "([-1, -1],)"),
        lambda r: (_ints(r, -3, 4, 5),),
    ),
    _d(
        "last_index",
        "Return the last index of v in xs, or -1.",
        """
def last_index(xs, v):
    found = -1
    for i in range(len(xs)):
        if xs[i] == v:
            found = i
    return found
""",
        ("([], 0)", "([0], 0)", "([0, 0], 0)"),
        lambda r: (_ints(r, 0, 4), int(r.integers(0, 5))),
    ),
    _d(
        "word_lengths",
        "Return the lengths of the space-separated words of s.",
        """
def word_lengths(s):
    out = []
    for w in s.split():
        if len(w) > 0:
            out.append(len(w))
    return out
""",
        ("('',)", "('a',)", "('ab  c',)"),
        lambda r: (" ".join(_word(r, 5) for _ in range(int(r.integers(1, 5)))),),
    ),
    _d(
        "merge_counts",
        "Return (a dict of a's counts updated with b's, a unchanged) as sorted item lists.",
        """
def merge_counts(a, b):
    c = dict(a)
    for k, v in b.items():
        c[k] = c.get(k, 0) + v
    return sorted(c.items()), sorted(a.items())
""",
        ("({}, {})", "({'x': 1}, {})", "({}, {'x': 2})"),
        lambda r: tuple(
            {
                str(k): int(r.integers(1, 4))
                for k in r.choice(list("xyz"), size=int(r.integers(0, 3)))
            }
            for _ in range(2)
        ),
    ),
    _d(
        "window_sums",
        "Return the sums of every window of k consecutive elements (k >= 1).",
        """
def window_sums(xs, k):
    out = []
    for i in range(len(xs) - k + 1):
        out.append(sum(xs[i:i + k]))
    return out
""",
        ("([], 1)", "([4], 1)", "([1, 2, 3], 3)"),
        lambda r: (_ints(r), int(r.integers(1, 4))),
    ),
)
