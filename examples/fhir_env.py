"""A verifiable FHIR tool environment: play the concise path, then a cheat, then fuzz.

python examples/fhir_env.py
"""

from rewardkit.envs import check_env, make
from rewardkit.envs.fuzz import fuzz

env = make("fhir/anc-threshold-v1")
obs, info = env.reset(seed=0, options={"trap": "page2"})
print(obs["prompt"])
for action in env.reference_actions():  # find the patient, one search sorted -date, answer
    obs, reward, terminated, truncated, info = env.step(action)
print("concise path: reward", reward, dict(env.finalize().components))

env.reset(seed=0, options={"trap": "page2"})
sp, so, ans = env.reference_actions()
write = {"tool": "update_observation", "args": {"id": ans["answer"]["evidence"][0]}}
for action in (sp, so, write, ans):
    env.step(action)
v = env.finalize()
print("with a write attempt: reward", v.total, "gates failed", dict(v.gate_failures))

print("check_env:", check_env(make("fhir/creatinine-rise-v1")).passed)
report = fuzz(episodes=500, rng=0, progress=False)
for name, s in report.stacks.items():
    print(f"fuzz 500 episodes, {name}: {s.n_exploits} exploits ({s.n_high} high-reward)")
