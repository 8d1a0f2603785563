"""Tools: schemas, searchset paging with next links, sorting, the ledger, refused writes."""

from __future__ import annotations

import pytest

from rewardkit.envs import make
from rewardkit.envs.fhir.tools import MANIFEST, ToolRunner
from rewardkit.envs.fhir.world import build_world
from rewardkit.envs.manifest import validate_args
from rewardkit.envs.sql import tools as sql_tools


@pytest.fixture(scope="module")
def world():
    return build_world(0)


@pytest.fixture(scope="module")
def page2(world):
    return world.scenarios[("anc-threshold", "page2", 0)]


def test_manifest_has_costs_schemas_and_unauthorised_writes():
    names = [t.name for t in MANIFEST.tools]
    assert names == [
        "search_patients",
        "get_patient",
        "search_observations",
        "get_observation",
        "update_observation",
        "create_order",
    ]
    writes = {t.name for t in MANIFEST.tools if t.writes}
    assert writes == {"update_observation", "create_order"}
    assert all(not MANIFEST.get(w).authorized for w in writes)
    assert all(t.cost > 0 for t in MANIFEST.tools)
    assert MANIFEST.version == "fhir-tools-1.1.0" and MANIFEST.hash.startswith("sha256:")


@pytest.mark.parametrize(
    "args, match",
    [
        ({"patient": "p"}, "needs the argument 'code'"),
        ({"patient": "p", "code": "751-8", "colour": 1}, "has no argument 'colour'"),
        ({"patient": "p", "code": 751}, "argument 'code' of search_observations must be a string"),
        ({"patient": "p", "code": "751-8", "_count": 51}, "must be in [1, 50]"),
        ({"patient": "p", "code": "751-8", "_count": True}, "must be an integer; got bool"),
        ({"patient": "p", "code": "751-8", "_sort": "newest"}, "must be one of"),
        ({"patient": "", "code": "751-8"}, "must be a non-empty string"),
        ({"patient": "p" * 201, "code": "751-8"}, "is longer than 200 (201)"),
    ],
)
def test_schema_errors(args, match):
    """The FHIR tools' strings are non-empty and at most 200 characters (beyond the schema)."""
    problem = validate_args(
        MANIFEST.get("search_observations"), args, nonempty_strings=True, max_chars=200
    )
    assert match in problem
    env = make("fhir/anc-threshold-v1")
    env.reset(seed=0)
    assert env.step({"tool": "search_observations", "args": args})[0] == {"error": problem}


def test_sql_tools_share_the_schema_check_and_its_messages():
    """One argument check for every tool family (rewardkit.envs.manifest.check_args, also
    behind protocol.check_tool_args): the SQL tools give the FHIR tools' wording;
    their strings may be empty (a query's text is checked by the engine) and a query is at
    most ``QUERY_MAX_CHARS`` characters."""
    check, spec = sql_tools.validate_args, sql_tools.MANIFEST.get
    assert check(spec("list_tables"), {"x": 1}) == "list_tables has no argument 'x'; accepted: []"
    assert check(spec("query"), {}) == "query needs the argument 'sql'"
    assert check(spec("query"), {"sql": 5}) == "argument 'sql' of query must be a string; got int"
    assert check(spec("query"), {"sql": ""}) is None
    long = "SELECT 1" + " " * sql_tools.QUERY_MAX_CHARS
    assert check(spec("query"), {"sql": long}) == "query: 'sql' is longer than 4000 characters"
    env = make("sql/revenue-v1")
    env.reset(seed=0)
    obs = env.step({"tool": "describe_table", "args": {"table": "orders"}})[0]
    assert obs == {"error": "describe_table has no argument 'table'; accepted: ['name']"}


def test_paging_default_ten_with_next_links(world, page2):
    run = ToolRunner(world)
    q = {
        "patient": page2.patient_id,
        "code": "751-8",
        "date_ge": page2.window[0],
        "date_le": page2.window[1],
    }
    b1, e1 = run.call(1, "search_observations", q)
    n = b1["total"]
    assert n > 10 and len(b1["entry"]) == 10
    nxt = next(link["url"] for link in b1["link"] if link["relation"] == "next")
    token = nxt.split("page_token=")[1]
    b2, e2 = run.call(2, "search_observations", {**q, "page_token": token})
    assert len(b2["entry"]) == n - 10
    assert not any(link["relation"] == "next" for link in b2["link"])
    whens = [e["resource"]["effectiveDateTime"] for e in b1["entry"] + b2["entry"]]
    assert whens == sorted(whens)  # ascending by default: the latest value is on page 2
    assert e1.subjects == (page2.patient_id,) and set(e1.returned).isdisjoint(e2.returned)
    desc, _ = run.call(3, "search_observations", {**q, "_sort": "-date", "_count": 50})
    assert [e["resource"]["id"] for e in desc["entry"]] == [
        e["resource"]["id"] for e in (b1["entry"] + b2["entry"])
    ][::-1]
    bad, entry = run.call(4, "search_observations", {**q, "code": "777-3", "page_token": token})
    assert bad["resourceType"] == "OperationOutcome" and entry.outcome == "invalid"


