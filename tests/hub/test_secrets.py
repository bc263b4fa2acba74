"""Secrets through a real hub process: the owner API and its refusals, the CLI, the
value sealed at rest, ``Secrets:`` and ``secrets.get`` in runs (undeclared refused,
a change seen by the next run on every node), and the value masked (``***``) in every
way a run's output leaves it: the live NDJSON console, history (console, result,
error, parameters, calls), the page console drawer, the debugger's variable views
and expansions, and the hub's own log."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from shared.ndjson import LogLine, MetaData, Payload, read_stream
from tests.hub.conftest import AUTH, HubProcess, running_hub
from tests.hub.test_debugger import DebugRun

API = "/api/webjobs"
VALUE = "sk_live_Rotate-Me-7f3a9c1e"
PLAIN = {**AUTH, "Accept": "application/json"}

JOBS = {
    "leaky": """/*
Secrets: leak_demo, never_set
*/
const v = secrets.get('leak_demo')
const holder = { inner: { key: v }, list: [v] }
console.log('the value is ' + v)
console.info({ holder })
if (params.db) await db.exec('SELECT * FROM "no_such_table_' + v + '"')
if (params.fail) throw new Error('failing with ' + v)
return { echoed: v, sum: v.length }""",
    "reader": """/*
Secrets: leak_demo
*/
return { value: secrets.get('leak_demo') }""",
    "fishing": "return secrets.get(params.name || 'leak_demo')",
    "missing": "/*\nSecrets: never_set\n*/\nreturn secrets.get('never_set')",
    "public_leaky_page": """/*
Mode: page
Secrets: leak_demo
*/
console.log('page sees ' + secrets.get('leak_demo'))
return response.html('<html><body><p>page</p></body></html>')""",
}


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("secrets"), {"WEBJOB_PAGE_CONSOLE": "1"},
                     JOBS) as process:
        yield process


@pytest.fixture(scope="module")
def client(hub: HubProcess) -> Iterator[httpx.Client]:
    with hub.client() as c:
        answer = c.put(f"{API}/secrets/leak_demo", json={"value": VALUE}, headers=AUTH)
        assert answer.status_code == 200, answer.text
        yield c


def history_record(client: httpx.Client, job_id: str) -> dict[str, Any]:
    """The run's history record, once the background writer has it written."""
    for _ in range(200):
        record = client.get(f"{API}/{job_id}/output", headers=AUTH)
        if record.status_code == 200 and record.json()["outcome"] != "running":
            data: dict[str, Any] = record.json()
            return data
        client.get(f"{API}/health")  # a round trip gives the writer its turn
    raise AssertionError(f"run {job_id} never reached history")


# -- the owner API -------------------------------------------------------------------

def test_list_shows_names_declarers_and_changes_never_values(client: httpx.Client) -> None:
    listed = client.get(f"{API}/secrets", headers=AUTH)
    assert listed.status_code == 200
    assert VALUE not in listed.text
    by_name = {s["name"]: s for s in listed.json()["secrets"]}
    demo = by_name["leak_demo"]
    assert demo["set"] is True and demo["updatedBy"] == "system" and demo["updatedAt"]
    assert demo["declaredBy"] == ["leaky", "public_leaky_page", "reader"]
    assert by_name["never_set"] == {"name": "never_set", "set": False, "declaredBy":
                                    ["leaky", "missing"], "updatedAt": None, "updatedBy": None}
    assert set(demo) == {"name", "set", "declaredBy", "updatedAt", "updatedBy"}


def test_available_says_which_secrets_a_job_declares(client: httpx.Client) -> None:
    jobs = {j["name"]: j for j in client.get(f"{API}/available", headers=AUTH).json()["jobs"]}
    assert jobs["leaky"]["secrets"] == ["leak_demo", "never_set"]
    assert jobs["public_ping"]["secrets"] == []


def test_put_replaces_and_delete_removes(client: httpx.Client) -> None:
    made = client.put(f"{API}/secrets/temp.one", json={"value": "first-value"}, headers=AUTH)
    assert made.json() == {"success": True, "name": "temp.one", "created": True}
    again = client.put(f"{API}/secrets/temp.one", json={"value": "second-value"}, headers=AUTH)
    assert again.json()["created"] is False
    gone = client.delete(f"{API}/secrets/temp.one", headers=AUTH)
    assert gone.status_code == 200 and gone.json() == {"success": True, "name": "temp.one"}
    missing = client.delete(f"{API}/secrets/temp.one", headers=AUTH)
    assert missing.status_code == 404 and missing.json()["code"] == "SYS-404"
    names = [s["name"] for s in client.get(f"{API}/secrets", headers=AUTH).json()["secrets"]]
    assert "temp.one" not in names
    story = client.get(f"{API}/secrets/temp.one/changes", headers=AUTH).json()
    assert [c["action"] for c in story["changes"]][:3] == ["delete", "set", "set"]
    assert all(c["by"] and c["at"].endswith("Z") for c in story["changes"])
    assert "first-value" not in str(story) and "second-value" not in str(story)


