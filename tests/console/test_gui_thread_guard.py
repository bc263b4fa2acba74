"""The debug-mode check that no hub call runs on the GUI thread (the console's tests run
with it on: a screen calling the client directly fails its test)."""

from __future__ import annotations

import threading
import tomllib
from pathlib import Path

import pytest

from console_app.client import gui_guard
from console_app.client.connection import HubConnection
from console_app.client.gui_guard import PLAIN_MODULES, HubCallOnGuiThread

ROOT = Path(__file__).resolve().parents[2]


def _call_from(module_name: str, conn: HubConnection) -> object:
    """``conn.get('/api/webjobs/health')`` as if made by code in ``module_name``."""
    namespace = {"__name__": module_name, "conn": conn}
    code = compile("result = conn.get('/api/webjobs/health')", f"<{module_name}>", "exec")
    exec(code, namespace)  # a frame whose module is module_name
    return namespace["result"]


def test_a_gui_module_calling_the_hub_on_the_gui_thread_fails(
        connection: HubConnection) -> None:
    with pytest.raises(HubCallOnGuiThread, match=r"console_app\.pages\.jobs_page called the hub"):
        _call_from("console_app.pages.jobs_page", connection)


def test_the_same_call_off_the_gui_thread_or_from_plain_code_is_fine(
        connection: HubConnection) -> None:
    assert _call_from("console_app.shell.connecting", connection)
    assert _call_from("tests.anything", connection)
    answers: list[object] = []
    worker = threading.Thread(
        target=lambda: answers.append(_call_from("console_app.pages.jobs_page", connection)))
    worker.start()
    worker.join(30)
    assert answers and answers[0]


def test_off_unless_asked(connection: HubConnection, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEBJOBS_CONSOLE_CHECK_THREADS")
    assert not gui_guard.checking()
    assert _call_from("console_app.pages.jobs_page", connection)


def test_the_plain_modules_are_the_import_contracts_and_exist() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    plain = next(c for c in contracts["contracts"] if "plain Python" in c["name"])
    assert tuple(plain["source_modules"]) == PLAIN_MODULES
    for name in PLAIN_MODULES:
        path = ROOT / Path(*name.split("."))
        assert path.with_suffix(".py").exists() or (path / "__init__.py").exists(), name
