"""The task field of a trainer's dataset row, by class: what ``datasets`` really hands the
adapters, and values of the wrong type.

A column of task objects goes through Arrow, which fills every key another row has with
``None`` (``{"trap": "page2"}`` in one row, ``{"variant": 3}`` in the next). Before the fix
every such row failed to reset (``None`` is no trap); a ``None`` is now "not given" and the
environment picks that option from the seed, exactly as for a row without the key. Options or
an env id of the wrong type (``[]``, ``""``, ``0``) were silently replaced by the defaults;
they are now errors naming the field.
"""

from __future__ import annotations

import pytest

from rewardkit.errors import ConfigError
from rewardkit.integrations.fhir import parse_task
from rewardkit.integrations.trl import environment

OPTION_SETS = [
    {"trap": "page2"},
    {"variant": 3},
    {},
    {"trap": "lookalike", "variant": 1},
    {"trap": "missing"},
]


def test_arrow_filled_rows_reset_like_the_rows_written_by_hand():
    datasets = pytest.importorskip("datasets")
    tasks = [{"seed": s, "options": o} for s, o in enumerate(OPTION_SETS)]
    tasks.append({"seed": 9})  # no options at all: Arrow gives options None
    ds = datasets.Dataset.from_dict({"prompt": ["q"] * len(tasks), "task": tasks})
    cls = environment("fhir/anc-threshold-v1")
    assert sum(row["task"] != task for row, task in zip(ds, tasks, strict=True)) == 5  # filled
    for row, task in zip(ds, tasks, strict=True):
        a, b = cls(), cls()
        assert a.reset(**row) == b.reset(task=task)
        assert a.env.snapshot() == b.env.snapshot()


@pytest.mark.parametrize("options", [[], "", 0, False, [1], "x", 3])
def test_options_of_the_wrong_type_are_an_error(options):
    with pytest.raises(ValueError, match="'options' that is not an object"):
        parse_task({"seed": 0, "options": options}, "task", "fhir/anc-threshold-v1")
    cls = environment("fhir/anc-threshold-v1")
    with pytest.raises(ConfigError, match="'options' that is not an object"):
        cls().reset(task={"seed": 0, "options": options})


@pytest.mark.parametrize("env_id", ["", 0, False, [], ["fhir/anc-threshold-v1"]])
def test_an_env_id_of_the_wrong_type_is_an_error(env_id):
    with pytest.raises(ValueError, match="'env_id' that is not an environment id"):
        parse_task({"seed": 0, "env_id": env_id}, "task", "fhir/anc-threshold-v1")


def test_none_options_mean_not_given():
    assert parse_task({"seed": 2, "options": {"trap": None, "variant": 4}, "env_id": None},
                      "task", "fhir/anc-threshold-v1") == (
        "fhir/anc-threshold-v1", 2, {"variant": 4}
    )  # fmt: skip
