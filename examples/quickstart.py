"""README quickstart: a gated reward stack, group advantages, a trajectory under recipe B."""

from rewardkit import Component, Gate, GateOutcome, RewardStack, Step
from rewardkit import group_advantages, score_trajectory


def task(ep):  # None = cannot score; required=True makes the total None, never a fake 0
    return None if ep["answer"] is None else float(ep["answer"] == "met")


stack = RewardStack(
    gates=[Gate("no_write", lambda ep: GateOutcome(not ep["writes"], tuple(ep["writes"])))],
    components=[Component("task", task, required=True),
                Component("cost", lambda ep: -min(1, 0.05 * ep["calls"]), weight=0.5,
                          range=(-1, 0))],  # declared ranges: a hard failure ranks last
    version="anc-v1",
)
episodes = [{"answer": "met", "calls": 1, "writes": []},                        # correct
            {"answer": "met", "calls": 2, "writes": ["update_observation/7"]},  # EHR write
            {"answer": None, "calls": 0, "writes": []}]                         # unscorable
results = stack.score_batch(episodes)
for r in results:
    print(r.total, r.hard_failed, dict(r.gate_failures), r.excluded)  # 0.975 / -0.65 / None
adv = group_advantages([r.total for r in results], groups=3, method="maxnorm", resolution=1e-2)
print("advantages:", adv.tolist())                                    # None keeps no advantage
traj = score_trajectory([Step(3)] * 12 + [Step(0)], recipe="B")       # 12 L3 + one L0
print("recipe B:", round(traj.value, 6))                              # 0.235385
