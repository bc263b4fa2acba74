"""The job code editor and its versions dialog.

- :class:`JobEditor` — the editor widget (see its methods and ``sig_*`` signals).
- :class:`VersionsDialog` — earlier saves, a diff against the editor, Restore.
- :func:`check_header` / :class:`HeaderProblem` — header problems with positions.
- ``catalog`` / ``completion`` — the completion data and rules, free of Qt.
- :func:`context_from_available` / :class:`HubContext` — the hub's approved modules and
  limit maxima, read from a ``/available`` answer.
"""

from console_app.editor.editor import JobEditor
from console_app.editor.header_check import HeaderProblem, check_header, declared_secrets
from console_app.editor.hub_context import HubContext, context_from_available
from console_app.editor.versions import FetchCode, VersionsDialog

__all__ = ["FetchCode", "HeaderProblem", "HubContext", "JobEditor", "VersionsDialog",
           "check_header", "context_from_available", "declared_secrets"]
