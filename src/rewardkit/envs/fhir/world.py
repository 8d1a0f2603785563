"""The seeded synthetic FHIR R4-shaped world: patients, look-alikes, years of lab Observations.

Usage::

    from rewardkit.envs.fhir.world import build_world
    w = build_world(0)                  # cached per (seed, variants, n_background)
    len(w.patients), len(w.observations)          # a few hundred patients, ~10k labs
    sc = w.scenarios[("anc-threshold", "page2", 3)]
    w.patients[sc.patient_id]["name"], w.series(sc.patient_id, "751-8")[-1]

Every task family × trap × variant has one *scenario* patient whose labs for the family's code
inside the task's time window are built to realise the trap (seed 002, "the environment must
know evidence completeness: in synthetic data it comes from the latent variables and the
observation process"). ``Scenario.intended`` is that latent answer; the verifiers never read
it — they recompute the truth from the Observations — and the tests check that they agree.
Background labs of every code fill a few years around it; statuses and unit variants occur
there too. Resources are plain dicts in FHIR R4 shape; treat them as read-only.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from .units import (
    CANONICAL_UNIT,
    CODES,
    CREATININE_UMOL_PER_MG_DL,
    DISPLAY,
    POTASSIUM_MG_DL_PER_MMOL_L,
    UNIT_FACTORS,
)

# English month names, fixed here (calendar.month_name follows the process locale).
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip

__all__ = [
    "FAMILIES",
    "TRAPS",
    "VALID_STATUSES",
    "Obs",
    "Scenario",
    "World",
    "build_world",
]

FAMILIES: dict[str, str] = {  # family → LOINC code
    "anc-threshold": "751-8",
    "platelets-threshold": "777-3",
    "creatinine-rise": "2160-0",
    "potassium-latest": "2823-3",
}
TRAPS = ("none", "page2", "amended", "entered_in_error", "unit_variant", "lookalike", "missing")
# Statuses a clinical decision may rest on; preliminary, cancelled and entered-in-error may not.
VALID_STATUSES = frozenset({"final", "amended", "corrected"})
THRESHOLDS = {"anc-threshold": 1.5, "platelets-threshold": 100.0}  # 10*3/uL, "met" = value ≥ T
POTASSIUM_RANGE = (3.5, 5.0)  # mmol/L, "met" = inside
CREATININE_RISE = (0.3, 48)  # mg/dL within hours (KDIGO AKI criterion)

_EPOCH = date(2023, 1, 1)
_DAYS = 3 * 365
_GIVEN = (
    "Maria",
    "John",
    "Wei",
    "Aisha",
    "Carlos",
    "Elena",
    "Ahmed",
    "Yuki",
    "Olga",
    "James",
    "Fatima",
    "Luca",
    "Priya",
    "Noah",
    "Sofia",
    "Daniel",
    "Mei",
    "Omar",
    "Anna",
    "Ravi",
)
_FAMILY = (
    "Lopez",
    "Smith",
    "Chen",
    "Khan",
    "Garcia",
    "Ivanova",
    "Ali",
    "Tanaka",
    "Rossi",
    "Brown",
    "Patel",
    "Nguyen",
    "Müller",
    "Kowalski",
    "Silva",
    "Cohen",
    "Okafor",
    "Jensen",
)
_RANGES = {
    "751-8": (0.3, 6.0),
    "6690-2": (2.0, 12.0),
    "777-3": (40.0, 400.0),
    "718-7": (8.0, 16.0),
    "2160-0": (0.6, 2.5),
    "2823-3": (2.8, 6.0),
}
_VARIANT_UNITS = {
    "751-8": ("10*9/L", "/uL", "cells/uL"),
    "6690-2": ("10*9/L", "/uL"),
    "777-3": ("10*9/L", "/uL"),
    "718-7": ("g/L",),
    "2160-0": ("umol/L",),
    "2823-3": ("mg/dL",),  # mEq/L would equal mmol/L: a trap that could never flip
}
_BACKGROUND_STATUS = (
    ("final", 0.86),
    ("amended", 0.04),
    ("preliminary", 0.04),
    ("cancelled", 0.03),
    ("entered-in-error", 0.03),
)
_STATUS_NAMES = tuple(s for s, _ in _BACKGROUND_STATUS)
_STATUS_CUM = np.cumsum([p for _, p in _BACKGROUND_STATUS])[:-1]


class Obs(NamedTuple):
    """One lab result as the world stores it (the FHIR resource is built from it)."""

    id: str
    patient: str
    code: str
    when: str  # "YYYY-MM-DDTHH:MM:00Z", unique per (patient, code)
    status: str
    value: float
    unit: str


@dataclass(frozen=True)
class Scenario:
    """The latent design of one task instance (never shown to the agent or the verifiers)."""

    family: str
    trap: str
    variant: int
    patient_id: str
    twin_id: str | None  # the look-alike (same name, other birth date) for the lookalike trap
    window: tuple[str, str]  # inclusive dates "YYYY-MM-DD"
    intended: str  # "met" | "not_met" | "unknown"


class World:
    """Patients, Observations and the indexes the tools use. Build with :func:`build_world`."""

    def __init__(
        self,
        seed: int,
        patients: dict[str, dict[str, Any]],
        obs: list[Obs],
        scenarios: dict[tuple[str, str, int], Scenario],
    ) -> None:
        self.seed = seed
        self.patients = patients
        self.observations: dict[str, Obs] = {o.id: o for o in obs}
        self.scenarios = scenarios
        by: dict[tuple[str, str], list[Obs]] = {}
        for o in obs:
            by.setdefault((o.patient, o.code), []).append(o)
        self._series = {k: tuple(sorted(v, key=lambda o: o.when)) for k, v in by.items()}
        self._resources: dict[str, dict[str, Any]] = {}

    def series(self, patient_id: str, code: str) -> tuple[Obs, ...]:
        """All Observations of one patient and code, oldest first."""
        return self._series.get((patient_id, code), ())

    def resource(self, obs_id: str) -> dict[str, Any]:
        """The FHIR R4 Observation resource (cached; read-only)."""
        res = self._resources.get(obs_id)
        if res is None:
            o = self.observations[obs_id]
            res = {
                "resourceType": "Observation",
                "id": o.id,
                "status": o.status,
                "category": [
                    {
                        "coding": [
                            {
                                "system": "http://terminology.hl7.org/CodeSystem/observation-category",
                                "code": "laboratory",
                            }
                        ]
                    }
                ],
                "code": {
                    "coding": [
                        {"system": "http://loinc.org", "code": o.code, "display": DISPLAY[o.code]}
                    ]
                },
                "subject": {"reference": f"Patient/{o.patient}"},
                "effectiveDateTime": o.when,
                "valueQuantity": {
                    "value": o.value,
                    "unit": o.unit,
                    "system": "http://unitsofmeasure.org",
                    "code": o.unit,
                },
            }
            self._resources[obs_id] = res
        return res


def _id(prefix: str, seed: int, n: int, k: int) -> str:
    h = hashlib.blake2b(f"{seed}:{prefix}:{n}".encode(), digest_size=8).hexdigest()
    return f"{prefix}-{h[:k]}"


_DATES = [(_EPOCH + timedelta(days=d)).isoformat() for d in range(_DAYS + 30)]


def _iso(day: int, minute: int) -> str:
    extra, minute = divmod(minute, 1440)
    return f"{_DATES[day + extra]}T{minute // 60:02d}:{minute % 60:02d}:00Z"


def _day(iso_date: str) -> int:
    return (date.fromisoformat(iso_date[:10]) - _EPOCH).days


class _Builder:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.patients: dict[str, dict[str, Any]] = {}
        self.obs: list[Obs] = []
        self._n_obs = 0

    def patient(self, given: str | None = None, family: str | None = None) -> str:
        rng = self.rng
        pid = _id("p", self.seed, len(self.patients), 8)
        given = given or str(rng.choice(_GIVEN))
        family = family or str(rng.choice(_FAMILY))
        born = date(1940, 1, 1) + timedelta(days=int(rng.integers(0, 60 * 365)))
        self.patients[pid] = {
            "resourceType": "Patient",
            "id": pid,
            "identifier": [
                {
                    "system": "urn:rewardkit:mrn",
                    "value": f"MRN{int(rng.integers(1_000_000, 9_999_999))}",
                }
            ],
            "name": [{"family": family, "given": [given]}],
            "gender": str(rng.choice(("female", "male"))),
            "birthDate": born.isoformat(),
        }
        return pid

    def add(self, pid: str, code: str, when: str, status: str, value: float, unit: str) -> str:
        oid = _id("o", self.seed, self._n_obs, 10)
        self._n_obs += 1
        self.obs.append(Obs(oid, pid, code, when, status, value, unit))
        return oid

    def value(self, code: str, lo: float | None = None, hi: float | None = None) -> float:
        a, b = _RANGES[code]
        x = float(self.rng.uniform(lo if lo is not None else a, hi if hi is not None else b))
        return round(x) if code == "777-3" else round(x, 2)

    def written(self, code: str, canonical: float, unit: str | None = None) -> tuple[float, str]:
        """The value as stored in ``unit`` (default: the canonical unit)."""
        unit = unit or CANONICAL_UNIT[code]
        if unit in ("/uL", "cells/uL"):
            return round(canonical * 1000.0), unit
        if unit == "umol/L":
            return round(canonical * CREATININE_UMOL_PER_MG_DL, 1), unit
        if unit == "g/L":
            return round(canonical * 10.0, 1), unit
        if code == "2823-3" and unit == "mg/dL":
            return round(canonical * POTASSIUM_MG_DL_PER_MMOL_L, 1), unit
        return canonical, unit

    def background(self, pid: str, skip: tuple[str, tuple[int, int]] | None = None) -> None:
        """A few years of labs of every code; none of ``skip``'s code inside its day range."""
        rng = self.rng
        counts = rng.integers(3, 8, size=len(CODES))  # (6,)
        n = int(counts.sum())
        days = rng.integers(0, _DAYS, size=n)  # (n,)
        minutes = rng.integers(360, 1200, size=n)
        statuses = np.searchsorted(_STATUS_CUM, rng.random(n), side="right")
        variant = rng.random(n) < 0.12
        pick = rng.integers(0, 3, size=n)
        u01 = rng.random(n)
        i = 0
        for code, k in zip(CODES, counts.tolist()):
            lo, hi = _RANGES[code]
            seen: set[int] = set()
            rows = sorted(range(i, i + k), key=lambda j: int(days[j]))
            i += k
            for j in rows:
                d = int(days[j])
                if d in seen or (
                    skip is not None and code == skip[0] and skip[1][0] - 2 <= d <= skip[1][1] + 2
                ):
                    continue
                seen.add(d)
                x = lo + float(u01[j]) * (hi - lo)
                canon = round(x) if code == "777-3" else round(x, 2)
                variants = _VARIANT_UNITS[code]
                unit = variants[int(pick[j]) % len(variants)] if variant[j] else None
                v, u = self.written(code, canon, unit)
                self.add(pid, code, _iso(d, int(minutes[j])), _STATUS_NAMES[statuses[j]], v, u)


