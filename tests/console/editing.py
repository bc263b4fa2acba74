"""What the editor tests share: a job saved on the real hub for one test, and typing."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

from console_app.client import jobs as api
from console_app.client.connection import HubConnection
from console_app.editor_window import EditorWindow


@contextlib.contextmanager
def saved_job(connection: HubConnection, prefix: str, code: str) -> Iterator[str]:
    """A job of a fresh name saved on the hub, deleted afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:6]}"
    api.save(connection, name, code)
    try:
        yield name
    finally:
        api.delete(connection, name)


def type_text(window: EditorWindow, text: str) -> None:
    """Replace the text as typing would (``set_text`` loads text as saved)."""
    window.editor.sci.selectAll()
    window.editor.sci.replaceSel(text)
