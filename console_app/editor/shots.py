"""The editor's screens for ``python -m console_app.screenshots`` (it reads
``console_app.editor_window.SCREENSHOTS``): the editor after a run with the parameters
panel and a completion list open, the save-conflict dialog with its diff, and Create.

Scintilla's completion list is a window of its own, which a grab of the editor leaves
out: it is painted onto the editor's picture where it stands on screen."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QPoint
from PySide6.QtGui import QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QLabel, QWidget

DEMO_JOB = "demo_report"   # the screenshot tool's demo job


def _composite(window: QWidget) -> QLabel:
    """``window`` with every other visible top-level window over it (popups)."""
    picture = window.grab()
    origin = window.mapToGlobal(QPoint(0, 0))
    painter = QPainter(picture)
    for other in QApplication.topLevelWidgets():
        if other is not window and other.isVisible() and other.width() < window.width():
            painter.drawPixmap(other.mapToGlobal(QPoint(0, 0)) - origin, other.grab())
    painter.end()
    label = QLabel()
    label.setPixmap(QPixmap(picture))
    label.setWindowTitle(window.windowTitle())
    label.resize(picture.size())
    return label


def _editor(ctx: Any) -> QWidget:
    from console_app.editor_window import EditorWindow

    window = EditorWindow(ctx.session, DEMO_JOB, ask_unsaved=lambda _w, _n: "discard")
    window.show()
    ctx.wait_until(lambda: window.loaded)
    ctx.settle()
    window.params_panel.editor.setPlainText('{\n  "department": 1,\n  "limit": 20\n}')
    window.run()
    ctx.wait_until(lambda: window.run_pane.status not in ("idle", "running"))
    editor = window.editor
    editor.sci.documentEnd()
    editor.focus_editor()
    editor.sci.replaceSel("\nconsole.")
    editor.show_completions()
    ctx.settle()
    picture = _composite(window)
    window.editor.sci.autoCCancel()
    window.close()
    return picture


def _conflict(ctx: Any) -> QWidget:
    from console_app.client import jobs
    from console_app.client.gui_guard import blocking_on_purpose
    from console_app.editor.conflict import ConflictDialog
    from console_app.editor.hub_versions import version_fetcher

    with blocking_on_purpose():  # the tool's own reads, before the dialog exists
        versions = jobs.versions(ctx.session.conn, DEMO_JOB)
        text = jobs.code(ctx.session.conn, DEMO_JOB).replace("'half way'", "'two thirds'")
    current = max((v.version for v in versions), default=1)
    dialog = ConflictDialog(DEMO_JOB, max(1, current - 1), current, text,
                            version_fetcher(ctx.session, DEMO_JOB))
    dialog.show()
    dialog.compare()
    ctx.wait_until(lambda: dialog.diff_view.isVisible())
    return dialog


def _create(_ctx: Any) -> QWidget:
    from console_app.pages.create_dialog import CreateJobDialog

    dialog = CreateJobDialog([DEMO_JOB])
    dialog.name_edit.setText("signed_hook")
    dialog.templates.setCurrentRow(2)
    return dialog


SCREENSHOTS: dict[str, Callable[[Any], QWidget]] = {
    "editor-window": _editor,
    "editor-conflict": _conflict,
    "create-job-dialog": _create,
}
