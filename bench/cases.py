"""The requests the benchmark sends, one per job (variant), and how to tell a good answer.

The plain jobs are the reference's own `jobs/` folder, unchanged, and the bench's waits
(bench/hub_jobs.py); the reference, workerd (its JSON rows) and the hub run them. The module
jobs run on the hub only, each warm and with `Isolation: fresh`.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass, replace

from bench.hub_jobs import FRESH_SUFFIX

PRIMES_BELOW_300000 = 25_997
ROW_COUNT = 1000
LOG_LINES = 20

# A check takes the answer's body and returns what is wrong with it, or None.
Check = Callable[[bytes], str | None]

ALL_LEVELS = ("c1", "c8", "c32")
# The timer jobs also at 128 connections: a server that keeps many waiting runs in one
# isolate is limited by its run slots, not its CPU, and shows it only there.
WAIT_LEVELS = (*ALL_LEVELS, "c128")
# slow_api's p50 at 1 is its 500 ms timer and nothing else; its rates are what it is for.
SLOW_LEVELS = ("c8", "c32", "c128")
# wrk counts only the answers that arrive within the run: the round of 500 ms runs still
# waiting when it ends is lost, a quarter of a 2 s run (a server that does it perfectly
# shows 192 req/s at 128, not 256). 10 s runs lose 5 % at most.
SLOW_MIN_DURATION_S = 10


@dataclass(frozen=True)
class Case:
    label: str
    job: str
    query: str
    accept: str
    check: Check
    # The wrk levels it is measured at (bench/wrk_runner.py LEVELS).
    levels: tuple[str, ...] = ALL_LEVELS
    # Also measure the server's CPU per run over the c1 run (bench/proc_cpu.py): warm against
    # fresh is judged on the workers' CPU, which the hub's fixed HTTP path does not blur.
    cpu_per_run: bool = False
    # Its wrk runs last at least this long, whatever --duration or --quick says.
    min_duration_s: int = 0

    @property
    def path(self) -> str:
        suffix = f"?{self.query}" if self.query else ""
        return f"/api/webjobs/{self.job}{suffix}"

    def headers(self, server_headers: dict[str, str]) -> dict[str, str]:
        return {"Accept": self.accept, **server_headers}


def parse_json(body: bytes) -> object:
    try:
        return json.loads(body)
    except ValueError as err:
        raise ValueError(f"not JSON ({err}): {body[:120]!r}") from err


def expect_equal(expected: object) -> Check:
    def check(body: bytes) -> str | None:
        value = parse_json(body)
        return None if value == expected else f"expected {expected!r}, got {body[:120]!r}"

    return check


def check_rows(body: bytes) -> str | None:
    return rows_problem(parse_json(body))


def rows_problem(rows: object) -> str | None:
    if not isinstance(rows, list) or len(rows) != ROW_COUNT:
        return f"expected a list of {ROW_COUNT} rows, got {str(rows)[:120]}"
    if rows[-1] != {"id": 999, "name": "row-999", "value": (999 * 37) % 1000}:
        return f"unexpected last row {rows[-1]!r}"
    return None


def check_rows_ndjson(body: bytes) -> str | None:
    """A metadata line, 20 log lines and the rows last; the reference sends the metadata
    first, a server that streams logs live may send it after them."""
    lines = [parse_json(line) for line in body.splitlines() if line.strip()]
    dicts = [line for line in lines[:-1] if isinstance(line, dict)]
    meta = [line for line in dicts if line.get("isMetaData") is True]
    if len(meta) != 1 or meta[0].get("success") is not True:
        return f"expected one successful metadata line, got {len(meta)}: {body[:120]!r}"
    logs = [line for line in dicts if line.get("type") == "log"]
    if len(logs) != LOG_LINES:
        return f"expected {LOG_LINES} log lines, got {len(logs)}"
    return rows_problem(lines[-1]) if lines else "empty body"


def check_pdf(body: bytes) -> str | None:
    if not body.startswith(b"%PDF-") or not body.rstrip().endswith(b"%%EOF"):
        return f"expected a PDF document, got {body[:120]!r}"
    if body.count(b"/Type /Page\n") != 1:
        return "expected a PDF of one page"
    return None


DATE_FNS_ANSWER = {"from": "2026-01-01", "to": "Saturday 31 January 2026", "days": 30}

JSON = "application/json"
ANY = "*/*"

CASES: list[Case] = [
    Case("public_ping", "public_ping", "who=bench", JSON, expect_equal({"pong": "bench"})),
    Case("logs_and_rows", "logs_and_rows", "", JSON, check_rows),
    Case("logs_and_rows+logger", "logs_and_rows", "enableLogger=1", ANY, check_rows_ndjson),
    Case("cpu_primes", "cpu_primes", "", JSON, expect_equal(PRIMES_BELOW_300000)),
    Case("sleep_io", "sleep_io", "", JSON, expect_equal({"ok": True}), WAIT_LEVELS),
    Case("slow_api", "slow_api", "", JSON, expect_equal({"ok": True}), SLOW_LEVELS,
         min_duration_s=SLOW_MIN_DURATION_S),
]

# Warm against fresh: a run's latency and rate matter, the rate at 32 adds nothing but time.
MODULE_LEVELS = ("c1", "c8")
_MODULE_CASES = [
    Case("date_fns", "date_fns", "", JSON, expect_equal(DATE_FNS_ANSWER), MODULE_LEVELS, True),
    # Accept: application/json, as everywhere: the hub answers a PDF result as the PDF itself.
    Case("pdf_page", "pdf_page", "", JSON, check_pdf, MODULE_LEVELS, True),
]
# The hub-only rows: each module job as written ("warm") and as <job>_fresh.
HUB_CASES: list[Case] = [
    variant
    for case in _MODULE_CASES
    for variant in (case, replace(case, label=case.label + "+fresh", job=case.job + FRESH_SUFFIX))
]
# (warm label, fresh label) pairs the report compares.
WARM_FRESH_PAIRS: list[tuple[str, str]] = [(c.label, c.label + "+fresh") for c in _MODULE_CASES]

# The floor answers every name with the same constant, and is measured on public_ping only.
FLOOR_CASES: list[Case] = [replace(CASES[0], check=expect_equal({"pong": "world"}))]

# workerd's generated module (bench/workerd_server.py) answers plain JSON only: it has no
# logger protocol (NDJSON with the run's console lines).
WORKERD_CASES: list[Case] = [case for case in CASES if case.accept == JSON]

# The hub with one run per worker is the baseline the default hub must stay within 5 % of
# on a run's fixed cost: public_ping's p50 at 1 and its rate at 8, nothing more.
RPW1_CASES: list[Case] = [replace(CASES[0], levels=("c1", "c8"))]


def check_answer(case: Case, status: int, body: bytes) -> str | None:
    """What is wrong with one answer to case, or None when it is a plausible success."""
    if status != 200:
        return f"HTTP {status}: {body[:200]!r}"
    try:
        return case.check(body)
    except ValueError as err:
        return str(err)
