"""Syntax errors and header warnings as the owner types, judged by the hub.

The hub's ``POST /api/webjobs/check {code}`` runs the same parse check and header
reading a save would, without saving. A pause in typing sends the text (off the GUI
thread); an answer to an older text is dropped, so marks never lag behind the code.
The answer is decoded into ``shared.wire.jobs.CheckAnswer``: an answer of another shape
is reported as the hub being unable to check, and the editor goes on without marks."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal

from console_app.client.errors import describe_error
from console_app.client.jobs import check_shape
from console_app.session import HubSession
from console_app.tasks import Latest
from shared.wire.jobs import CheckAnswer

__all__ = ["CHECK_DELAY_MS", "CodeProblem", "LiveChecker", "problems_from_check"]

CHECK_DELAY_MS = 600   # after the last key press; a parse on the hub takes a worker


@dataclass(frozen=True)
class CodeProblem:
    """One mark in the editor and one row of its problems list (1-based positions).

    ``source``: ``syntax`` and ``header`` come from the hub's check, ``run`` from a
    run's failure, ``secret`` from a declared secret the hub has no value for."""

    line: int
    column: int
    message: str
    severity: str = "error"      # error | warning
    source: str = "syntax"

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


def problems_from_check(data: CheckAnswer) -> list[CodeProblem]:
    """The problems of a ``/check`` answer, in line order (positions from 1)."""
    problems = [CodeProblem(max(p.line, 1), max(p.column, 1), p.message or "Problem",
                            p.severity, p.source) for p in data.problems]
    return sorted(problems, key=lambda p: (p.line, p.column))


class LiveChecker(QObject):
    """``schedule(text)`` on each edit; ``sig_checked(list[CodeProblem])`` with the hub's
    verdict on the latest text. ``sig_unavailable(reason)`` when the hub cannot check
    (an older hub without the route, or no connection): the editor still works."""

    sig_checked = Signal(list)
    sig_unavailable = Signal(str)

    def __init__(self, session: HubSession, parent: QObject | None = None,
                 delay_ms: int = CHECK_DELAY_MS) -> None:
        super().__init__(parent)
        self._session = session
        self._text = ""
        self._calls = Latest()
        self._timer = QTimer(self, singleShot=True, interval=delay_ms)
        self._timer.timeout.connect(self.check_now)

    def schedule(self, text: str) -> None:
        self._text = text
        self._calls.supersede()  # an answer still coming is about older text
        self._timer.start()

    def stop(self) -> None:
        """No more checks, and no answer still coming is delivered."""
        self._timer.stop()
        self._calls.supersede()

    def check_now(self, text: str | None = None) -> None:
        self._timer.stop()
        if text is not None:
            self._text = text
        conn, code = self._session.conn, self._text
        call = self._calls.start()
        self._session.tasks.run(lambda: check_shape(conn, code),
                                call.wrap(lambda data: self.sig_checked.emit(
                                    problems_from_check(data))),
                                call.wrap(lambda exc: self.sig_unavailable.emit(
                                    describe_error(exc))))