@pytest.mark.parametrize(("path", "body", "says"), [
    ("/secrets/bad%20name", {"value": "long enough"}, "is not a secret name"),
    ("/secrets/9starts_with_digit", {"value": "long enough"}, "is not a secret name"),
    (f"/secrets/{'n' * 65}", {"value": "long enough"}, "is not a secret name"),
    ("/secrets/ok_name", {"value": "short"}, "6 to 16384 characters"),
    ("/secrets/ok_name", {"value": 12345678}, "'value' must be"),
    ("/secrets/ok_name", {}, "'value' must be"),
    ("/secrets/ok_name", {"value": "x" * 16385}, "6 to 16384 characters"),
    ("/secrets/ok_name", {"value": "has\u0000nul"}, "NUL"),
])
def test_bad_names_and_values_are_hub_001(client: httpx.Client, path: str, body: Any,
                                          says: str) -> None:
    answer = client.put(API + path, json=body, headers=AUTH)
    assert answer.status_code == 400, answer.text
    data = answer.json()
    assert data["code"] == "HUB-001" and says in data["error"] and data["ref"]
    assert "Traceback" not in answer.text and "/work" not in answer.text


def test_a_body_that_is_not_json_is_hub_001(client: httpx.Client) -> None:
    answer = client.put(f"{API}/secrets/ok_name", content=b"{nope", headers=AUTH)
    assert answer.status_code == 400 and answer.json()["code"] == "HUB-001"


def test_non_owners_are_refused(hub: HubProcess, client: httpx.Client) -> None:
    user = {"Authorization": f"Bearer {hub.add_user('plain_user')}"}
    calls: list[tuple[str, str, dict[str, Any] | None]] = [
        ("GET", "/secrets", None), ("PUT", "/secrets/leak_demo", {"value": "hijacked!"}),
        ("DELETE", "/secrets/leak_demo", None), ("GET", "/secrets/leak_demo/changes", None)]
    for method, path, body in calls:
        refused = client.request(method, API + path, json=body, headers=user)
        assert refused.status_code == 403 and refused.json()["code"] == "SYS-403"
        anonymous = client.request(method, API + path, json=body)
        assert anonymous.status_code == 401
        assert anonymous.json()["code"] == "AUTH-SESSION-001"
    value = client.get(f"{API}/reader", headers=PLAIN).json()["value"]
    assert value == VALUE  # nothing changed


# -- at rest and the CLI -------------------------------------------------------------

def test_the_database_files_never_hold_the_value(hub: HubProcess, client: httpx.Client) -> None:
    files = list(hub.home.glob("hub.db*"))
    assert files
    for path in files:
        assert VALUE.encode() not in path.read_bytes(), path.name


def test_cli_set_list_delete(hub: HubProcess, client: httpx.Client) -> None:
    made = hub.cli("secret", "set", "from_cli", stdin="cli-secret-value\n")
    assert (made.returncode, made.stdout, made.stderr) == (0, "created from_cli\n", "")
    listed = hub.cli("secret", "list")
    assert listed.returncode == 0 and "cli-secret-value" not in listed.stdout
    line = next(ln for ln in listed.stdout.splitlines() if ln.startswith("from_cli\t"))
    assert line.split("\t")[2].startswith("cli") and line.endswith("\t-")
    leak = next(ln for ln in listed.stdout.splitlines() if ln.startswith("leak_demo\t"))
    assert leak.endswith("\tleaky,public_leaky_page,reader")
    over_http = client.get(f"{API}/secrets", headers=AUTH).json()["secrets"]
    assert any(s["name"] == "from_cli" and s["set"] for s in over_http)
    assert hub.cli("secret", "delete", "from_cli").returncode == 0
    again = hub.cli("secret", "delete", "from_cli")
    assert again.returncode == 2 and again.stderr.startswith("webhub: SYS-404: ")
    bad = hub.cli("secret", "set", "no good", stdin="whatever-value\n")
    assert bad.returncode == 2 and bad.stderr.startswith("webhub: HUB-001: ")
    assert "Traceback" not in bad.stderr + again.stderr


# -- in runs -------------------------------------------------------------------------

def test_an_undeclared_secret_is_refused(client: httpx.Client) -> None:
    fished = client.get(f"{API}/fishing", headers=PLAIN)
    assert fished.status_code == 500
    body = fished.json()
    assert body["code"] == "JOB-001" and "Secret 'leak_demo' is not declared" in body["error"]
    missing = client.get(f"{API}/missing", headers=PLAIN).json()
    assert missing["code"] == "JOB-001" and "Secret 'never_set' is not set" in missing["error"]


