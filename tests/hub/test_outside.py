"""A job's db.exec() and http() through a real hub: the bridge, the policy, the budget."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"path": self.path, "seen": self.headers.get("X-Probe")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def local_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def execute(hub: HubProcess, code: str) -> dict[str, object]:
    with hub.client() as c:
        resp = c.post("/api/webjobs/execute", headers=AUTH,
                      files={"file": ("t.job.js", code.encode())})
    *_, last = resp.text.strip().splitlines()
    return dict(json.loads(last)) if last.startswith("{") else {"value": json.loads(last)}


def test_db_exec_on_the_embedded_database(start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub(jobs={})
    code = """
await db.exec(
  "CREATE TABLE IF NOT EXISTS dept (id INTEGER PRIMARY KEY, name TEXT, budget REAL)")
const added = await db.exec("INSERT INTO dept (name, budget) VALUES (?, ?), (?, ?)",
                            ["Sales", 1.5, "O'Brien & Co", null])
const rows = await db.exec("SELECT name, budget FROM dept WHERE name <> ? ORDER BY id", ["x"])
let error
try { await db.exec("SELECT * FROM missing_table") }
catch (e) { error = { message: e.message, code: e.code } }
return { added, rows, error }"""
    out = execute(hub, code)
    assert out["added"] == {"affectedRows": 2}
    assert out["rows"] == [{"name": "Sales", "budget": 1.5},
                           {"name": "O'Brien & Co", "budget": None}]
    error = out["error"]
    assert isinstance(error, dict) and "missing_table" in str(error["message"]) and error["code"]
    logged = [ln for ln in hub.log_text().splitlines() if "db.exec failed" in ln]
    assert len(logged) == 1 and "[WebJob:" in logged[0] and "missing_table" in logged[0]
    assert "ref=" in logged[0]


def test_a_failed_statement_carries_the_runs_ref(start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub(jobs={"sql_fails": "await db.exec('SELECT * FROM nowhere'); return 1"})
    with hub.client() as c:
        failure = c.get("/api/webjobs/sql_fails", headers={**AUTH, "Accept": "application/json"})
    ref = failure.json()["ref"]
    assert failure.json()["code"] == "JOB-001" and "nowhere" in failure.json()["error"]
    lines = [ln for ln in hub.log_text().splitlines() if f"ref={ref}" in ln]
    assert any("db.exec failed" in ln for ln in lines)  # the statement's own line
    assert any("failed JOB-001" in ln for ln in lines)  # and the run's


def test_http_under_the_policy(start_hub: Callable[..., HubProcess], local_server: int) -> None:
    hub = start_hub({"WEBJOB_HTTP_TEST_LOOPBACK_PORT": str(local_server)}, {})
    code = f"""
const ok = await http("http://127.0.0.1:{local_server}/hello?x=1",
                      {{ headers: {{ "X-Probe": "p" }} }})
const refused = []
for (const url of ["http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:1/",
                   "http://[::1]:{local_server}/", "file:///etc/passwd",
                   "http://2130706433:1/"]) {{
  try {{ await http(url); refused.push("REACHED " + url) }} catch (e) {{ refused.push(e.message) }}
}}
return {{ status: ok.status, body: ok.json(), refused }}"""
    out = execute(hub, code)
    assert out["status"] == 200 and out["body"] == {"path": "/hello?x=1", "seen": "p"}
    refused = out["refused"]
    assert isinstance(refused, list) and len(refused) == 5
    assert all(r.startswith("http():") for r in refused), refused
    assert "WEBJOB_HTTP_TEST_LOOPBACK_PORT is set" in hub.log_text()


def test_every_call_appears_in_the_console(start_hub: Callable[..., HubProcess],
                                           local_server: int) -> None:
    hub = start_hub({"WEBJOB_HTTP_TEST_LOOPBACK_PORT": str(local_server)}, {})
    code = f"""
await http("http://user:pw@127.0.0.1:{local_server}/one")
try {{ await http("http://10.0.0.1/") }} catch (e) {{}}
return 1"""
    with hub.client() as c:
        resp = c.post("/api/webjobs/execute", headers=AUTH, data={"enableLogger": "1"},
                      files={"file": ("t.job.js", code.encode())})
    logs = [json.loads(ln) for ln in resp.text.splitlines() if '"type":"log"' in ln]
    messages = [(ln["level"], ln["message"]) for ln in logs]
    assert messages[0][0] == "info" and messages[0][1].startswith(
        f"http GET http://127.0.0.1:{local_server}/one -> 200, ")
    assert messages[1][0] == "warn" and "http GET http://10.0.0.1/ refused" in messages[1][1]
    assert "pw" not in resp.text


def test_fifty_calls_a_run(start_hub: Callable[..., HubProcess], local_server: int) -> None:
    hub = start_hub({"WEBJOB_HTTP_TEST_LOOPBACK_PORT": str(local_server)}, {})
    code = f"""
let n = 0
try {{ for (;;) {{ await http("http://127.0.0.1:{local_server}/"); n++ }} }}
catch (e) {{ return {{ n, message: e.message }} }}"""
    out = execute(hub, code)
    assert out["n"] == 50 and "at most 50" in str(out["message"])


def test_without_the_test_port_loopback_is_refused(hub: HubProcess, local_server: int) -> None:
    out = execute(hub, f'try {{ await http("http://127.0.0.1:{local_server}/") }} '
                       'catch (e) { return e.message }')
    assert str(out["value"]).startswith("http():")
    assert httpx.get(f"http://127.0.0.1:{local_server}/").status_code == 200  # it is up


def test_the_test_http_job_finds_every_probe_refused(client: httpx.Client) -> None:
    resp = client.get("/api/webjobs/_test-http", headers={**AUTH, "Accept": "application/json"})
    out = resp.json()
    assert out["allRefused"] is True and out["reached"] == []
    assert len(out["outcomes"]) >= 19
    assert all(v.startswith("refused: http():") for v in out["outcomes"].values()), out


def test_international_names_meet_the_lists_as_a_browser_sends_them(
        start_hub: Callable[..., HubProcess]) -> None:
    """The deny entry names faß.de as a browser sends it (xn--fa-hia.de); a job asking
    for faß.de meets it, and a name IDNA 2008 refuses fails that call alone, in words."""
    hub = start_hub({"WEBJOB_HTTP_DENY": "xn--fa-hia.de, *.bücher.example"}, {})
    code = """
const refused = []
for (const url of ["http://faß.de/", "http://FAß.de./a", "http://shop.Bücher.example/",
                   "http://☃.net/", "http://xn--zz.example/"]) {
  try { await http(url); refused.push("REACHED " + url) } catch (e) { refused.push(e.message) }
}
return { refused }"""
    refused = execute(hub, code)["refused"]
    assert isinstance(refused, list) and len(refused) == 5, refused
    assert all("denied by the hub's network policy" in r for r in refused[:3]), refused
    assert all("is not a valid international domain name" in r for r in refused[3:]), refused
    with hub.client() as c:
        uncaught = c.post("/api/webjobs/execute", headers={**AUTH, "Accept": "application/json"},
                          files={"file": ("t.job.js", b'return await http("http://\\u2603.net/")')})
    assert uncaught.json()["code"] == "JOB-001", uncaught.text
    assert "not a valid international domain name" in uncaught.json()["error"]
