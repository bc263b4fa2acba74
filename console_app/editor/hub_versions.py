"""A job's saved versions, fed from the hub off the GUI thread: the versions dialog
(with Restore) and the fetcher the versions and conflict dialogs read a version's code
through."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QWidget

from console_app.client import jobs as api
from console_app.client.errors import describe_error
from console_app.editor.versions import VersionsDialog
from console_app.session import HubSession
from console_app.widgets import fit_on_screen

__all__ = ["Notify", "open_versions", "version_fetcher"]

Notify = Callable[[str, bool], None]


def open_versions(session: HubSession, name: str, current_text: str, parent: QWidget | None,
                  on_restored: Callable[[], None], notify: Notify) -> VersionsDialog:
    """The editor package's VersionsDialog for ``name``, fed from the hub off the GUI
    thread; Restore saves that version again, then ``on_restored()``."""
    conn, tasks = session.conn, session.tasks
    dialog = VersionsDialog([], version_fetcher(session, name), current_text, job_name=name,
                            parent=parent)
    fit_on_screen(dialog, QSize(900, 600), parent)

    def restored(number: int) -> None:
        notify(f"Restored version {number} of {name}", False)
        on_restored()

    dialog.sig_restore_requested.connect(lambda n: tasks.run(
        lambda: api.restore(conn, name, n), lambda _job: restored(n),
        lambda exc: notify(f"Could not restore version {n}: {describe_error(exc)}", True)))
    tasks.run(lambda: api.versions(conn, name), dialog.set_versions,
              lambda exc: notify(f"Could not list versions: {describe_error(exc)}", True))
    dialog.show()
    return dialog


def version_fetcher(session: HubSession, name: str
                    ) -> Callable[[int, Callable[[str | Exception], None]], None]:
    conn, tasks = session.conn, session.tasks

    def fetch(n: int, done: Callable[[str | Exception], None]) -> None:
        tasks.run(lambda: api.version_code(conn, name, n), done, done)
    return fetch
