"""The synthetic world: determinism, look-alikes, traps realised, units, FHIR shapes."""

from __future__ import annotations

from collections import Counter

import pytest

from rewardkit.envs.fhir.heldout import _truth as heldout_truth
from rewardkit.envs.fhir.tasks import compute_truth, make_task
from rewardkit.envs.fhir.units import CANONICAL_UNIT, to_canonical
from rewardkit.envs.fhir.world import FAMILIES, TRAPS, build_world

# FHIR R4 ObservationStatus value set (hl7.org/fhir/R4/valueset-observation-status.html).
R4_STATUSES = {
    "registered",
    "preliminary",
    "final",
    "amended",
    "corrected",
    "cancelled",
    "entered-in-error",
    "unknown",
}


@pytest.fixture(scope="module")
def world():
    return build_world(0)


def test_world_is_deterministic_and_seed_dependent():
    a = build_world.__wrapped__(5, variants=2, n_background=20)
    b = build_world.__wrapped__(5, variants=2, n_background=20)
    c = build_world.__wrapped__(6, variants=2, n_background=20)
    assert list(a.observations) == list(b.observations)
    assert list(a.observations.values()) == list(b.observations.values())
    assert list(a.patients) != list(c.patients)


def test_size_and_statuses(world):
    assert 250 <= len(world.patients) <= 400  # "a few hundred patients"
    statuses = Counter(o.status for o in world.observations.values())
    assert set(statuses) == {"final", "amended", "preliminary", "cancelled", "entered-in-error"}
    assert set(statuses) <= R4_STATUSES
    units = {o.unit for o in world.observations.values() if o.code == "751-8"}
    assert units == {"10*3/uL", "10*9/L", "/uL", "cells/uL"}
    years = {o.when[:4] for o in world.observations.values()}
    assert years == {"2023", "2024", "2025"}


def test_lookalikes_share_a_name_but_not_a_birth_date(world):
    for (_, trap, _), sc in world.scenarios.items():
        if trap != "lookalike":
            assert sc.twin_id is None
            continue
        p, t = world.patients[sc.patient_id], world.patients[sc.twin_id]
        assert p["name"] == t["name"] and p["birthDate"] != t["birthDate"]


def test_every_scenario_realises_its_intended_answer(world):
    """The generator's latent answer is the oracle for both verifiers' recomputed truth."""
    for (family, trap, k), sc in world.scenarios.items():
        task = make_task(
            world, family, trap=trap, variant=k, env_id="x/y-v1", budget=8, max_steps=12
        )
        t = compute_truth(world, task.criterion, sc.patient_id)
        assert t.status == sc.intended, (family, trap, k)
        assert t.complete == (trap != "missing")
        h_status, h_value = heldout_truth(world, task.criterion, sc.patient_id)
        assert h_status == t.status
        assert (h_value is None) == (t.value is None)
        if t.value is not None:
            assert h_value == pytest.approx(t.value, rel=1e-9)
        if sc.twin_id is not None:  # the look-alike's labs say the opposite
            assert compute_truth(world, task.criterion, sc.twin_id).status != t.status


def test_traps_are_what_they_say(world):
    for family, code in FAMILIES.items():
        for k in range(6):
            sc = world.scenarios[(family, "page2", k)]
            lo, hi = sc.window
            n = sum(lo <= o.when[:10] <= hi for o in world.series(sc.patient_id, code))
            assert n > 10  # the latest value is past the default page of 10
            sc = world.scenarios[(family, "entered_in_error", k)]
            inside = [
                o
                for o in world.series(sc.patient_id, code)
                if sc.window[0] <= o.when[:10] <= sc.window[1]
            ]
            assert inside[-1].status == "entered-in-error"
            sc = world.scenarios[(family, "missing", k)]
            inside = [
                o
                for o in world.series(sc.patient_id, code)
                if sc.window[0] <= o.when[:10] <= sc.window[1]
            ]
            assert all(o.status not in ("final", "amended") for o in inside)
            sc = world.scenarios[(family, "unit_variant", k)]
            inside = [
                o
                for o in world.series(sc.patient_id, code)
                if sc.window[0] <= o.when[:10] <= sc.window[1]
            ]
            assert any(o.unit != CANONICAL_UNIT[code] for o in inside)
    assert set(TRAPS) == {t for _, t, _ in world.scenarios}


