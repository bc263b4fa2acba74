"""The command line of bench/run_bench.py: which servers, job rows and parts run, and how long."""

import argparse
from pathlib import Path

from bench import report

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO_ROOT / "bench" / "results"
DESCRIPTION = "Benchmark the hub beside the reference, workerd and a bare FastAPI floor."
# The measurements besides the HTTP table, which --skip can leave out ("cpu" and "memory"
# are measured on the table's hub, before its rows).
PARTS = ("cpu", "memory", "jit", "outside", "history", "schedule", "cluster")
# The parts that start what they measure themselves, which --only can run alone.
ALONE_PARTS = ("jit", "outside", "history", "schedule", "cluster")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = bench_parser()
    return checked_args(parser, parser.parse_args(argv))


def bench_parser() -> argparse.ArgumentParser:
    """The options of a bench run, each with its default."""
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument(
        "--duration", type=int, default=5, help="whole seconds of each measured wrk run (default 5)"
    )
    parser.add_argument("--quick", action="store_true", help="2 s runs (overrides --duration)")
    parser.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="whole seconds of the warm-up run before each measured one (default 1, 0: none)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="where results go")
    add_part_options(parser)
    return parser


def add_part_options(parser: argparse.ArgumentParser) -> None:
    """The options choosing which servers, job rows and parts of the bench run."""
    parser.add_argument(
        "--servers",
        default=",".join(report.SERVERS),
        help=f"comma-separated subset of {','.join(report.SERVERS)}",
    )
    parser.add_argument(
        "--cases",
        default="",
        help="comma-separated job rows to measure (default: all of "
        + ",".join(report.JOB_ORDER) + ")",
    )
    parser.add_argument(
        "--skip",
        default="",
        help=f"comma-separated parts to leave out: {','.join(PARTS)}",
    )
    parser.add_argument(
        "--only",
        default="",
        help=f"comma-separated parts to run alone, without the HTTP table: {','.join(ALONE_PARTS)}",
    )
    parser.add_argument(
        "--no-outside",
        action="store_true",
        help="skip bench/outside_bench.py (db.exec and require() on an in-process engine)",
    )
    parser.add_argument(
        "--history-runs",
        type=int,
        default=1_000_000,
        help="runs bench/history_bench.py fills the local history with (0: skip it)",
    )


def checked_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """The parsed options checked and turned into lists; a wrong one stops with usage."""
    if args.quick:
        args.duration = 2
    if args.duration < 1 or args.warmup < 0:
        parser.error("--duration must be >= 1 and --warmup >= 0 (wrk takes whole seconds)")
    args.servers = [name.strip() for name in args.servers.split(",") if name.strip()]
    unknown = set(args.servers) - set(report.SERVERS)
    if unknown:
        parser.error(f"unknown servers: {', '.join(sorted(unknown))}")
    args.cases = split_choices(parser, "cases", args.cases, report.JOB_ORDER)
    args.skip = split_choices(parser, "skip", args.skip, PARTS)
    if args.no_outside:
        args.skip.append("outside")
    if args.history_runs <= 0:
        args.skip.append("history")
    args.only = split_choices(parser, "only", args.only, ALONE_PARTS)
    if args.only:
        args.skip = [part for part in PARTS if part not in args.only]
    return args


def split_choices(
    parser: argparse.ArgumentParser, option: str, text: str, known: tuple[str, ...]
) -> list[str]:
    """A comma-separated option's values; none given means all of `known` for --cases."""
    chosen = [name.strip() for name in text.split(",") if name.strip()]
    unknown = set(chosen) - set(known)
    if unknown:
        parser.error(f"unknown --{option}: {', '.join(sorted(unknown))}")
    return chosen or (list(known) if option == "cases" else [])
