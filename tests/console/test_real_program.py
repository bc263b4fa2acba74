"""The installed ``webjobs-console`` program on a real X display (Xvfb), signed in
through its dialog by typed keys (xdotool), as a new owner would: a fresh config
folder, no keyring, a real hub. The console must still be running with its main
window ten seconds after the sign-in, and quit cleanly when told to."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.hub.conftest import REPO, HubProcess, running_hub

PROGRAM = REPO / ".venv" / "bin" / "webjobs-console"
PASSWORD = "olive-secret-1"
DIALOG_TITLE = "Connect to a WebJobs hub"
ALIVE_AFTER_S = 10  # how long the console must outlive its sign-in

pytestmark = pytest.mark.skipif(
    not (shutil.which("Xvfb") and shutil.which("xdotool")),
    reason="needs Xvfb and xdotool (Debian: apt-get install -y xvfb xdotool; make setup "
           "installs them)")


@pytest.fixture(scope="module")
def display() -> Iterator[str]:
    """A private X server on the first free display number, which Xvfb itself picks
    and reports on a pipe once it accepts clients; no TCP listener."""
    read_end, write_end = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-nolisten", "tcp",
         "-screen", "0", "1280x900x24"],
        pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], 20)
        number = os.read(read_end, 32).decode().strip() if ready else ""
        assert number.isdigit(), "Xvfb did not report a display"
        yield f":{number}"
    finally:
        os.close(read_end)
        xvfb.terminate()
        xvfb.wait(10)


@pytest.fixture(scope="module")
def owner_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("real-hub"), jobs={}) as process:
        yield process


@dataclass
class RunningConsole:
    proc: subprocess.Popen[bytes]
    env: dict[str, str]
    config: Path
    log: Path

    def xdotool(self, *args: str) -> str:
        try:
            done = subprocess.run(["xdotool", *args], env=self.env, capture_output=True,
                                  text=True, timeout=30, check=False)
        except subprocess.TimeoutExpired:
            pytest.fail(f"xdotool {args} timed out; console status {self.proc.poll()}:\n"
                        f"{self.log.read_text()}")
        assert done.returncode == 0, (args, done.stderr, self.log.read_text())
        return done.stdout.strip()

    def window(self, title_start: str) -> str:
        """The id of the visible window whose title starts so, once it is mapped."""
        return self.xdotool("search", "--sync", "--onlyvisible", "--name",
                            f"^{title_start}").splitlines()[0]

    def type(self, text: str) -> None:
        self.xdotool("type", "--delay", "15", text)

    def key(self, *keys: str) -> None:
        self.xdotool("key", "--delay", "40", *keys)

    def tokens(self) -> dict[str, str]:
        path = self.config / "webjobs-console" / "tokens.json"
        return json.loads(path.read_text()) if path.exists() else {}


@pytest.fixture
def start_console(display: str, tmp_path: Path) -> Iterator[Callable[..., RunningConsole]]:
    home, config, runtime = tmp_path / "home", tmp_path / "config", tmp_path / "run"
    for folder in (home, config, runtime):
        folder.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("QT_", "WEBHUB_", "WEBJOB_", "DBUS_", "WAYLAND_"))}
    # No session bus: keyring finds no backend, so tokens go to the 0600 file.
    env |= {"DISPLAY": display, "HOME": str(home), "XDG_CONFIG_HOME": str(config),
            "XDG_RUNTIME_DIR": str(runtime)}
    log = tmp_path / "console.log"
    consoles: list[RunningConsole] = []

    def start(*args: str) -> RunningConsole:
        with open(log, "wb") as out:
            proc = subprocess.Popen([str(PROGRAM), *args], env=env, stdout=out,
                                    stderr=subprocess.STDOUT)
        consoles.append(RunningConsole(proc, env, config, log))
        return consoles[-1]

    yield start
    for console in consoles:
        if console.proc.poll() is None:
            console.proc.kill()
            console.proc.wait(10)


def assert_stays_open(console: RunningConsole, hub: HubProcess) -> None:
    """The main window opens, and the process is still there ALIVE_AFTER_S later."""
    window = console.window(hub.url)
    with pytest.raises(subprocess.TimeoutExpired):
        status = console.proc.wait(ALIVE_AFTER_S)
        pytest.fail(f"the console quit with {status}:\n{console.log.read_text()}")
    assert console.xdotool("search", "--onlyvisible", "--name", f"^{hub.url}") == window
    title = console.xdotool("getwindowname", window)
    assert title.count(hub.url) == 1 and title.count("WebJobs console") == 1, title


def quit_cleanly(console: RunningConsole) -> None:
    console.proc.send_signal(signal.SIGTERM)  # what make run does when it stops
    assert console.proc.wait(20) == 0, console.log.read_text()
    assert "Traceback" not in console.log.read_text(), console.log.read_text()


def test_a_typed_token_opens_the_main_window_and_it_stays(
        start_console: Callable[..., RunningConsole], owner_hub: HubProcess) -> None:
    token = owner_hub.add_user("tess", "OWNER")
    console = start_console("--hub", owner_hub.url)
    console.xdotool("windowfocus", "--sync", console.window(DIALOG_TITLE))
    console.type(token)  # no click first: the cursor starts in the token field
    console.key("Return")
    assert_stays_open(console, owner_hub)
    assert console.tokens() == {owner_hub.url: token}  # kept (in the file: no keyring)
    quit_cleanly(console)


def test_a_name_and_password_not_kept_open_the_main_window_and_it_stays(
        start_console: Callable[..., RunningConsole], owner_hub: HubProcess) -> None:
    owner_hub.add_user("olive", "OWNER", password=PASSWORD)
    console = start_console("--hub", owner_hub.url)
    console.xdotool("windowfocus", "--sync", console.window(DIALOG_TITLE))
    # From the token field back to "Name and password", picked with space (which puts
    # the cursor in the name field), then the password, and "Keep the token" unticked.
    console.key("shift+Tab", "space")
    console.type("olive")
    console.key("Tab")
    console.type(PASSWORD)
    console.key("Tab", "space", "Return")
    assert_stays_open(console, owner_hub)
    assert console.tokens() == {}
    quit_cleanly(console)
