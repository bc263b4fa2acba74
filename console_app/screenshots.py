"""Every window and dialog of the console as a PNG, populated from a real hub.

    python -m console_app.screenshots OUTDIR [--hub URL --token T [--seed]]
                                             [--only a,b] [--theme dark]

With ``--hub`` the pictures show that hub as it is (``--seed`` adds the demo job,
runs and schedules to it). Without ``--hub`` a demo hub is started as a subprocess
(see :mod:`console_app.screenshot_demo`: a temporary ``WEBHUB_HOME``, a copy of the
shipped jobs, an owner and some history, schedules and versions). Screens come from
:data:`SHOTS` plus a ``SCREENSHOTS`` dict (name -> builder) in any module of
:data:`PROVIDERS`, so a window written later adds its own pictures; a screen whose
module is missing is skipped with a note. ``OUTDIR/index.txt`` lists the results.

Nothing here waits without a bound: every hub call has ``--timeout`` seconds (a hub
that does not answer ends the tool with a message), each screen's waits are bounded,
and run as a program the whole tool gives up after ``--deadline`` seconds, saying so."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from console_app.screenshot_demo import DELETED_JOB, DEMO_JOB, demo_hub, seed

CALL_TIMEOUT_S = 15.0    # any one hub call; the demo hub answers in milliseconds
DEADLINE_S = 600.0       # the whole tool, run as a program
PROVIDERS = ("console_app.run.dialog", "console_app.editor_window",
             "console_app.debugger.window", "console_app.pages.history",
             "console_app.pages.scheduler", "console_app.history.schedule_dialog")


class Skip(Exception):
    """A screen that cannot be drawn here; the message says why."""


@dataclass
class ShotContext:
    session: Any                       # HubSession
    work_dir: Path                     # private settings and tokens for the dialogs
    cache: dict[str, Any] = field(default_factory=dict)
    seeded: bool = True                # the hub holds the demo job, runs and schedules

    def settle(self, timeout: float = 15.0, quiet_ms: int = 400) -> None:
        """Process events until no hub call has been in flight for ``quiet_ms``."""
        from PySide6.QtCore import QCoreApplication

        deadline, quiet_since = time.monotonic() + timeout, time.monotonic()
        while time.monotonic() < deadline:
            QCoreApplication.processEvents()
            if self.session.tasks.busy:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= quiet_ms / 1000:
                return
            time.sleep(0.01)  # a polling loop outside any test: nothing to await

    def wait_until(self, done: Callable[[], bool], timeout: float = 20.0) -> bool:
        from PySide6.QtCore import QCoreApplication

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            QCoreApplication.processEvents()
            if done():
                return True
            time.sleep(0.01)
        return False


Shot = Callable[[ShotContext], Any]  # returns the QWidget to grab; raises Skip
SHOTS: dict[str, Shot] = {}


def shot(name: str) -> Callable[[Shot], Shot]:
    def register(builder: Shot) -> Shot:
        SHOTS[name] = builder
        return builder
    return register


def _need(module: str, attr: str) -> Any:
    from console_app.shell.pages import load_attr

    found, why = load_attr(module, attr)
    if found is None:
        raise Skip(why)
    return found


# -- the shell's screens -----------------------------------------------------------------

@shot("connect-dialog")
def _connect(ctx: ShotContext) -> Any:
    from PySide6.QtCore import QSettings

    from console_app.client.credentials import TokenVault
    from console_app.shell.connect_dialog import ConnectDialog
    from console_app.shell.hubs import HubEntry, RememberedHubs

    hubs = RememberedHubs(QSettings(str(ctx.work_dir / "console.ini"),
                                    QSettings.Format.IniFormat))
    hubs.remember(HubEntry("https://jobs.example.org", "ann", "password"))
    hubs.remember(HubEntry(ctx.session.url, "owner", "token"))
    dialog = ConnectDialog(ctx.session.tasks, hubs,
                           TokenVault(use_keyring=False, folder=ctx.work_dir))
    dialog.token_edit.setText(ctx.session.conn.token or "")
    return dialog


def _main_window(ctx: ShotContext) -> Any:
    if "main" not in ctx.cache:
        from console_app.shell.main_window import MainWindow

        ctx.cache["main"] = MainWindow(ctx.session, monitor_interval_ms=60000)
    return ctx.cache["main"]


def _page_shot(name: str) -> Shot:
    def build(ctx: ShotContext) -> Any:
        window = _main_window(ctx)
        window.show()
        window.show_page(name)
        return window
    return build


for _page in ("Manage", "Scheduler", "History", "Metrics", "Secrets"):
    SHOTS[f"main-{_page.lower()}"] = _page_shot(_page)


@shot("command-palette")
def _command_palette(ctx: ShotContext) -> Any:
    from console_app.shell.main_window import MainWindow

    window = MainWindow(ctx.session, monitor_interval_ms=60000)  # its own: closed after
    window.resize(1024, 700)
    window.show()
    ctx.settle()
    window.open_palette()
    window.command_palette.query.setText("run")
    return window


# -- other engineers' windows, driven through their public API ---------------------------

@shot("run-dialog-finished")
def _run_dialog(ctx: ShotContext) -> Any:
    dialog = _need("console_app.run.dialog", "RunDialog")(ctx.session, DEMO_JOB, {})
    dialog.show()
    ctx.wait_until(lambda: getattr(dialog, "status", "") not in ("idle", "running"))
    return dialog


@shot("editor-window")
def _editor(ctx: ShotContext) -> Any:
    return _need("console_app.editor_window", "EditorWindow")(ctx.session, DEMO_JOB)


@shot("debugger-paused")
def _debugger(ctx: ShotContext) -> Any:
    window = _need("console_app.debugger.window", "DebuggerWindow")(ctx.session, DEMO_JOB, {})
    window.show()
    ctx.wait_until(lambda: str(getattr(window.state.phase, "value", "")) == "paused")
    return window


@shot("run-dialog-failed")
def _run_dialog_failed(ctx: ShotContext) -> Any:
    dialog = _need("console_app.run.dialog", "RunDialog")(ctx.session, "demo_fails", {})
    dialog.show()
    ctx.wait_until(lambda: getattr(dialog, "status", "") not in ("idle", "running"))
    return dialog


@shot("debugger-live")
def _debugger_live(ctx: ShotContext) -> Any:
    window = _need("console_app.debugger.window", "DebuggerWindow")(
        ctx.session, "public_test-page", {}, live=True, opener=lambda _url: None)
    window.show()
    ctx.wait_until(lambda: str(getattr(window.state.phase, "value", "")) == "waiting")
    return window


@shot("secret-dialog")
def _secret_dialog(ctx: ShotContext) -> Any:
    return _need("console_app.pages.secrets", "SecretDialog")(ctx.session)


@shot("versions-dialog")
def _versions(ctx: ShotContext) -> Any:
    dialog_class = _need("console_app.editor.versions", "VersionsDialog")
    from console_app.client import jobs
    from console_app.client.gui_guard import blocking_on_purpose

    conn = ctx.session.conn
    with blocking_on_purpose():  # the tool's own reads, before the dialog exists
        versions = jobs.versions(conn, DEMO_JOB)
        text = jobs.code(conn, DEMO_JOB)

    def fetch(number: int, done: Callable[[Any], None]) -> None:
        ctx.session.tasks.run(lambda: jobs.version_code(conn, DEMO_JOB, number), done, done)

    dialog = dialog_class(versions, fetch, text, job_name=DEMO_JOB)
    if dialog.list.count() > 1:
        dialog.list.setCurrentRow(1)
    return dialog


@shot("history-replay")
def _history(ctx: ShotContext) -> Any:
    page = _need("console_app.pages.history", "HistoryPage")(ctx.session)
    page.resize(1100, 700)
    page.show()
    ctx.settle()
    page.open_row(0)
    ctx.settle(quiet_ms=1500)  # the console replays at its recorded pace
    return page


@shot("deleted-jobs")
def _deleted_jobs(ctx: ShotContext) -> Any:
    dialog = _need("console_app.pages.deleted_jobs", "DeletedJobsDialog")(ctx.session)
    ctx.wait_until(lambda: dialog.model.rowCount() > 0, timeout=10)
    dialog.select(DELETED_JOB)
    return dialog


@shot("run-again-masked")
def _run_again_masked(ctx: ShotContext) -> Any:
    from console_app.history.masked import MaskedValuesDialog, masked_places

    places = masked_places({"apiToken": "***", "days": 7, "auth": {"header": "Bearer ***"}})
    dialog = MaskedValuesDialog(DEMO_JOB, places)
    dialog.fields[0].setText("typed")
    return dialog


@shot("add-schedule-dialog")
def _add_schedule(ctx: ShotContext) -> Any:
    dialog_class = _need("console_app.history.schedule_dialog", "ScheduleDialog")
    dialog = dialog_class(ctx.session, job=DEMO_JOB)
    dialog.name_edit.setText("Weekday report")
    dialog.cron_edit.setText("30 2 * * 1-5")  # checked as typed: the preview fills in
    ctx.wait_until(lambda: bool(dialog.preview_label.text()))
    return dialog


def all_shots() -> dict[str, Shot]:
    """The built-in screens plus every provider's ``SCREENSHOTS`` (which win)."""
    import importlib

    shots = dict(SHOTS)
    for module in PROVIDERS:
        try:
            extra = getattr(importlib.import_module(module), "SCREENSHOTS", None)
        except Exception:  # a missing or broken module: its built-in shot says why
            continue
        if isinstance(extra, dict):
            shots.update(extra)
    return shots


