"""The FHIR hidden verifier as a TRL reward: the lab's four trajectories written as completions.

    python examples/fhir_trl_reward.py

Each completion is what an LLM would emit (JSON lines, a JSON list, chat messages); the
``task`` column re-creates the environment. The rewards are the verdict totals the environment
gives (A 2.1875, B 0.1875, C 1.8958, D 0.0 hard failure), a broken completion is a format
penalty, an unusable task is None. In training: ``GRPOTrainer(reward_funcs=[f], ...)``.
"""

import json

from rewardkit.envs.lab import run_lab
from rewardkit.integrations.trl import fhir_reward_func

lab = run_lab()  # A correct, B wrong LOINC code, C repeats the search, D attempts a write
task = {"seed": lab.seed, "options": lab.options}
acts = {name: list(t.actions) for name, t in lab.trajectories.items()}

completions = [
    "\n".join(json.dumps(a) for a in acts["A"]),  # JSON lines
    json.dumps(acts["B"], indent=2),  # a pretty-printed JSON list
    [{"role": "assistant", "content": json.dumps(a)} for a in acts["C"]],  # chat messages
    "\n".join(json.dumps(a) for a in acts["D"]),
    "Sure! " + json.dumps(acts["A"]),  # prose on the line: one malformed action
]
f = fhir_reward_func("fhir/anc-threshold-v1", name="fhir")
logged: dict[str, float] = {}
rewards = f(
    prompts=["Is the latest ANC >= 1.5?"] * 6,
    completions=[*completions, "{}"],
    task=[task] * 5 + [{"seed": -1}],  # the last row cannot re-create the task
    log_metric=logged.__setitem__,
)
for label, r in zip(["A", "B", "C", "D", "prose", "bad task"], rewards):
    print(f"{label:9s} {r}")
print("environment totals:", {n: t.verdict.total for n, t in lab.trajectories.items()})
for key in sorted(logged):
    if "/frac_none" not in key:
        print(f"  {key:36s} {logged[key]:.4f}")
print("last error:", f.last_results[-1].errors)