def _threshold_value(b: _Builder, family: str, met: bool) -> float:
    code = FAMILIES[family]
    if family == "potassium-latest":
        lo, hi = POTASSIUM_RANGE
        if met:
            return b.value(code, lo + 0.2, hi - 0.2)
        return b.value(code, 2.8, lo - 0.2) if b.rng.random() < 0.5 else b.value(code, hi + 0.3)
    t = THRESHOLDS[family]
    return b.value(code, t * 1.15, t * 3.0) if met else b.value(code, t * 0.3, t * 0.85)


def _times(
    b: _Builder, window: tuple[int, int], n: int, spacing_h: tuple[int, int] | None
) -> list[str]:
    """``n`` increasing timestamps inside the window (hospital-style spacing when given)."""
    rng = b.rng
    if spacing_h is None:
        days = sorted(
            int(x)
            for x in rng.choice(
                np.arange(window[0], window[1] + 1), n, replace=n > window[1] - window[0] + 1
            )
        )
        return [_iso(d, 300 + 60 * i % 900 + int(rng.integers(0, 50))) for i, d in enumerate(days)]
    start = (window[0] + int(rng.integers(0, max(1, window[1] - window[0] - 20)))) * 1440
    out, t = [], start + 360
    for _ in range(n):
        out.append(t)
        t += int(rng.integers(spacing_h[0], spacing_h[1] + 1)) * 60
    return [_iso(0, m) for m in out]