# -- rendering -------------------------------------------------------------------------------

def render(ctx: ShotContext, shots: dict[str, Shot], out: Path) -> list[str]:
    """Each shot to ``out/<name>.png``; returns the index lines."""
    lines = []
    for name, build in shots.items():
        try:
            widget = build(ctx)
            if widget is None:
                raise Skip("the builder drew nothing")
            widget.show()
            ctx.settle()
            path = out / f"{name}.png"
            if not widget.grab().save(str(path), "PNG"):
                raise Skip("Qt could not write the PNG")
            shown = _error_shown(widget)
            lines.append(f"{name}.png: failed — the window shows an error: {shown}" if shown
                         else f"{name}.png — {widget.windowTitle() or name}")
        except Skip as why:
            lines.append(f"{name}: skipped — {why}")
        except Exception as err:
            hint = "" if ctx.seeded else " (a hub not seeded: --seed adds the demo job)"
            lines.append(f"{name}: failed — {type(err).__name__}: {err}{hint}")
        else:
            if widget is not ctx.cache.get("main"):
                widget.close()
                widget.deleteLater()
    return lines


def _error_shown(widget: Any) -> str:
    """The error a window's message bar shows, if it shows one: such a picture is the
    failure, not the screen."""
    from console_app.widgets import MessageBar

    for bar in [widget, *widget.findChildren(MessageBar)]:
        if not isinstance(bar, MessageBar):
            continue
        if bar.kind == "error" and bar.isVisibleTo(widget):
            return str(bar.text())
    return ""


