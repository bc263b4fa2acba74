"""``webhub``: the hub's command line."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from shared.errors import WebJobsError


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from hub.api.app import create_app
    from hub.settings import load_settings

    settings = load_settings()
    app = create_app(settings)
    print(f"WebJobs hub on http://{args.host}:{args.port}  (jobs: {settings.jobs_dir}, "
          f"data: {settings.home})", flush=True)
    if not os.environ.get("WEBHUB_SYSTEM_TOKEN"):
        print(f"System token (management API, bearer): {settings.system_token}\n"
              f"  kept in {settings.home / 'system-token'}; set WEBHUB_SYSTEM_TOKEN to choose one",
              flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level,
                access_log=False, loop="uvloop", http="httptools", timeout_graceful_shutdown=5)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="webhub", description="The WebJobs hub")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the hub's HTTP server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8700)
    serve.add_argument("--log-level", default="info",
                       choices=["debug", "info", "warning", "error"])
    serve.set_defaults(func=_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args))
    except WebJobsError as exc:
        print(f"webhub: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
