"""Run a pre-registered experiment: warm start, then one TRL ``GRPOTrainer`` run per arm and seed.

    from rewardkit.learn import calibration_task, run_experiment
    res = run_experiment(calibration_task(), seeds=(0, 1, 2, 3), steps=400, out="out/learn")

Order of work: the pre-registration (task, arms, seeds, steps, settings, metrics, hypotheses,
decision rule, versions and the SHA-256 of this package's source) is built and, with ``out``,
written to ``preregistration.json`` *before* any model is trained. Then, per seed: a tiny model
is built from a config and warm-started (format only); its held-out metrics are the "before"
of every arm; each arm starts from a copy of that same warm-started model, trains on the same
prompts and labels with the same trainer seed, and is evaluated on the same held-out draws, so
arms are paired by seed. Evaluation saves and restores torch's random state, so the curve
points do not change the training run.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._json import canonical_json, content_hash, write_atomic
from .._optional import require
from .._validation import SEED, Each, Interval, validate_params
from .._version import __version__
from ..errors import ConfigError
from ..stats.paired import paired_difference
from ._model import build_model, build_tokenizer, warm_start
from ._task import LearnTask, Settings
from .result import LearnResult

__all__ = ["DECISION_RULE", "preregistration", "run_experiment", "source_digest"]

DECISION_RULE = (
    "an effect of arm X against the reference arm R on a metric is reported as found when the "
    "95% Student-t interval of the per-seed paired differences X − R excludes 0; otherwise the "
    "result is reported as no effect found at this number of seeds"
)
# TRL 1.16 reads a property that transformers 5.24 deprecates; nothing of ours warns.
_TRL_WARNINGS = ("`is_gradient_checkpointing` is deprecated",)


def source_digest() -> str:
    """SHA-256 over this package's source files (name and bytes, sorted by name)."""
    h = hashlib.sha256()
    for p in sorted(Path(__file__).parent.glob("*.py")):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()


def _versions() -> dict[str, str]:
    import torch
    import transformers
    import trl

    return {
        "rewardkit": __version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "trl": trl.__version__,
    }


def preregistration(
    task: LearnTask, *, seeds: Sequence[int], steps: int, settings: Settings
) -> dict[str, Any]:
    """The record written before training: everything that decides the outcome's reading."""
    return {
        "experiment": task.name,
        "task": task.describe(),
        "arms": list(task.arms),
        "reference_arm": task.reference,
        "seeds": list(seeds),
        "steps": steps,
        "settings": settings.to_dict(),
        "metrics": [m.to_dict() for m in task.metrics],
        "training_curve": task.curve_metric,
        "hypotheses": list(task.hypotheses),
        "decision_rule": DECISION_RULE,
        "versions": _versions(),
        "source_sha256": source_digest(),
    }


def _check(seeds: Sequence[int], steps: int, settings: Settings) -> tuple[int, ...]:
    func = "run_experiment"
    if len(set(seeds)) != len(seeds):
        raise ConfigError(
            f"The 'seeds' parameter of {func} must not repeat a seed. Got {tuple(seeds)!r}."
        )
    if settings.batch_size % settings.num_generations:
        raise ConfigError(
            "The 'batch_size' setting of run_experiment must be a multiple of num_generations "
            f"({settings.num_generations}). Got {settings.batch_size}."
        )
    return tuple(int(s) for s in seeds)


def _generate(model: Any, tok: Any, prompts: list[str], settings: Settings, seed: int) -> list[str]:
    """``eval_samples`` sampled completions per prompt (prompt-major order), torch's global
    random state saved and restored around the draw."""
    import torch

    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        enc = tok(
            [p for p in prompts for _ in range(settings.eval_samples)],
            return_tensors="pt",
            add_special_tokens=False,
            padding=True,
        )
        was_training = model.training
        model.eval()
        with torch.no_grad():
            out = model.generate(
                **enc,
                do_sample=True,
                temperature=settings.temperature,
                top_k=0,
                top_p=1.0,
                max_new_tokens=settings.max_completion_length,
                pad_token_id=tok.pad_token_id,
                eos_token_id=tok.eos_token_id,
            )
        model.train(was_training)
    finally:
        torch.random.set_rng_state(state)
    texts: list[str] = tok.batch_decode(
        out[:, enc["input_ids"].shape[1] :], skip_special_tokens=True
    )
    return texts


def _evaluate(
    task: LearnTask, model: Any, tok: Any, settings: Settings, seed: int
) -> dict[str, float]:
    prompts = task.eval_prompts()
    texts = _generate(model, tok, prompts, settings, seed)
    rep = [p for p in prompts for _ in range(settings.eval_samples)]
    return task.evaluate(rep, texts, np.random.default_rng([seed, 1]))


