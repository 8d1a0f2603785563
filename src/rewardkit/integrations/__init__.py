"""Adapters that plug a rewardkit reward into the trainers users run.

- :mod:`rewardkit.integrations.trl` — ``reward_func(stack_or_fn, name=...)`` for TRL's
  ``GRPOTrainer`` / ``RLOOTrainer`` (``None`` = cannot score), ``levels_reward_func``,
  ``fhir_reward_func``.
- :mod:`rewardkit.integrations.verl` — ``compute_score`` / ``make_compute_score``.
- :mod:`rewardkit.integrations.openrlhf` — ``reward_func`` for ``--reward.remote_url``.
- :mod:`rewardkit.integrations.levels` — ``levels_stack``: step judgments as a reward stack.
- :mod:`rewardkit.integrations.fhir` — ``fhir_stack``: the FHIR hidden verifier replaying the
  trajectory written in the completion.

None of them imports its trainer: they only follow its calling convention, so they load
without the trainer installed (the OpenRLHF one returns torch tensors when torch is present).
"""
