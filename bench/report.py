"""Turn measured runs into the Markdown table, the ratio table and the target lines."""

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.cases import CASES, HUB_CASES, WARM_FRESH_PAIRS
from bench.proc_cpu import CpuPerRun
from bench.wrk_runner import WrkResult

SERVERS = ("floor", "reference", "workerd", "hub", "hub-rpw1")
# The servers the hub's rows are compared with, each in a table of ratios: the floor (our
# stack's fastest answer), the reference (the design the hub replaces), workerd (one warm
# isolate and nothing else: an upper bound), and the hub with one run per worker.
ANCHORS = ("floor", "reference", "workerd", "hub-rpw1")
JOB_ORDER = tuple(case.label for case in (*CASES, *HUB_CASES))


@dataclass
class Row:
    """One server on one job: its wrk runs by level (c1 ... c128), or why there are none."""

    server: str
    label: str
    status: str = "ok"  # ok | skipped | check failed | error
    note: str = ""
    runs: dict[str, WrkResult] = field(default_factory=dict)
    cpu: CpuPerRun | None = None  # over the c1 run, for the cases that ask for it

    def metric(self, name: str) -> float | None:
        if name in CPU_METRICS:
            return None if self.cpu is None else float(getattr(self.cpu, CPU_METRICS[name]))
        level, key = METRICS[name]
        run = self.runs.get(level)
        if run is None:
            return None
        return run.rps if key == "rps" else run.latency_ms[key]

    @property
    def errors(self) -> int:
        return sum(run.errors for run in self.runs.values())

    def error_text(self) -> str:
        parts = [f"{level}: {run.error_text()}" for level, run in self.runs.items() if run.errors]
        return "; ".join(parts)

    def to_json(self) -> dict[str, object]:
        metrics = {name: self.metric(name) for name in METRICS}
        runs = {level: run.to_json() for level, run in self.runs.items()}
        cpu = {} if self.cpu is None else {"cpu": self.cpu.to_json()}
        return {
            "server": self.server,
            "job": self.label,
            "status": self.status,
            "note": self.note,
            **metrics,
            "errors": self.errors,
            "runs": runs,
            **cpu,
        }


# Metric name -> (wrk level it comes from, field of that run).
METRICS: dict[str, tuple[str, str]] = {
    "p50_ms": ("c1", "p50"),
    "p99_ms": ("c1", "p99"),
    "rps_c8": ("c8", "rps"),
    "rps_c32": ("c32", "rps"),
    "rps_c128": ("c128", "rps"),
}
# Metric name -> CpuPerRun property, in ms per run (Row.cpu, over the c1 run).
CPU_METRICS: dict[str, str] = {
    "workers_cpu_ms": "workers_ms_per_run",
    "hub_cpu_ms": "hub_ms_per_run",
    "total_cpu_ms": "total_ms_per_run",
}


@dataclass(frozen=True)
class Target:
    job: str
    metric: str
    other: str  # the server the hub is compared with; "" for a fixed threshold (offset)
    factor: float
    offset: float  # added to factor * other, in the metric's unit
    rule: str  # how the threshold reads, e.g. "12 x reference"
    other_job: str = ""  # the other server's job, when it is not `job` (warm vs fresh)
    beside: tuple[str, ...] = ()  # metrics whose ratios are reported with it, not judged

    @property
    def other_name(self) -> str:
        return self.other_job or self.other

    @property
    def lower_is_better(self) -> bool:
        return self.metric.endswith("_ms")