def _train_arm(
    task: LearnTask,
    arm: str,
    model: Any,
    tok: Any,
    seed: int,
    steps: int,
    settings: Settings,
) -> tuple[list[dict[str, float]], list[dict[str, Any]]]:
    """One GRPO run; returns the per-step training statistics and the held-out curve."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback, ProgressCallback
    from trl import GRPOConfig, GRPOTrainer

    n_rows = steps * settings.batch_size // settings.num_generations
    ds = Dataset.from_dict(task.train_rows(n_rows, np.random.default_rng([seed, 0])))
    stats: list[dict[str, float]] = []
    curve: list[dict[str, Any]] = []
    every = settings.eval_every

    class Curve(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if state.global_step % every == 0 or state.global_step == steps:
                m = _evaluate(task, kw["model"], tok, settings, seed)
                curve.append({"step": int(state.global_step), **m})

    with tempfile.TemporaryDirectory(prefix="rewardkit-learn-") as tmp:
        cfg = GRPOConfig(
            output_dir=tmp,
            use_cpu=True,
            bf16=False,
            per_device_train_batch_size=settings.batch_size,
            num_generations=settings.num_generations,
            max_completion_length=settings.max_completion_length,
            max_steps=steps,
            logging_steps=max(1, steps),
            beta=0.0,
            learning_rate=settings.learning_rate,
            temperature=settings.temperature,
            report_to="none",
            save_strategy="no",
            seed=seed,
            data_seed=seed,
            activation_checkpointing=False,
            disable_tqdm=True,
        )
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=[task.reward_func(arm, stats)],  # type: ignore[list-item]
            args=cfg,
            train_dataset=ds,
            processing_class=tok,
            callbacks=[Curve()],
        )
        for cb in (PrinterCallback, ProgressCallback):
            trainer.remove_callback(cb)
        trainer.train()
    if len(stats) != steps:
        raise RuntimeError(
            f"expected one reward call per GRPO step ({steps}), got {len(stats)}; the trainer's "
            "generation schedule changed"
        )
    return stats, curve


@contextlib.contextmanager
def _quiet(threads: int) -> Any:
    """Torch threads set for the run (restored after), TRL's stdout and known warnings muted."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            for msg in _TRL_WARNINGS:
                warnings.filterwarnings("ignore", message=msg)
            yield
    finally:
        torch.set_num_threads(before)


@validate_params(
    {
        "seeds": [Each((SEED,), min_len=1, distinct=True)],
        "steps": [Interval(int, 1, 10**6)],
        "on_progress": ["callable", None],
    }
)
def run_experiment(
    task: LearnTask,
    *,
    seeds: Sequence[int],
    steps: int,
    settings: Settings | None = None,
    out: str | Path | None = None,
    on_progress: Callable[[str], object] | None = None,
) -> LearnResult:
    """Pre-register, train every arm on every seed, evaluate, and summarise (see module doc)."""
    require("trl", "trl", "rewardkit learn")
    require("torch", "torch", "rewardkit learn")
    settings = settings or Settings()
    seeds = _check(seeds, steps, settings)
    prereg = preregistration(task, seeds=seeds, steps=steps, settings=settings)
    outdir = None if out is None else Path(out)
    if outdir is not None:  # written first: nothing below can change what was registered
        write_atomic(outdir / "preregistration.json", canonical_json(prereg, indent=1) + "\n")
    say = on_progress or (lambda _m: None)
    runs: list[dict[str, Any]] = []
    with _quiet(settings.threads):
        for seed in seeds:
            tok = build_tokenizer(task.words)
            model = build_model(
                len(tok), seed=seed, hidden=settings.hidden_size, layers=settings.layers
            )
            pairs = task.warm_pairs(settings.warm_pairs, np.random.default_rng([seed, 2]))
            losses = warm_start(
                model,
                tok,
                pairs,
                steps=settings.warm_steps,
                batch=settings.warm_batch,
                lr=settings.warm_lr,
                seed=seed,
            )
            before = _evaluate(task, model, tok, settings, seed)
            warm_state = copy.deepcopy(model.state_dict())
            for arm in task.arms:
                say(f"{task.name}: seed {seed}, arm {arm}")
                m = build_model(
                    len(tok), seed=seed, hidden=settings.hidden_size, layers=settings.layers
                )
                m.load_state_dict(warm_state)
                stats, curve = _train_arm(task, arm, m, tok, seed, steps, settings)
                after = curve[-1] if curve and curve[-1]["step"] == steps else None
                if after is None:
                    raise RuntimeError("the held-out evaluation at the last step is missing")
                runs.append(
                    {
                        "arm": arm,
                        "seed": seed,
                        "warm_start_loss": losses[-1],
                        "before": before,
                        "after": {k: v for k, v in after.items() if k != "step"},
                        "train": stats,
                        "curve": [{"step": 0, **before}, *curve],
                    }
                )
    result = LearnResult.build(task, prereg, content_hash(prereg), runs, steps, paired_difference)
    if outdir is not None:
        result.write(outdir)
    return result
