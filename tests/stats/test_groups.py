"""Within-group ordering: concordant / tied / inverted pairs against a brute-force count."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from rewardkit.stats.groups import group_ordering


def test_hand_example():
    # group a: gold 1 > 0 but reward 0.1 < 0.2 → inverted; group b: concordant + tied
    g = group_ordering(
        [0.1, 0.2, 0.9, 0.5, 0.5, 0.7],
        [1, 0, 1, 0, 0, 1],
        ["a", "a", "b", "b", "b", None],
    )
    assert (g.n_pairs, g.n_concordant, g.n_tied_reward, g.n_inverted) == (3, 2, 0, 1)
    assert g.worst_groups == (("a", 1),)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, 0.5, 1.0, None]), st.integers(0, 2), st.sampled_from("xyz")
        ),
        max_size=25,
    )
)
def test_counts_equal_brute_force(rows):
    r = [x[0] for x in rows]
    g = [float(x[1]) for x in rows]
    k = [x[2] for x in rows]
    out = group_ordering(r, g, k)
    conc = tied = inv = 0
    for (ri, gi, ki), (rj, gj, kj) in itertools.combinations(zip(r, g, k), 2):
        if ki != kj or ri is None or rj is None or gi == gj:
            continue
        if (ri > rj) == (gi > gj) and ri != rj:
            conc += 1
        elif ri == rj:
            tied += 1
        else:
            inv += 1
    assert (out.n_concordant, out.n_tied_reward, out.n_inverted) == (conc, tied, inv)
