"""``webhub user …`` and ``webhub token …``: the CLI round trip in real processes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hub.store.identity import open_identity_store

REPO = Path(__file__).resolve().parents[2]
TOKEN_LINE = re.compile(r"^wjt_[A-Za-z0-9_-]{40,}\n$")

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "webhub-home"


@pytest.fixture
def webhub(home: Path) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBHUB_", "WEBJOB_"))}
    env["WEBHUB_HOME"] = str(home)

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hub.cli", *args], input=stdin,
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=60)

    return run


def assert_refused(result: subprocess.CompletedProcess[str], code: str, says: str) -> None:
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert re.fullmatch(rf"webhub: {code}: .*{says}.*\n", result.stderr), result.stderr
    assert "Traceback" not in result.stderr


def test_user_round_trip(webhub: Run, home: Path) -> None:
    added = webhub("user", "add", "ann", "--class", "owner", "--staff-id", "42")
    assert added.returncode == 0, added.stderr
    assert TOKEN_LINE.match(added.stdout), added.stdout
    assert added.stderr == ""
    first = added.stdout.strip()

    passwd = webhub("user", "passwd", "ann", stdin="a long password\nsecond line\n")
    assert (passwd.returncode, passwd.stdout, passwd.stderr) == (0, "", "")

    second = webhub("user", "token", "ann", "--label", "laptop")
    assert second.returncode == 0 and TOKEN_LINE.match(second.stdout)
    token = second.stdout.strip()
    assert token != first

    assert webhub("user", "add", "bob", "--class", "USER").returncode == 0
    listed = webhub("user", "list")
    assert listed.returncode == 0
    assert listed.stdout == "ann\tOWNER\t42\tactive\nbob\tUSER\t-\tactive\n"

    store = open_identity_store(f"sqlite:///{home / 'hub.db'}")
    try:
        ann = store.check_password("ann", "a long password")
        assert ann is not None and ann.user_class == "OWNER" and ann.staff_id == 42
        assert store.user_for_token(first) == ann
        assert store.user_for_token(token) == ann
        infos = store.list_tokens("ann")
        assert [t.label for t in infos] == ["cli", "laptop"]
        revoked = webhub("token", "revoke", str(infos[0].id))
        assert (revoked.returncode, revoked.stdout, revoked.stderr) == (0, "", "")
        assert store.user_for_token(first) is None
        assert store.user_for_token(token) == ann

        disabled = webhub("user", "disable", "bob")
        assert (disabled.returncode, disabled.stdout, disabled.stderr) == (0, "", "")
        assert webhub("user", "list").stdout.splitlines()[1] == "bob\tUSER\t-\tdisabled"
    finally:
        store.close()


def test_passwd_reads_only_the_first_line_without_newline(webhub: Run, home: Path) -> None:
    webhub("user", "add", "ann", "--class", "USER")
    assert webhub("user", "passwd", "ann", stdin="spaces kept \r\n").returncode == 0
    store = open_identity_store(f"sqlite:///{home / 'hub.db'}")
    try:
        assert store.check_password("ann", "spaces kept ") is not None
    finally:
        store.close()


def test_errors_are_one_line_and_exit_2(webhub: Run) -> None:
    assert_refused(webhub("user", "passwd", "ghost", stdin="long enough\n"), "SYS-404", "ghost")
    assert_refused(webhub("user", "token", "ghost"), "SYS-404", "ghost")
    assert_refused(webhub("user", "disable", "ghost"), "SYS-404", "ghost")
    assert_refused(webhub("user", "add", "ann", "--class", "ADMIN"), "HUB-001", "class")
    assert_refused(webhub("user", "add", "bad name", "--class", "USER"), "HUB-001", "name")
    assert webhub("user", "add", "ann", "--class", "USER").returncode == 0
    assert_refused(webhub("user", "add", "ann", "--class", "USER"), "HUB-001", "already exists")
    assert_refused(webhub("user", "passwd", "ann", stdin="short\n"), "HUB-001", "at least 8")
    assert_refused(webhub("user", "passwd", "ann", stdin=""), "HUB-001", "at least 8")
    assert_refused(webhub("token", "revoke", "999"), "SYS-404", "999")
    assert webhub("user", "list").stdout == "ann\tUSER\t-\tactive\n"


def test_usage_errors_exit_2_without_traceback(webhub: Run) -> None:
    for args in (("user",), ("user", "add", "ann"), ("token", "revoke", "x"),
                 ("user", "add", "ann", "--class", "USER", "--staff-id", "seven")):
        result = webhub(*args)
        assert result.returncode == 2
        assert result.stdout == ""
        assert "usage:" in result.stderr and "Traceback" not in result.stderr


def test_an_unusable_database_is_one_line(webhub: Run, home: Path) -> None:
    home.mkdir(parents=True)
    (home / "hub.db").write_bytes(b"this is not a database" * 100)
    result = webhub("user", "list")
    assert_refused(result, "SYS-503", "not a database")


def test_secret_commands_load_no_web_framework(home: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBHUB_", "WEBJOB_"))}
    env["WEBHUB_HOME"] = str(home)
    script = ("import sys\nfrom hub import cli\n"
              "code = cli.main(['secret', 'set', 'demo_key'])\n"
              "code += cli.main(['secret', 'list'])\n"
              "code += cli.main(['secret', 'delete', 'demo_key'])\n"
              "print(code, sorted(m for m in sys.modules if m.split('.')[0] in "
              "('fastapi', 'starlette', 'uvicorn') or m.startswith('hub.api')))\n")
    result = subprocess.run([sys.executable, "-c", script], input="a-long-value\n",
                            capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    assert lines[-1] == "0 []", result
    assert any(line.startswith("demo_key") for line in lines), result