# Issue 18's speed targets (the warm engine); public_ping's CPU per run and the JIT cliff are
# judged in bench/engine_checks.py. Warm against fresh is judged on the workers' CPU per run:
# p50 and rate include the hub's fixed HTTP path, the same in both modes, so they cannot show
# the engine's difference in full; they are reported beside it.
FRESH_FACTOR = 10.0
FRESH_BESIDE = ("total_cpu_ms", "p50_ms", "rps_c8")
TARGETS: tuple[Target, ...] = (
    Target("public_ping", "p50_ms", "floor", 1.0, 1.5, "floor + 1.5 ms"),
    Target("public_ping", "rps_c8", "reference", 12.0, 0.0, "12 x reference"),
    Target("logs_and_rows", "rps_c8", "reference", 8.0, 0.0, "8 x reference"),
    Target("cpu_primes", "rps_c8", "reference", 1.4, 0.0, "1.4 x reference"),
    Target("sleep_io", "rps_c32", "reference", 3.0, 0.0, "3 x reference"),
    # Issue 32: runs waiting on timers share a worker's warm isolate, up to
    # WEBJOB_RUNS_PER_WORKER of them, without slowing a single run down.
    Target("sleep_io", "rps_c32", "workerd", 0.90, 0.0, "0.90 x workerd"),
    Target("slow_api", "rps_c128", "", 0.0, 200.0, "200 req/s"),
    Target("public_ping", "rps_c8", "hub-rpw1", 0.95, 0.0, "0.95 x hub-rpw1"),
    Target("public_ping", "p50_ms", "hub-rpw1", 1.05, 0.0, "1.05 x hub-rpw1"),
    *(
        Target(warm, "workers_cpu_ms", "hub", 1 / FRESH_FACTOR, 0.0, f"{fresh} / 10", fresh,
               FRESH_BESIDE)
        for warm, fresh in WARM_FRESH_PAIRS
    ),
)