def failed(lines: Sequence[str]) -> list[str]:
    """The index lines of screens that failed."""
    return [line for line in lines if ": failed — " in line]


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m console_app.screenshots")
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--hub", default="", help="use this hub instead of starting one")
    parser.add_argument("--token", default="", help="an owner's token for --hub")
    parser.add_argument("--only", default="", help="comma-separated screen names")
    parser.add_argument("--theme", choices=("light", "dark"), default="light")
    parser.add_argument("--seed", action="store_true",
                        help="add the demo job, runs and schedules to --hub too "
                             "(always done on the hub started here)")
    parser.add_argument("--timeout", type=float, default=CALL_TIMEOUT_S,
                        help="seconds any one hub call may take (default %(default)s)")
    parser.add_argument("--deadline", type=float, default=DEADLINE_S,
                        help="seconds the whole tool may take when run as a program "
                             "(default %(default)s)")
    return parser.parse_args(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.hub and not args.token:
        print("--hub needs --token (an owner's API token)", file=sys.stderr)
        return 2
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # pictures, not windows
    # The offscreen platform warns about every window it cannot resize natively.
    os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")
    os.environ["WEBJOBS_CONSOLE_THEME"] = args.theme
    args.outdir.mkdir(parents=True, exist_ok=True)
    from shared.errors import WebJobsError

    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="wj-shots-")))
        try:
            url, token = ((args.hub, args.token) if args.hub
                          else stack.enter_context(demo_hub(work)))
            lines = _take(url, token, args, work)
        except (WebJobsError, RuntimeError, subprocess.SubprocessError) as err:
            print(f"screenshots: no pictures — {_said(err)}", file=sys.stderr)
            return 1
    (args.outdir / "index.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    bad = failed(lines)
    if bad:
        print(f"screenshots: {len(bad)} of {len(lines)} screens failed", file=sys.stderr)
    return 1 if bad else 0


def _take(url: str, token: str, args: argparse.Namespace, work: Path) -> list[str]:
    from console_app.app import make_application, session_for
    from console_app.client.gui_guard import blocking_on_purpose
    from console_app.shell.connecting import Credentials, open_hub
    from console_app.shell.theme import Theme
    from console_app.tasks import TaskManager

    app = make_application(sys.argv[:1])
    Theme(app)
    with blocking_on_purpose():  # a script's set-up: no window is open yet
        connected = open_hub(url, Credentials(token=token), timeout=args.timeout)
        if args.seed or not args.hub:
            seed(connected.conn)
    tasks = TaskManager()
    ctx = ShotContext(session_for(connected, tasks), work, seeded=args.seed or not args.hub)
    shots = all_shots()
    wanted = [n.strip() for n in args.only.split(",") if n.strip()]
    if wanted:
        shots = {n: shots[n] for n in wanted if n in shots}
    try:
        return render(ctx, shots, args.outdir)
    finally:
        if "main" in ctx.cache:
            ctx.cache["main"].close()
        tasks.shutdown()
        connected.conn.close()


def _said(err: BaseException) -> str:
    code = getattr(err, "code", "")
    message = getattr(err, "message", "") or str(err) or type(err).__name__
    return f"{code}: {message}" if isinstance(code, str) and code else message


def _give_up(deadline: float) -> None:
    print(f"screenshots: gave up after {deadline:.0f} s (a screen or a hub call did not "
          "finish); the pictures written so far are in place", file=sys.stderr, flush=True)
    os._exit(3)


def cli(argv: Sequence[str] | None = None) -> int:
    """:func:`main` under the ``--deadline`` watchdog. The process ends as soon as main
    returns: a window's stream still open on a worker thread must not hold it."""
    args = sys.argv[1:] if argv is None else list(argv)
    deadline = parse_args(args).deadline if args else DEADLINE_S
    watchdog = threading.Timer(deadline, _give_up, (deadline,))
    watchdog.daemon = True
    watchdog.start()
    code = main(args)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(cli())
