"""The job code editor and its versions dialog.

- :class:`JobEditor` — the editor widget (see its methods and ``sig_*`` signals).
- :class:`VersionsDialog` — earlier saves, a diff against the editor, Restore.
- :func:`check_header` / :class:`HeaderProblem` — header problems with positions.
- ``catalog`` / ``completion`` — the completion data and rules, free of Qt.
"""

from console_app.editor.editor import JobEditor
from console_app.editor.header_check import HeaderProblem, check_header, declared_secrets
from console_app.editor.versions import FetchCode, VersionsDialog

__all__ = ["FetchCode", "HeaderProblem", "JobEditor", "VersionsDialog", "check_header",
           "declared_secrets"]