@pytest.mark.parametrize(
    "value, unit, code, expected",
    [
        (1200.0, "/uL", "751-8", 1.2),
        (1200.0, "cells/uL", "751-8", 1.2),
        (1.2, "10*9/L", "751-8", 1.2),  # 10^9/L = 10^3/uL (1 L = 10^6 uL)
        (88.42, "umol/L", "2160-0", 1.0),  # creatinine 113.12 g/mol
        (4.1, "mEq/L", "2823-3", 4.1),
        (130.0, "g/L", "718-7", 13.0),
        (1.2, "kg", "751-8", None),
        (1.2, None, "751-8", None),
        (1.2, "10*3/uL", "9999-9", None),
    ],
)
def test_units(value, unit, code, expected):
    got = to_canonical(value, unit, code)
    assert got == (None if expected is None else pytest.approx(expected))


def test_resources_have_the_r4_shape(world):
    o = next(iter(world.observations.values()))
    r = world.resource(o.id)
    assert r["resourceType"] == "Observation" and r["status"] in R4_STATUSES
    assert r["code"]["coding"][0]["system"] == "http://loinc.org"
    assert r["subject"] == {"reference": f"Patient/{o.patient}"}
    assert r["valueQuantity"]["system"] == "http://unitsofmeasure.org"
    p = world.patients[o.patient]
    assert p["resourceType"] == "Patient" and p["identifier"][0]["value"].startswith("MRN")


def test_every_trap_is_decisive():
    """Reading a scenario the way its trap invites changes the status or the value beyond the
    task's tolerance, for every family × trap × variant (the generator asserts it too)."""
    from rewardkit.envs.fhir.world import _reading, build_world

    world = build_world(0)
    obs = list(world.observations.values())
    for sc in world.scenarios.values():
        if sc.trap == "none":
            continue
        right = _reading(obs, sc, sc.patient_id, mishandle=False)
        who = sc.twin_id if sc.trap == "lookalike" else sc.patient_id
        wrong = _reading(obs, sc, who, mishandle=sc.trap != "lookalike")
        same_value = (right[1] is None and wrong[1] is None) or (
            right[1] is not None
            and wrong[1] is not None
            and abs(right[1] - wrong[1]) <= max(0.01 * abs(right[1]), 0.005)
        )
        assert right[0] != wrong[0] or not same_value, (sc, right, wrong)


def test_a_trap_that_cannot_flip_is_refused_by_the_generator():
    """1.1.0's potassium unit variant (mEq/L = mmol/L) and creatinine amendment (later final
    rows kept the rise visible) could never change the answer: the generator now refuses such a
    scenario."""
    from rewardkit.envs.fhir.world import Obs, Scenario, _assert_decisive

    window = ("2024-01-01", "2024-03-01")
    sc = Scenario("potassium-latest", "unit_variant", 0, "p-1", None, window, "met")
    rows = [
        Obs("o-1", "p-1", "2823-3", "2024-01-05T08:00:00Z", "final", 3.0, "mmol/L"),
        Obs("o-2", "p-1", "2823-3", "2024-02-05T08:00:00Z", "final", 4.2, "meq/L"),
    ]
    with pytest.raises(AssertionError, match="the unit_variant trap of potassium-latest"):
        _assert_decisive(rows, sc)
    sc = Scenario("creatinine-rise", "amended", 0, "p-1", None, window, "met")
    times = ["2024-01-05T08:00:00Z", "2024-01-06T08:00:00Z", "2024-01-07T08:00:00Z"]
    rows = [  # the rise is amended, but the next final row still shows it
        Obs("o-1", "p-1", "2160-0", times[0], "final", 0.9, "mg/dL"),
        Obs("o-2", "p-1", "2160-0", times[1], "amended", 1.5, "mg/dL"),
        Obs("o-3", "p-1", "2160-0", times[2], "final", 1.5, "mg/dL"),
    ]
    with pytest.raises(AssertionError, match="not decisive"):
        _assert_decisive(rows, sc)
