"""A run's failure as the run dialog and the editor's run pane show it: rich text, its
line said once and, where the job is in an editor to open, a ``line:N`` link."""

from __future__ import annotations

import html

from shared.ndjson import Failure

__all__ = ["failure_html"]


def failure_html(failure: Failure, linked: bool) -> str:
    """``CODE: message (line N, column C) · limit: L``, escaped; the line a link when
    ``linked``. The hub's message may end with "(line N)" already: it is said once."""
    message, where = failure.error, ""
    if failure.line:
        message = message.removesuffix(f" (line {failure.line})")
        column = f", column {failure.column}" if failure.column else ""
        place = f"line {failure.line}{column}"
        where = (f' (<a href="line:{failure.line}">{html.escape(place)}</a>)' if linked
                 else f" ({html.escape(place)})")
    limit = f" · limit: {failure.limit}" if failure.limit else ""
    return f"{html.escape(f'{failure.code}: {message}')}{where}{html.escape(limit)}"