def test_rotation_is_seen_by_the_next_run_on_every_node(
        start_hub: Callable[..., HubProcess], tmp_path: Path) -> None:
    shared = {"WEBHUB_DB": f"sqlite:///{tmp_path / 'shared-hub.db'}",
              "WEBHUB_SECRET": "one secret for the whole cluster"}
    jobs = {"reader": JOBS["reader"]}
    first = start_hub({**shared, "WEBHUB_NODE": "node-one"}, jobs)
    second = start_hub({**shared, "WEBHUB_NODE": "node-two"}, jobs)
    with first.client(headers=PLAIN) as one, second.client(headers=PLAIN) as two:
        for value in ("first-value-1", "second-value-2"):
            assert one.put(f"{API}/secrets/leak_demo", json={"value": value}).status_code == 200
            assert two.get(f"{API}/reader").json() == {"value": value}
            assert one.get(f"{API}/reader").json() == {"value": value}
        assert two.delete(f"{API}/secrets/leak_demo").status_code == 200
        gone = one.get(f"{API}/reader").json()
        assert gone["code"] == "JOB-001" and "not set" in gone["error"]


# -- masking -------------------------------------------------------------------------

def assert_masked(text: str) -> None:
    assert VALUE not in text and "Rotate-Me" not in text, text[:2000]


def test_live_console_is_masked_and_the_answer_is_the_jobs(client: httpx.Client) -> None:
    answer = client.get(f"{API}/leaky", params={"enableLogger": "1"}, headers=AUTH)
    events = list(read_stream([answer.content]))
    logs = [e for e in events if isinstance(e, LogLine)]
    assert logs[0].message == "the value is ***"
    assert_masked(json.dumps([e.message for e in logs]))
    meta, payload = events[len(logs):]
    assert isinstance(meta, MetaData) and isinstance(payload, Payload)
    # The job's answer is its own business (see the README): it returned the value.
    assert json.loads(payload.data)["echoed"] == VALUE
    record = history_record(client, meta.jobId)
    assert_masked(json.dumps(record))
    assert json.loads(record["result"]) == {"echoed": "***", "sum": len(VALUE)}
    assert record["logs"][0]["message"] == "the value is ***"
    kept = client.get(f"{API}/{meta.jobId}/logs", headers=AUTH)
    assert kept.status_code == 200 and "***" in kept.text
    assert_masked(kept.text)


def test_failures_are_masked_in_the_answer_history_and_log(hub: HubProcess,
                                                           client: httpx.Client) -> None:
    failed = client.get(f"{API}/leaky", params={"fail": "1", "note": VALUE}, headers=PLAIN)
    assert failed.status_code == 500
    body = failed.json()
    assert body["error"] == "Error: failing with *** (line 9)"
    record = history_record(client, failed.headers["x-job-id"])
    assert record["message"] == "Error: failing with *** (line 9)"
    assert record["params"] == {"fail": "1", "note": "***"}
    assert_masked(json.dumps(record))
    assert body["ref"] in hub.log_text()


def test_queries_and_driver_errors_are_masked(hub: HubProcess, client: httpx.Client) -> None:
    failed = client.get(f"{API}/leaky", params={"db": "1"}, headers=PLAIN)
    assert failed.status_code == 500
    assert_masked(failed.text)
    record = history_record(client, failed.headers["x-job-id"])
    assert record["calls"] and record["calls"][0]["kind"] == "db"
    assert "no_such_table_***" in record["calls"][0]["sql"]
    assert_masked(json.dumps(record))
    assert "no such table: no_such_table_***" in hub.log_text()


def test_page_drawer_is_masked(client: httpx.Client) -> None:
    page = client.get(f"{API}/public_leaky_page",
                      params={"_console": "1", "echo": VALUE}, headers={"Accept": "text/html"})
    assert page.status_code == 200 and 'id="webjobs-console"' in page.text
    assert "page sees ***" in page.text
    assert_masked(page.text)


def test_debugger_views_and_expansions_are_masked(hub: HubProcess,
                                                 client: httpx.Client) -> None:
    run = DebugRun(hub, "leaky", {"params": {}, "stepFromStart": False, "breakpoints": [7]})
    pause = run.next("pause")
    assert pause["line"] == 7
    assert pause["vars"]["v"] == {"type": "string", "value": "***"}
    assert_masked(json.dumps(pause))
    handle = pause["vars"]["holder"]["handle"]
    inner = run.command("expand", handle=handle)["entries"]["inner"]
    opened = run.command("expand", handle=inner["handle"])
    assert opened["entries"]["key"] == {"type": "string", "value": "***"}
    run.command("continue")
    logged = run.next("log")  # console.info at line 7, run on from the pause
    assert logged["message"] == '{"holder":{"inner":{"key":"***"},"list":["***"]}}'
    assert_masked(json.dumps(run.next("meta")))
    # The debugger shows the run to its owner: the result is masked there too.
    assert json.loads(run.next("payload")["data"])["echoed"] == "***"


def test_no_value_in_the_hub_log(hub: HubProcess, client: httpx.Client) -> None:
    client.get(f"{API}/leaky", params={"fail": "1"}, headers=PLAIN)
    assert "failing with ***" in hub.log_text()
    assert_masked(hub.log_text())
