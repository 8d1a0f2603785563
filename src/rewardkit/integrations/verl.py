"""A rewardkit reward as a verl ``compute_score`` (custom reward function).

Usage — point verl at this module and name the reward in ``reward_kwargs``::

    reward.custom_reward_function.path=pkg://rewardkit.integrations.verl     # by import
    reward.custom_reward_function.name=compute_score
    +reward.custom_reward_function.reward_kwargs.reward=mypkg.rewards:stack
    +reward.custom_reward_function.reward_kwargs.none_score=0.0

(the file path ``<site-packages>/rewardkit/integrations/verl.py`` works too), or, in your own
reward file, ``compute_score = make_compute_score(stack)``.

verl's contract (``verl/utils/reward_score``, the reward-loop managers' ``run_single``):
``compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs)`` is called
per sample with keywords, where ``solution_str`` is the decoded response only; it returns a
float or a dict that holds ``"score"``. Every key of the dict goes into ``reward_extra_info``
and the columns are built from the *first* sample's keys, so every sample must return the same
key set: here ``score``, ``acc`` (= score, what verl's own float path stores, read by DAPO
``filter_groups``) and the fixed keys of :func:`~rewardkit.integrations._common.flat_record`
(``masked``, ``hard_failed``, ``errors``, ``reward/<component>``, ``masked/<component>``,
``gate/<gate>``).

verl has no "cannot score": a ``None`` total is reported as ``score = none_score`` (default
0.0, a parameter) **and** ``masked = 1.0``, so the substitution is visible in
``reward_extra_info``, validation metrics and rollout dumps; filter or reweight on ``masked``.
The episode a stack sees: ``data_source``, ``completion`` and ``text`` (= ``solution_str``),
``ground_truth``, ``extra_info`` and any other keyword verl passes.

verl loads a file path as module ``custom_module_<hash>`` without registering it, and the
``remote`` manager cloudpickles the function to Ray workers; so this file defines nothing
itself: everything is imported from :mod:`rewardkit.integrations.verl_score`, which pickles
by reference (the module-level cache that made ``remote`` fail with ``PicklingError`` lives
there). The multi-turn path (verl's tool agent loop) is :mod:`rewardkit.integrations.verl_tools`.
"""

from __future__ import annotations

from rewardkit.integrations.verl_score import (
    VerlScore,
    compute_score,
    compute_score_batch,
    compute_score_prime,
    make_compute_score,
)

__all__ = [
    "VerlScore",
    "compute_score",
    "compute_score_batch",
    "compute_score_prime",
    "make_compute_score",
]