def _scenario_series(
    b: _Builder, pid: str, family: str, trap: str, window: tuple[int, int], intended: str
) -> None:
    """Write the in-window labs of ``family``'s code that realise ``trap`` for ``intended``."""
    code = FAMILIES[family]
    rng = b.rng
    met = intended == "met"
    canon = CANONICAL_UNIT[code]
    if trap == "missing":
        for when in _times(b, window, int(rng.integers(0, 4)), None):
            status = str(rng.choice(("preliminary", "cancelled", "entered-in-error")))
            b.add(pid, code, when, status, b.value(code), canon)
        return
    if family == "creatinine-rise":
        n = int(rng.integers(12, 19)) if trap == "page2" else int(rng.integers(4, 8))
        times = _times(b, window, n + (trap == "entered_in_error"), (8, 30))
        base = b.value(code, 0.7, 1.2)
        vals = [round(base + float(rng.uniform(-0.1, 0.1)), 2) for _ in range(n)]
        jump = n - 1 if trap == "page2" else int(rng.integers(1, n))
        if met:  # one rise of 0.4–0.9 mg/dL over ≤ 30 h, then it stays up
            rise = float(rng.uniform(0.4, 0.9))
            vals = vals[:jump] + [round(v + rise, 2) for v in vals[jump:]]
        statuses = ["final"] * n
        if trap == "amended":  # the rise and every later value are amendments: status=final
            statuses[jump:] = ["amended"] * (n - jump)  # hides the whole rise

        units = [canon] * n
        if trap == "unit_variant":
            units = [canon] * (n // 2) + ["umol/L"] * (n - n // 2)
        for i in range(n):
            v, u = b.written(code, vals[i], units[i])
            b.add(pid, code, times[i], statuses[i], v, u)
        if trap == "entered_in_error":  # a spurious spike, withdrawn
            b.add(pid, code, times[n], "entered-in-error", round(vals[-1] + 0.8, 2), canon)
        return
    n = int(rng.integers(12, 17)) if trap == "page2" else int(rng.integers(3, 7))
    times = _times(b, window, n + (trap == "entered_in_error"), None)
    vals = [_threshold_value(b, family, bool(rng.random() < 0.5)) for _ in range(n - 1)]
    vals.append(_threshold_value(b, family, met))
    statuses = ["final"] * n
    written: list[str | None] = [None] * n
    if trap == "amended":  # the latest is an amendment; the latest *final* says the opposite
        statuses[-1] = "amended"
        vals[-2] = _threshold_value(b, family, not met)
    if trap == "unit_variant":  # a unit whose number differs (10*9/L would read the same)
        flips = [u for u in _VARIANT_UNITS[code] if UNIT_FACTORS[code][u] != 1.0]
        written[-1] = str(rng.choice(flips))
    for i in range(n):
        v, u = b.written(code, vals[i], written[i])
        b.add(pid, code, times[i], statuses[i], v, u)
    if trap == "entered_in_error":
        b.add(pid, code, times[n], "entered-in-error", _threshold_value(b, family, not met), canon)


def _intended(b: _Builder, family: str, trap: str) -> str:
    if trap == "missing":
        return "unknown"
    if trap == "unit_variant" and family != "potassium-latest":
        return "not_met"  # /uL or umol/L read naively look large: the trap flips to "met"
    if trap == "amended" and family == "creatinine-rise":
        return "met"  # the rise is in the amended value; filtering status=final hides it
    if trap == "page2" and family == "creatinine-rise":
        return "met"  # the rise is the last value, on page 2: page 1 alone shows none
    if trap == "entered_in_error" and family == "creatinine-rise":
        return "not_met"  # the withdrawn spike would fake a rise
    return "met" if b.rng.random() < 0.5 else "not_met"


@lru_cache(maxsize=8)
def build_world(seed: int = 0, *, variants: int = 6, n_background: int = 120) -> World:
    """The world for ``seed``: one scenario patient per family × trap × variant, a look-alike
    twin for each lookalike scenario, ``n_background`` background patients (some of them
    look-alikes of each other)."""
    b = _Builder(seed)
    scenarios: dict[tuple[str, str, int], Scenario] = {}
    for family in FAMILIES:
        for trap in TRAPS:
            for k in range(variants):
                end = int(b.rng.integers(540, _DAYS - 1))
                start = end - int(b.rng.choice((90, 120, 180)))
                window = (start, end)
                intended = _intended(b, family, trap)
                pid = b.patient()
                twin = None
                b.background(pid, skip=(FAMILIES[family], window))
                _scenario_series(b, pid, family, trap, window, intended)
                if trap == "lookalike":
                    p = b.patients[pid]["name"][0]
                    twin = b.patient(p["given"][0], p["family"])
                    b.background(twin, skip=(FAMILIES[family], window))
                    opposite = "not_met" if intended == "met" else "met"
                    _scenario_series(b, twin, family, "none", window, opposite)
                dates = (_iso(start, 0)[:10], _iso(end, 0)[:10])
                sc = Scenario(family, trap, k, pid, twin, dates, intended)
                _assert_decisive(b.obs, sc)
                scenarios[(family, trap, k)] = sc
    for i in range(n_background):
        if i % 10 == 9:  # a background look-alike of the previous patient
            prev = next(reversed(b.patients.values()))["name"][0]
            pid = b.patient(prev["given"][0], prev["family"])
        else:
            pid = b.patient()
        b.background(pid)
    return World(seed, b.patients, b.obs, scenarios)


# --- every trap is decisive ---------------------------------------------------------------
# The generator checks its own work: reading a scenario the way its trap invites (first page
# only, status=final, withdrawn rows kept, units taken as canonical, the look-alike's labs, any
# row whatever for "missing") must change the status or the value beyond the task's tolerance.
# Else the trap tests nothing (creatinine's amendment used to leave the rise visible in later
# final rows; potassium's mEq/L variant equals mmol/L).
def _reading(obs: list[Obs], sc: Scenario, pid: str, mishandle: bool) -> tuple[str, float | None]:
    code = FAMILIES[sc.family]
    lo, hi = sc.window
    rows = sorted((o for o in obs if o.patient == pid and o.code == code), key=lambda o: o.when)
    inside = [o for o in rows if lo <= o.when[:10] <= hi]
    trap = sc.trap if mishandle else "none"
    if trap == "missing":
        valid = rows  # any row at all, in or out of the window, any status
    elif trap == "entered_in_error":
        valid = inside
    elif trap == "amended":
        valid = [o for o in inside if o.status == "final"]
    else:
        valid = [o for o in inside if o.status in VALID_STATUSES]
    if trap == "page2":
        valid = valid[:10]  # oldest first, first page only
    factors = UNIT_FACTORS[code]
    pts = [(o.when, o.value * (1.0 if trap == "unit_variant" else factors[o.unit])) for o in valid]
    if sc.family == "creatinine-rise":
        if len(pts) < 2:
            return "unknown", None
        ts = [date.fromisoformat(w[:10]).toordinal() * 24 + int(w[11:13]) for w, _ in pts]
        rises = [
            pts[j][1] - pts[i][1]
            for i in range(len(pts))
            for j in range(i + 1, len(pts))
            if ts[j] - ts[i] <= CREATININE_RISE[1] + 1
        ]
        top = max(rises) if rises else None
        return ("met" if top is not None and top >= CREATININE_RISE[0] else "not_met"), top
    if not pts:
        return "unknown", None
    v = pts[-1][1]
    if sc.family == "potassium-latest":
        return ("met" if POTASSIUM_RANGE[0] <= v <= POTASSIUM_RANGE[1] else "not_met"), v
    return ("met" if v >= THRESHOLDS[sc.family] else "not_met"), v


def _assert_decisive(obs: list[Obs], sc: Scenario) -> None:
    if sc.trap == "none":
        return
    right = _reading(obs, sc, sc.patient_id, mishandle=False)
    pid = sc.twin_id if sc.trap == "lookalike" and sc.twin_id else sc.patient_id
    wrong = _reading(obs, sc, pid, mishandle=sc.trap != "lookalike")
    if right[0] != wrong[0]:
        return
    a, b = right[1], wrong[1]
    if (a is None) != (b is None) or (
        a is not None and b is not None and abs(a - b) > max(0.01 * abs(a), 0.005)
    ):
        return
    raise AssertionError(
        f"the {sc.trap} trap of {sc.family} variant {sc.variant} is not decisive: mishandling "
        f"it still gives {wrong}, like the right reading {right}"
    )


def window_days(window: tuple[str, str]) -> tuple[int, int]:
    """Day numbers of an inclusive date window (for tests and policies)."""
    return _day(window[0]), _day(window[1])
