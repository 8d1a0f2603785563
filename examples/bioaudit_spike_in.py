"""Audit a single-cell trajectory with the shipped rule engine, then run the spike-in anchor:
inject one engine-judged L0 decision into each clean 12-step substrate and watch recipe B drop.
"""

from rewardkit.bioaudit import INJECTION_CANDIDATES, PARADIGMS, Engine, load_benchmark
from rewardkit.levels import score_trajectory

eng = Engine()
bm = load_benchmark()  # v1.2.0, a synthetic benchmark
print(f"benchmark {bm.version}: {len(bm.tasks)} tasks, hash {bm.hash[:19]}…")

task = next(t for t in bm.tasks if 0 in eng.levels(t.decisions))  # one with an L0 step
print(
    f"{task.task_id}: gold correct/error/edge = "
    f"{task.n_gold_correct}/{task.n_gold_error}/{task.n_gold_edge}"
)
for d, j in zip(task.decisions, eng.audit(task.decisions)):
    print(f"  {d['decision_id']} {d['action']:<28} L{j.level:<2} {', '.join(j.rule_ids)}")

for p in PARADIGMS:
    clean = list(bm.substrates[f"{p}_correct"])
    injected = [*clean, INJECTION_CANDIDATES[p][0]]
    before = score_trajectory(eng.levels(clean), recipe="B").value
    after = score_trajectory(eng.levels(injected), recipe="B").value
    added = injected[-1]["action"]
    print(f"{p:6s} {before:.4f} -> {after:.4f}  drop {before - after:.4f}  (+ {added})")
