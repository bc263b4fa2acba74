"""The servers a bench run starts, and which job rows each is measured on.

| server    | jobs folder                                  | rows                          |
|-----------|----------------------------------------------|-------------------------------|
| floor     | none: one constant answer                    | public_ping                   |
| reference | the plain jobs (its own four, the waits)     | the plain rows                |
| workerd   | the plain jobs, as one generated module      | the plain rows but the logger |
| hub       | the plain jobs and the module jobs           | all                           |
| hub-rpw1  | as the hub, WEBJOB_RUNS_PER_WORKER=1         | public_ping at c1 and c8      |
"""

from pathlib import Path

from bench import hub_jobs, servers, workerd_server
from bench.cases import CASES, FLOOR_CASES, HUB_CASES, RPW1_CASES, WORKERD_CASES, Case
from bench.servers import ServerSpec

REPO_ROOT = Path(__file__).resolve().parent.parent
ANCHOR_DIR = REPO_ROOT.parent / "shared" / "anchors" / "node-worker-per-request"
# The engine setting hub-rpw1 differs by: each worker runs one run at a time, as the
# engine did before one warm isolate served many runs at once.
RUNS_PER_WORKER = "WEBJOB_RUNS_PER_WORKER"

_CASES: dict[str, list[Case]] = {
    "floor": FLOOR_CASES,
    "reference": CASES,
    "workerd": WORKERD_CASES,
    "hub": [*CASES, *HUB_CASES],
    "hub-rpw1": RPW1_CASES,
}


def case_for(name: str, label: str) -> Case | None:
    """The request server `name` gets for job row `label`, or None if it is not measured there."""
    return next((case for case in _CASES[name] if case.label == label), None)


def build_spec(name: str, home: Path, token: str) -> ServerSpec:
    """Server `name` on a free port, its files (jobs, config, hub home) under home."""
    port = servers.free_port()
    reference_jobs = ANCHOR_DIR / "jobs"
    if name == "floor":
        return servers.floor_spec(REPO_ROOT, port)
    if name == "reference":
        plain = hub_jobs.fill_plain_jobs_dir(home / "plain-jobs", reference_jobs)
        return servers.reference_spec(ANCHOR_DIR, port, plain)
    if name == "workerd":
        plain = hub_jobs.fill_plain_jobs_dir(home / "plain-jobs", reference_jobs)
        return workerd_server.workerd_spec(home / "workerd", plain, port)
    jobs = hub_jobs.fill_jobs_dir(home / "bench-jobs", reference_jobs)
    if name == "hub":
        return servers.hub_spec(REPO_ROOT, port, jobs, home, token)
    # A home of its own: two hubs must not share one embedded database.
    (home / name).mkdir(exist_ok=True)
    spec = servers.hub_spec(REPO_ROOT, port, jobs, home / name, token, name)
    spec.env[RUNS_PER_WORKER] = "1"
    return spec
