"""The console built as a desktop program (packaging/console.spec) starts and shows its
connect dialog: offscreen, seen through Qt's own show/hide log, and on a real X display
(Xvfb), found by its title with xdotool and signed in to a real hub with a typed token.

The bundle is built through packaging/build_console_bundle.py, the script ``make
console-bundle`` runs, so a build whose sources did not change is reused (about 18 s
cold, well under a second cached)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest

from tests.console import test_real_program
from tests.hub.conftest import REPO, running_hub

SCRIPT = REPO / "packaging" / "build_console_bundle.py"
DIALOG_TITLE = "Connect to a WebJobs hub"
# Qt logs each native window it maps under qt.widgets.showhide; the dialog's is named
# after its class. Nothing else in the program needs to cooperate.
SHOWHIDE_RULES = "qt.widgets.showhide.debug=true"
DIALOG_MAPPED = 'name="ConnectDialogClassWindow") to true'
START_TIMEOUT_S = 30
HAS_X = bool(shutil.which("Xvfb") and shutil.which("xdotool"))
needs_x = pytest.mark.skipif(not HAS_X, reason="needs Xvfb and xdotool (make setup installs them)")


def load_build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_console_bundle", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def builder() -> ModuleType:
    """The build script, run as make runs it (its cache applies), then loaded."""
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True,
                          timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return load_build_script()


@pytest.fixture
def program(builder: ModuleType) -> Path:
    path: Path = builder.PROGRAM
    return path


@dataclass
class Watched:
    """A started bundle whose merged output is read on a thread, line by line, so a
    test waits on an event (the dialog mapped, or the output ending), never a sleep."""
    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    dialog_shown: threading.Event = field(default_factory=threading.Event)
    settled: threading.Event = field(default_factory=threading.Event)  # shown, or ended
    ended: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if DIALOG_MAPPED in line:
                self.dialog_shown.set()
                self.settled.set()
        self.ended.set()
        self.settled.set()

    def wait_for_dialog(self) -> bool:
        """True once the dialog is mapped; False if the program ended (or hung) first."""
        self.settled.wait(START_TIMEOUT_S)
        return self.dialog_shown.is_set()

    def output(self) -> str:
        return "".join(self.lines)

    def quit(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(20)
        self.ended.wait(10)
        return code


@pytest.fixture
def clean_env(tmp_path: Path) -> dict[str, str]:
    """A new user's session: fresh home and config folders, no session bus (so the
    token vault uses its file), nothing of the test process's Qt or hub settings."""
    home, config, runtime = tmp_path / "home", tmp_path / "config", tmp_path / "run"
    for folder in (home, config, runtime):
        folder.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("QT_", "WEBHUB_", "WEBJOB_", "DBUS_", "WAYLAND_"))}
    env.pop("DISPLAY", None)
    return env | {"HOME": str(home), "XDG_CONFIG_HOME": str(config),
                  "XDG_RUNTIME_DIR": str(runtime)}


@pytest.fixture
def start(program: Path, clean_env: dict[str, str]) -> Iterator[Callable[..., Watched]]:
    started: list[Watched] = []

    def start_program(*args: str, **env: str) -> Watched:
        proc = subprocess.Popen([str(program), *args], env=clean_env | env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        started.append(Watched(proc))
        return started[-1]

    yield start_program
    for watched in started:
        if watched.proc.poll() is None:
            watched.proc.kill()
        watched.proc.wait(10)
        watched.ended.wait(10)
        assert watched.proc.stdout is not None
        watched.proc.stdout.close()


def test_the_bundle_holds_the_console_and_nothing_of_the_hub(builder: ModuleType) -> None:
    modules: set[str] = builder.bundled_modules()
    assert {"console_app.app", "shared.errors", "httpx", "keyring"} <= modules
    assert set(builder.page_modules()) <= modules
    assert not [m for m in modules if m == "hub" or m.startswith("hub.")]
    internal = builder.BUNDLE / "_internal"
    assert not (internal / "hub").exists() and not (internal / "fastapi").exists()
    platforms = {p.name for p in (internal / "PySide6/Qt/plugins/platforms").iterdir()}
    assert {"libqxcb.so", "libqoffscreen.so"} <= platforms


def test_a_second_build_with_nothing_changed_is_skipped(builder: ModuleType) -> None:
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True,
                          timeout=60, check=True)
    assert "up to date" in done.stdout, done.stdout
    assert builder.is_up_to_date(builder.source_hash())


def test_offscreen_it_shows_the_connect_dialog_and_quits_cleanly(
        start: Callable[..., Watched]) -> None:
    console = start(QT_QPA_PLATFORM="offscreen", QT_LOGGING_RULES=SHOWHIDE_RULES)
    assert console.wait_for_dialog(), console.output()
    assert console.proc.poll() is None, console.output()
    assert console.quit() == 0, console.output()
    assert "Traceback" not in console.output(), console.output()


def test_a_bundle_that_cannot_start_is_seen_as_such(start: Callable[..., Watched]) -> None:
    """What a missing platform plugin does: Qt aborts before any window."""
    console = start(QT_QPA_PLATFORM="no-such-platform", QT_LOGGING_RULES=SHOWHIDE_RULES)
    assert not console.wait_for_dialog()
    assert console.proc.wait(20) != 0
    assert 'Could not find the Qt platform plugin "no-such-platform"' in console.output()


# A private X server (Xvfb picks the display number), as the installed console's test has.
display = test_real_program.display


def xdotool(display: str, console: Watched, *args: str) -> str:
    try:
        done = subprocess.run(["xdotool", *args], env={**os.environ, "DISPLAY": display},
                              capture_output=True, text=True, timeout=START_TIMEOUT_S,
                              check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"xdotool {args} timed out; bundle status {console.proc.poll()}:\n"
                    f"{console.output()}")
    assert done.returncode == 0, (args, done.stderr, console.output())
    return done.stdout.strip()


def visible_window(display: str, console: Watched, title_start: str) -> str:
    return xdotool(display, console, "search", "--sync", "--onlyvisible", "--name",
                   f"^{title_start}").splitlines()[0]


@needs_x
def test_on_x_the_dialog_is_a_window_with_its_title(
        start: Callable[..., Watched], display: str) -> None:
    console = start(DISPLAY=display, QT_LOGGING_RULES=SHOWHIDE_RULES)
    assert console.wait_for_dialog(), console.output()
    window = visible_window(display, console, DIALOG_TITLE)
    assert xdotool(display, console, "getwindowname", window) == (
        f"{DIALOG_TITLE} — WebJobs console")
    assert console.quit() == 0, console.output()


@needs_x
def test_on_x_a_typed_token_signs_in_to_a_real_hub(
        start: Callable[..., Watched], display: str, tmp_path: Path) -> None:
    with running_hub(tmp_path / "hub", jobs={}) as hub:
        token = hub.add_user("tess", "OWNER")
        console = start("--hub", hub.url, DISPLAY=display)
        dialog = visible_window(display, console, DIALOG_TITLE)
        xdotool(display, console, "windowfocus", "--sync", dialog)
        xdotool(display, console, "type", "--delay", "15", token)
        xdotool(display, console, "key", "Return")
        main_window = visible_window(display, console, hub.url)
        assert "WebJobs console" in xdotool(display, console, "getwindowname", main_window)
        assert console.proc.poll() is None, console.output()
        assert console.quit() == 0, console.output()
    assert "Traceback" not in console.output(), console.output()
