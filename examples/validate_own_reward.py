"""Validate your own reward with rewardkit's five gates (the shipped bio-audit judge and data).

Any object with ``recipes``, ``default_recipe`` and ``__call__(steps, *, recipe, session)`` is a
reward; the factory lets the determinism gate rebuild it in a fresh process.
"""

from rewardkit.audit import validate

VALUES = {0: 0.0, 1: 0.30, 2: 0.60, 3: 0.85}


class WorstStepReward:
    """Trajectory reward = the reward of its worst unmasked step (−1 steps are masked)."""

    recipes = ("worst",)
    default_recipe = "worst"

    def __call__(self, steps, *, recipe, session=False):
        kept = [s.level for s in steps if s.level != -1]
        return min(VALUES[lv] for lv in kept) if kept else None


if __name__ == "__main__":
    v = validate(
        reward=WorstStepReward(),
        reward_factory=("validate_own_reward:WorstStepReward", {}),
        n_resamples=500,
    )
    for g in v.gates:
        print(f"{g.name:12s} {'PASS' if g.passed else 'FAIL'}  {g.summary}")
    st = v.evidence["stratified"]
    print(f"evidence: good {st['mean_good']:.3f} vs bad {st['mean_bad']:.3f}, p {st['pvalue']:.4f}")
