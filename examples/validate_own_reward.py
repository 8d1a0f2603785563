"""Audit your own reward: an exact-match math reward on a labelled set (examples/audit_math/).

The same as the command line in docs/audit.md:
    cd examples/audit_math
    rewardkit calibrate --reward mathreward:make --gold items.jsonl
    rewardkit validate --reward mathreward:make --items items.jsonl --golden golden.jsonl \
        --spike-in spike_in.jsonl
"""

from pathlib import Path

from rewardkit.audit.agreement import calibrate_rewards
from rewardkit.audit.data import RewardRecord, read_golden, read_items, read_spike_pairs
from rewardkit.audit.userreward import load_reward
from rewardkit.audit.validate_reward import validate_reward

HERE = Path(__file__).parent / "audit_math"

reward = load_reward("mathreward:make", cwd=HERE)  # imported as pytest would: folder on the path
items = read_items(HERE / "items.jsonl", require_gold=True)
scores = [reward.score(it.reward_input()) for it in items]
rewards = [RewardRecord(it.id, s.value, s.components) for it, s in zip(items, scores)]

cal = calibrate_rewards(items, rewards, n_resamples=500, names={"rewards": "mathreward:make"})
ra, st, g = cal.rank_agreement, cal.stratified, cal.groups
print(f"Spearman rho {ra.spearman.value:.3f}, Kendall tau_b {ra.kendall_tau_b.value:.3f}")
print(f"good - bad {st.diff:+.3f} (p {st.pvalue:.4f}); inverted pairs in groups {g.n_inverted}")

v = validate_reward(
    reward,
    items=items,
    golden=read_golden(HERE / "golden.jsonl"),
    pairs=read_spike_pairs(HERE / "spike_in.jsonl"),
    cwd=str(HERE),
)
for gate in v.gates:
    print(f"{gate.name:12s} {gate.status.upper():8s} {gate.summary}")
print(f"outcome: {v.outcome}")