def fmt_ms(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def fmt_rps(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def fmt_metric(name: str, value: float | None) -> str:
    return fmt_ms(value) if name.endswith("_ms") else fmt_rps(value)


def ordered(rows: list[Row]) -> list[Row]:
    def key(row: Row) -> tuple[int, int]:
        return JOB_ORDER.index(row.label), SERVERS.index(row.server)

    return sorted(rows, key=key)


def results_table(rows: list[Row]) -> list[str]:
    lines = [
        "| job | server | p50 ms (c1) | p99 ms (c1) | rps @8 | rps @32 | rps @128 | errors "
        "| note |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in ordered(rows):
        cells = [row.label, row.server, fmt_ms(row.metric("p50_ms")), fmt_ms(row.metric("p99_ms"))]
        cells += [fmt_rps(row.metric(name)) for name in ("rps_c8", "rps_c32", "rps_c128")]
        errors = str(row.errors) if row.runs else "—"
        cells += [f"**{errors}**" if row.errors else errors, row_note(row)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def row_note(row: Row) -> str:
    parts = [] if row.status == "ok" else [row.status]
    parts += [text for text in (row.note, row.error_text()) if text]
    return "; ".join(parts).replace("|", "/")


def find(rows: list[Row], server: str, label: str) -> Row | None:
    return next((r for r in rows if r.server == server and r.label == label), None)


def ratio(hub: float | None, ref: float | None, lower_is_better: bool) -> float | None:
    if not hub or not ref:
        return None
    return ref / hub if lower_is_better else hub / ref


RATIO_METRICS = ("p50_ms", "rps_c8", "rps_c32", "rps_c128")


def ratio_table(rows: list[Row], anchor: str = "reference") -> list[str]:
    """The hub's rows as ratios to the anchor's, each > 1 where the hub is better."""
    lines = [
        f"| job | p50: {anchor} ÷ hub | rps @8: hub ÷ {anchor} | rps @32: hub ÷ {anchor} "
        f"| rps @128: hub ÷ {anchor} |",
        "|---|---:|---:|---:|---:|",
    ]
    for label in JOB_ORDER:
        hub, other = find(rows, "hub", label), find(rows, anchor, label)
        if hub is None or other is None or not hub.runs or not other.runs:
            continue
        cells = [label]
        for name in RATIO_METRICS:
            value = ratio(hub.metric(name), other.metric(name), name.endswith("_ms"))
            cells.append("—" if value is None else f"{value:.2f}x")
        lines.append("| " + " | ".join(cells) + " |")
    return lines if len(lines) > 2 else []


def warm_fresh_table(rows: list[Row]) -> list[str]:
    """Each module job as written against the same job with `Isolation: fresh`."""
    lines = [
        "| job | p50 ms warm | p50 ms fresh | fresh ÷ warm | rps @8 warm | rps @8 fresh "
        "| warm ÷ fresh |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for warm_label, fresh_label in WARM_FRESH_PAIRS:
        warm, fresh = find(rows, "hub", warm_label), find(rows, "hub", fresh_label)
        if warm is None or fresh is None or not warm.runs or not fresh.runs:
            continue
        cells = [warm_label]
        for name in ("p50_ms", "rps_c8"):
            w, f = warm.metric(name), fresh.metric(name)
            value = ratio(w, f, name.endswith("_ms"))
            ratio_cell = "—" if value is None else f"{value:.2f}x"
            cells += [fmt_metric(name, w), fmt_metric(name, f), ratio_cell]
        lines.append("| " + " | ".join(cells) + " |")
    return lines if len(lines) > 2 else []


def warm_fresh_cpu_table(rows: list[Row]) -> list[str]:
    """CPU per run over each module job's c1 run, warm against fresh: the hub process's, and
    every worker process's (spares included), with how many times more fresh takes."""
    lines = [
        "| job | hub ms warm | workers ms warm | hub ms fresh | workers ms fresh "
        "| workers: fresh ÷ warm | hub + workers: fresh ÷ warm |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for warm_label, fresh_label in WARM_FRESH_PAIRS:
        warm, fresh = find(rows, "hub", warm_label), find(rows, "hub", fresh_label)
        if warm is None or fresh is None or warm.cpu is None or fresh.cpu is None:
            continue
        cells = [warm_label]
        for row in (warm, fresh):
            cells += [fmt_ms(row.metric("hub_cpu_ms")), fmt_ms(row.metric("workers_cpu_ms"))]
        for name in ("workers_cpu_ms", "total_cpu_ms"):
            value = ratio(warm.metric(name), fresh.metric(name), True)
            cells.append("—" if value is None else f"{value:.2f}x")
        lines.append("| " + " | ".join(cells) + " |")
    return lines if len(lines) > 2 else []


@dataclass
class Verdict:
    target: Target
    verdict: str  # PASS | FAIL | SKIP
    text: str


def judge(target: Target, rows: list[Row]) -> Verdict:
    if not target.other:
        return judge_fixed(target, find(rows, "hub", target.job))
    hub = find(rows, "hub", target.job)
    other = find(rows, target.other, target.other_job or target.job)
    hub_value = hub.metric(target.metric) if hub else None
    other_value = other.metric(target.metric) if other else None
    head = f"{target.job} {METRIC_NAMES[target.metric]}:"
    if hub_value is None or other_value is None:
        missing = "hub" if hub_value is None else target.other_name
        return Verdict(target, "SKIP", f"{head} hub vs {target.rule} — {missing} not measured")
    threshold = other_value * target.factor + target.offset
    met = hub_value <= threshold if target.lower_is_better else hub_value >= threshold
    op = "<=" if target.lower_is_better else ">="
    text = (
        f"{head} hub {with_unit(target.metric, hub_value)}, needs {op} {target.rule} = "
        f"{with_unit(target.metric, threshold)} ({target.other_name} "
        f"{with_unit(target.metric, other_value)}; {comparison(target, hub_value, other_value)})"
        f"{beside_text(target, hub, other)}"
    )
    errors = sum(row.errors for row in (hub, other) if row is not None and row.server == "hub")
    if errors:
        return Verdict(target, "FAIL", f"{text} — the hub's runs had {errors} errors")
    return Verdict(target, "PASS" if met else "FAIL", text)


def judge_fixed(target: Target, hub: Row | None) -> Verdict:
    """A target with a fixed threshold (target.offset), whatever the other servers do."""
    value = hub.metric(target.metric) if hub else None
    head = f"{target.job} {METRIC_NAMES[target.metric]}:"
    if hub is None or value is None:
        return Verdict(target, "SKIP", f"{head} hub vs {target.rule} — hub not measured")
    met = value <= target.offset if target.lower_is_better else value >= target.offset
    op = "<=" if target.lower_is_better else ">="
    text = f"{head} hub {with_unit(target.metric, value)}, needs {op} {target.rule}"
    if hub.errors:
        return Verdict(target, "FAIL", f"{text} — the hub's runs had {hub.errors} errors")
    return Verdict(target, "PASS" if met else "FAIL", text)


def beside_text(target: Target, hub: Row | None, other: Row | None) -> str:
    """The ratios of target.beside, reported with the verdict but not judged, each as how
    many times better the hub's row is than the other's."""
    if not target.beside or hub is None or other is None:
        return ""
    parts = []
    for name in target.beside:
        value = ratio(hub.metric(name), other.metric(name), name.endswith("_ms"))
        parts.append(f"{METRIC_NAMES[name]} {'—' if value is None else f'{value:.2f}x'}")
    return f"; not judged, {target.job} better by {', '.join(parts)}"


METRIC_NAMES = {
    "p50_ms": "p50",
    "p99_ms": "p99",
    "rps_c8": "rps @8",
    "rps_c32": "rps @32",
    "rps_c128": "rps @128",
    "workers_cpu_ms": "worker CPU per run",
    "hub_cpu_ms": "hub CPU per run",
    "total_cpu_ms": "hub + worker CPU per run",
}


def with_unit(metric: str, value: float) -> str:
    return f"{fmt_metric(metric, value)} {'ms' if metric.endswith('_ms') else 'req/s'}"


def comparison(target: Target, hub: float, other: float) -> str:
    name, mine = target.other_name, "hub" if not target.other_job else target.job
    if target.offset:
        return f"{mine} - {name} = {fmt_ms(hub - other)} ms"
    if not hub or not other:
        return "no ratio"
    if target.lower_is_better:
        return f"{name} ÷ {mine} = {other / hub:.2f}x"
    return f"{mine} ÷ {name} = {hub / other:.2f}x"


def target_lines(rows: list[Row]) -> list[str]:
    return [f"- {v.verdict} {v.text}" for v in (judge(t, rows) for t in TARGETS)]


def markdown(rows: list[Row], meta: dict[str, object], problems: list[str]) -> str:
    lines = ["# WebJobs benchmark", "", meta_line(meta), "", *results_table(rows), ""]
    for anchor in ANCHORS:
        ratios = ratio_table(rows, anchor)
        if ratios:
            lines += [f"## Hub vs {anchor}", "", *ratios, ""]
    warm_fresh = warm_fresh_table(rows)
    if warm_fresh:
        lines += ["## Warm vs `Isolation: fresh` (hub only)", "", *warm_fresh, ""]
    warm_fresh_cpu = warm_fresh_cpu_table(rows)
    if warm_fresh_cpu:
        lines += [
            "CPU per run over the c1 runs (user + system from /proc, the hub process and "
            "every worker process below it, spares too, from an idle hub to an idle hub):",
            "", *warm_fresh_cpu, "",
        ]
    lines += ["## Targets", "", *target_lines(rows), ""]
    if problems:
        lines += ["## Problems", "", *(f"- {p}" for p in problems), ""]
    return "\n".join(lines)


def meta_line(meta: dict[str, object]) -> str:
    keys = ("date", "commit", "cpus", "load_1m", "duration_s", "warmup_s", "node", "python", "wrk")
    return " · ".join(f"{key}: {meta[key]}" for key in keys if key in meta)


def write_results(
    out_dir: Path, text: str, rows: list[Row], meta: dict[str, object], problems: list[str]
) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    md_path, json_path = out_dir / "latest.md", out_dir / "latest.json"
    md_path.write_text(text, encoding="utf-8")
    verdicts = [judge(t, rows) for t in TARGETS]
    payload = {
        "meta": meta,
        "rows": [row.to_json() for row in ordered(rows)],
        "targets": [
            {
                "verdict": v.verdict,
                "text": v.text,
                "job": v.target.job,
                "metric": v.target.metric,
                "rule": v.target.rule,
            }
            for v in verdicts
        ],
        "problems": problems,
    }
    json_path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return md_path, json_path


def run_section(out_dir: Path, key: str, title: str,
                measure: Callable[[], dict[str, Any]],
                markdown_of: Callable[[dict[str, Any]], str]) -> int:
    """Measure one extra benchmark, print it and append it to latest.md and (under
    ``key``) latest.json. A failed measurement is reported there, not raised: 0 or 1."""
    try:
        results = measure()
    except Exception as err:  # reported in the results, not raised
        results = {"error": str(err)}
        section = f"## {title}\n\n- ERROR: {err}\n"
    else:
        section = markdown_of(results)
    out_dir.mkdir(parents=True, exist_ok=True)
    md_path, json_path = out_dir / "latest.md", out_dir / "latest.json"
    before = md_path.read_text(encoding="utf-8") if md_path.is_file() else ""
    md_path.write_text(before.rstrip("\n") + "\n\n" + section, encoding="utf-8")
    try:
        data = json.loads(json_path.read_text(encoding="utf-8")) if json_path.is_file() else {}
    except ValueError:
        data = {}
    data[key] = results
    json_path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print("\n" + section, flush=True)
    return 1 if "error" in results else 0
