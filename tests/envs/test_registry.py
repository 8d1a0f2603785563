"""Versioned ids, make(), and "did you mean" on a typo."""

from __future__ import annotations

import pytest

from rewardkit.envs import make, register, registered, spec
from rewardkit.envs.fhir import ENV_IDS, FhirEnv
from rewardkit.errors import ConfigError


def test_the_four_fhir_ids_are_registered():
    assert set(ENV_IDS) <= set(registered())
    assert ENV_IDS == (
        "fhir/anc-threshold-v1",
        "fhir/platelets-threshold-v1",
        "fhir/creatinine-rise-v1",
        "fhir/potassium-latest-v1",
    )
    env = make("fhir/creatinine-rise-v1", max_steps=5)
    assert isinstance(env, FhirEnv) and env.env_id == "fhir/creatinine-rise-v1"
    assert env.max_steps == 5 and env.family == "creatinine-rise"


def test_typo_suggests_the_closest_id():
    with pytest.raises(ConfigError, match=r"Did you mean 'fhir/anc-threshold-v1'\?$"):
        make("fhir/anc-treshold-v1")


def test_unknown_version_lists_registered_versions():
    with pytest.raises(ConfigError, match=r"Registered versions: fhir/anc-threshold-v1\."):
        spec("fhir/anc-threshold-v2")


def test_nothing_close_lists_everything():
    with pytest.raises(ConfigError, match=r"Unknown environment id 'zzz/q-v1'\. Registered:"):
        make("zzz/q-v1")


@pytest.mark.parametrize("bad", ["anc", "fhir/anc", "fhir/anc-v", "Fhir/x-v1", 3])
def test_register_checks_the_id(bad):
    with pytest.raises(ConfigError, match="must look like 'namespace/name-v1'"):
        register(bad, "m:a")


def test_reregistering_an_id_elsewhere_is_refused():
    with pytest.raises(ConfigError, match=r"already registered.*register a new version"):
        register("fhir/anc-threshold-v1", "other.module:factory")
    with pytest.raises(ConfigError, match="must be 'module:attr'"):
        register("test/x-v1", "nocolon")
