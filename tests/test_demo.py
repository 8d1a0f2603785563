"""The demo's section registry: areas plug in with one line, absent areas are skipped cleanly,
a crashing section is a failed check, and names must not collide."""

from __future__ import annotations

import sys
import types

import pytest

from rewardkit import Check, Section
from rewardkit.demo import SECTIONS, run_demo


def _install(monkeypatch: pytest.MonkeyPatch, name: str, **attrs: object) -> None:
    mod = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(mod, k, v)
    monkeypatch.setitem(sys.modules, name, mod)


def test_every_area_is_registered() -> None:
    areas = {"bioaudit", "audit", "autorater", "envs", "sandbox", "selfplay"}
    assert {f"rewardkit.{a}.demo:demo_section" for a in areas} <= set(SECTIONS)


def test_absent_area_is_skipped_with_a_reason() -> None:
    report = run_demo(
        sections=["rewardkit.demo:_levels_section", "rewardkit.nosuch.demo:demo_section"]
    )
    assert [s.name for s in report.sections] == ["levels"]
    assert report.skipped == {
        "rewardkit.nosuch.demo:demo_section": "package rewardkit.nosuch is not in this build"
    }
    assert report.passed


def test_area_without_demo_section_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    _install(monkeypatch, "rk_fake_area")
    report = run_demo(sections=["rk_fake_area:demo_section"])
    assert report.skipped == {"rk_fake_area:demo_section": "rk_fake_area has no demo_section() yet"}


def test_missing_dependency_inside_a_present_area_is_not_hidden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken_import() -> None:
        raise ModuleNotFoundError("No module named 'scipy_missing'", name="scipy_missing")

    class Finder:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name == "rk_area_with_bad_dep":
                broken_import()
            return None

    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    with pytest.raises(ModuleNotFoundError, match="scipy_missing"):
        run_demo(sections=["rk_area_with_bad_dep:demo_section"])


def test_plugged_in_section_and_a_crashing_one(monkeypatch: pytest.MonkeyPatch) -> None:
    ok = Section("fake", "Fake area", (Check("two", "2", "2", True),), {"fake.json": {"x": 1}})

    def boom() -> Section:
        raise RuntimeError("engine exploded")

    _install(monkeypatch, "rk_fake_ok", demo_section=lambda: ok)
    _install(monkeypatch, "rk_fake_boom", demo_section=boom)
    report = run_demo(sections=["rk_fake_ok:demo_section", "rk_fake_boom:demo_section"])
    assert report.sections[0] is ok
    crashed = report.sections[1]
    assert crashed.name == "rk_fake_boom" and not crashed.checks[0].passed
    assert crashed.checks[0].measured == "RuntimeError: engine exploded"
    assert not report.passed


def test_colliding_artefact_names_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _install(
        monkeypatch, "rk_dup", demo_section=lambda: Section("dup", "Dup", (), {"levels.json": {}})
    )
    with pytest.raises(RuntimeError, match=r"artefact file\(s\) \['levels.json'\]"):
        run_demo(sections=["rewardkit.demo:_levels_section", "rk_dup:demo_section"])
