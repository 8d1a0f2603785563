"""One reward stack, three trainers: the same episodes through the TRL, verl and OpenRLHF
adapters, called the way each trainer calls them (no trainer needs to be installed).

    python examples/trainer_adapters.py
"""

from rewardkit import Component, Gate, RewardStack
from rewardkit.integrations import openrlhf, trl, verl


def exact(ep):
    # "cannot score" (None) when the row has no gold answer: never a fake 0
    return None if ep["ground_truth"] is None else float(ep["text"].strip() == ep["ground_truth"])


stack = RewardStack(
    gates=[Gate("no_shell", lambda ep: "rm -rf" not in ep["text"])],
    components=[
        Component("exact", exact, required=True),  # unscorable exact → total None
        Component(
            "brevity", lambda ep: -min(1.0, 0.01 * len(ep["text"])), weight=0.5, range=(-1, 0)
        ),  # declared range: a hard failure ranks below every safe total
    ],
    version="math-v1",
)
texts, gold = ["4", "5", "4; rm -rf /", "4"], ["4", "4", "4", None]

# TRL: keywords, one value per completion, None kept; components through log_metric
logged = {}
f = trl.reward_func(stack, name="math")
rewards = f(
    prompts=["2+2="] * 4,
    completions=texts,
    ground_truth=gold,
    log_metric=lambda k, v: logged.setdefault(k, v),
)
print("TRL     ", f.__name__, rewards)
print("        ", {k: round(v, 3) for k, v in logged.items() if k.startswith("math/exact")})

# verl: per sample, a dict with a fixed key set; None → none_score with masked = 1
score = verl.make_compute_score(stack, none_score=0.0)
for t, g in zip(texts, gold):
    d = score(data_source="demo", solution_str=t, ground_truth=g, extra_info={})
    print("verl    ", {k: d[k] for k in ("score", "masked", "hard_failed", "reward/exact")})

# OpenRLHF: queries = prompt + response with special tokens, one sample per call
rf = openrlhf.reward_func(stack, none_reward=0.0)
for t, g in zip(texts, gold):
    out = rf(["2+2=" + t + "<|im_end|>"], ["2+2="], [g])
    print(
        "OpenRLHF",
        [round(float(x), 3) for x in out["rewards"]],
        "masked",
        [float(x) for x in out["extra_logs"]["masked"]],
    )