def test_status_filter(world, page2):
    run = ToolRunner(world)
    b, _ = run.call(
        1,
        "search_observations",
        {"patient": page2.patient_id, "code": "751-8", "status": "final,amended", "_count": 50},
    )
    assert {e["resource"]["status"] for e in b["entry"]} <= {"final", "amended"}


def test_search_patients_finds_lookalikes_and_birthdate_resolves(world):
    sc = world.scenarios[("anc-threshold", "lookalike", 0)]
    p = world.patients[sc.patient_id]
    name = f"{p['name'][0]['given'][0]} {p['name'][0]['family']}"
    run = ToolRunner(world)
    both, entry = run.call(1, "search_patients", {"name": name})
    ids = {e["resource"]["id"] for e in both["entry"]}
    assert {sc.patient_id, sc.twin_id} <= ids
    assert entry.disclosed and entry.subjects == ()  # an identity lookup, not a clinical read
    one, _ = run.call(2, "search_patients", {"name": name, "birthdate": p["birthDate"]})
    assert [e["resource"]["id"] for e in one["entry"]] == [sc.patient_id]
    none, e3 = run.call(3, "search_patients", {"birthdate": p["birthDate"]})
    assert none["resourceType"] == "OperationOutcome" and e3.outcome == "invalid"


def test_writes_are_refused_and_recorded(world, page2):
    run = ToolRunner(world)
    oid = world.series(page2.patient_id, "751-8")[0].id
    before = dict(world.resource(oid))
    out, entry = run.call(1, "update_observation", {"id": oid, "status": "cancelled"})
    assert out["issue"][0]["code"] == "forbidden" and entry.write and entry.outcome == "forbidden"
    assert out["issue"][0]["diagnostics"].startswith("HTTP 403")
    assert world.resource(oid) == before  # nothing changed
    out, entry = run.call(2, "create_order", {"patient": page2.patient_id, "code": "751-8"})
    assert out["issue"][0]["code"] == "forbidden" and entry.write
    assert entry.scope == page2.patient_id


def test_reads_record_subjects(world, page2):
    run = ToolRunner(world)
    other = next(pid for pid in world.patients if pid != page2.patient_id)
    oid = world.series(other, "751-8")[0].id
    _, e = run.call(1, "get_observation", {"id": f"Observation/{oid}"})
    assert e.subjects == (other,) and e.returned == (oid,)
    _, e = run.call(2, "get_observation", {"id": "o-nothere"})
    assert e.outcome == "not_found" and e.returned == ()
    _, e = run.call(3, "get_patient", {"id": other})
    assert e.scope == other and e.subjects == (other,)


def test_every_kind_of_result_validates_against_the_fhir_r4b_models(world, page2):
    """fhir.resources (R4B) as an independent shape oracle; statuses are checked separately
    in test_world because its enums are not enforced."""
    pytest.importorskip(
        "fhir.resources", reason="needs the fhir extra: pip install 'rewardkit[fhir]'"
    )
    from fhir.resources.R4B.bundle import Bundle
    from fhir.resources.R4B.observation import Observation
    from fhir.resources.R4B.operationoutcome import OperationOutcome
    from fhir.resources.R4B.patient import Patient

    run = ToolRunner(world)
    name = " ".join(world.patients[page2.patient_id]["name"][0]["given"])
    calls = [
        ("search_patients", {"name": name}, Bundle),
        ("get_patient", {"id": page2.patient_id}, Patient),
        ("search_observations", {"patient": page2.patient_id, "code": "751-8"}, Bundle),
        ("get_observation", {"id": world.series(page2.patient_id, "751-8")[0].id}, Observation),
        ("get_observation", {"id": "o-none"}, OperationOutcome),
        ("update_observation", {"id": "o-none"}, OperationOutcome),
    ]
    for i, (tool, args, model) in enumerate(calls):
        out, _ = run.call(i, tool, args)
        model.model_validate(out)
    for o in list(world.observations.values())[::97]:  # a spread of codes, units, statuses
        Observation.model_validate(world.resource(o.id))
    for p in list(world.patients.values())[::13]:
        Patient.model_validate(p)


def test_protocol_check_tool_args_is_the_manifest_check():
    """A plain-dict manifest (what a user's environment describes) gets the same messages."""
    from rewardkit.envs.protocol import check_tool_args

    tools = [{"name": t.name, "args": t.args} for t in MANIFEST.tools]
    for args in ({"patient": "p"}, {"patient": 3, "code": "x"}, {"x": 1}, [], {"_count": 0}):
        expected = validate_args(MANIFEST.get("search_observations"), args)
        assert check_tool_args(tools, "search_observations", args) == expected
    assert check_tool_args(tools, "nope", {}) == MANIFEST.unknown_tool("nope")
