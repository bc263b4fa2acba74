"""*Create*: a new job from a template, its name checked in the dialog as it is typed.

Four templates: a plain JSON job, a page job (``Mode: page``, a form that posts back),
a signed webhook (HMAC of the raw body with a declared secret) and a scheduled report
(a CSV of a query, for the Scheduler to run). :func:`ask_new_job` is the Manage page's
way in: the chosen name and the template's code, or None when cancelled."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from shared.names import JOB_NAME_RE, MAX_NAME_LENGTH, RESERVED_NAMES

__all__ = ["TEMPLATES", "CreateJobDialog", "JobTemplate", "NewJob", "ask_new_job",
           "name_problem"]



@dataclass(frozen=True)
class JobTemplate:
    key: str
    title: str
    summary: str
    body: Callable[[str], str]   # the job's name -> its code


@dataclass(frozen=True)
class NewJob:
    name: str
    code: str


def _plain(name: str) -> str:
    return (f"/*\nName: {name}\nDescription: Answers with JSON\nAccess: owner\n"
            f"Runtime: 10 s\n*/\n"
            f"console.log('{name} started', params)\n"
            "return { ok: true, received: params }\n")


def _page(name: str) -> str:
    return (f"/*\nName: {name}\nDescription: A page with a form that posts back\n"
            "Access: user\nMode: page\n*/\n"
            'const esc = s => String(s ?? "").replace(/[&<>"\']/g, c => '
            '({ "&": "&amp;", "<": "&lt;", ">": "&gt;", \'"\': "&quot;", "\'": "&#39;" })[c])\n'
            'const who = String(params.name || "")\n'
            "const greeting = request.method === \"POST\"\n"
            "  ? `<p>Hello, <strong>${esc(who || \"stranger\")}</strong>.</p>`\n"
            "  : `<p>Type a name and send the form: it posts back to this job.</p>`\n"
            "return response.html(`<!doctype html>\n<html lang=\"en\"><head>"
            "<meta charset=\"utf-8\"><title>" + name + "</title></head>\n<body>\n"
            "  ${greeting}\n  <form method=\"post\"><input name=\"name\" "
            "placeholder=\"Your name\"><button>Send</button></form>\n</body></html>`)\n")


def _webhook(name: str) -> str:
    secret = re.sub(r"[^A-Za-z0-9_]", "_", name)
    secret = secret if re.match(r"[A-Za-z_]", secret) else f"_{secret}"
    return (f"/*\nName: {name}\nDescription: A signed webhook: X-Signature-256 is "
            f"sha256=<hex HMAC of the raw body>\nAccess: public\nSecrets: {secret}\n*/\n"
            "const given = String(request.headers['x-signature-256'] || '')\n"
            f"const expected = 'sha256=' + crypto.hmac('sha256', secrets.get('{secret}'), "
            "request.rawBytes())\n"
            "if (!given || !crypto.timingSafeEqual(given, expected)) {\n"
            "  console.warn('refused a delivery: missing or wrong signature')\n"
            "  return response.json({ error: 'Invalid signature' }, 401)\n}\n"
            "const event = JSON.parse(request.rawBody || '{}')\n"
            "console.log('verified a delivery')\n"
            "return { ok: true, kind: typeof event.type === 'string' ? event.type : null }\n")


def _report(name: str) -> str:
    return (f"/*\nName: {name}\nDescription: A CSV report; add a schedule for it on the "
            "Scheduler page\nAccess: owner\nRuntime: 2 min\n*/\n"
            "// Replace the query with your own; the Scheduler runs the job on its cron.\n"
            "const rows = await db.exec('SELECT 1 AS n')\n"
            "const columns = rows.length ? Object.keys(rows[0]) : []\n"
            "const cell = v => {\n"
            "  const text = v === null || v === undefined ? '' : String(v)\n"
            "  return /[\",\\n]/.test(text) ? `\"${text.replace(/\"/g, '\"\"')}\"` : text\n}\n"
            "const lines = [columns.join(','), ...rows.map(r => columns.map(c => "
            "cell(r[c])).join(','))]\n"
            "console.log(`report of ${rows.length} rows`)\n"
            f"return response.csv(lines.join('\\n') + '\\n', '{name}.csv')\n")


TEMPLATES: tuple[JobTemplate, ...] = (
    JobTemplate("json", "Plain JSON job", "Takes params, answers JSON.", _plain),
    JobTemplate("page", "Page job", "Mode: page — an HTML page whose form posts back.", _page),
    JobTemplate("webhook", "Signed webhook",
                "Public, checks an HMAC signature with a declared secret.", _webhook),
    JobTemplate("report", "Scheduled report",
                "A CSV of a query, for a schedule to run.", _report),
)


def name_problem(name: str, existing: Collection[str] = ()) -> str | None:
    """Why the hub would refuse ``name`` for a new job (or it is taken), in plain words."""
    if not name:
        return "Type a name for the job"
    if len(name) > MAX_NAME_LENGTH:
        return f"A name is at most {MAX_NAME_LENGTH} characters (this one has {len(name)})"
    if not JOB_NAME_RE.match(name):
        return "Use only letters, digits, '_' and '-' (no spaces or dots)"
    if name.lower() in RESERVED_NAMES:
        return f"'{name}' is one of the hub's own addresses; pick another name"
    if name.lower() in {e.lower() for e in existing}:
        return f"A job named '{name}' exists already"
    return None


class CreateJobDialog(QDialog):
    def __init__(self, existing: Collection[str] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Create a job")
        self._existing = list(existing)
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("weekly_report")
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #e53935")
        # Room for a two-line reason from the start: the form does not jump as one comes and goes.
        self.problem.setMinimumHeight(self.problem.fontMetrics().lineSpacing() * 2)
        self.templates = QListWidget()
        for template in TEMPLATES:
            self.templates.addItem(f"{template.title} — {template.summary}")
        self.preview = QPlainTextEdit(readOnly=True)
        self.preview.setToolTip("What the job starts as; edit it in the editor once created")
        self.preview.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Create")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("", self.problem)
        form.addRow("Template", self.templates)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.preview, 1)
        layout.addWidget(self.buttons)
        self.name_edit.textChanged.connect(self._update)
        self.templates.currentRowChanged.connect(lambda _row: self._update())
        self.templates.setCurrentRow(0)
        self.templates.setMaximumHeight(self.templates.sizeHintForRow(0) * len(TEMPLATES) + 8)
        self.resize(640, 560)
        self._update()

    def template(self) -> JobTemplate:
        return TEMPLATES[max(0, self.templates.currentRow())]

    def new_job(self) -> NewJob | None:
        name = self.name_edit.text().strip()
        if name_problem(name, self._existing):
            return None
        return NewJob(name, self.template().body(name))

    def _update(self) -> None:
        name = self.name_edit.text().strip()
        why = name_problem(name, self._existing)
        # An empty name is not an error yet: the owner has not typed anything.
        self.problem.setText(why if why and name else "")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(why is None)
        self.preview.setPlainText(self.template().body(name or "my_job"))


def ask_new_job(existing: Collection[str], parent: QWidget | None = None) -> NewJob | None:
    """The Create dialog, modal: the new job's name and code, or None."""
    dialog = CreateJobDialog(existing, parent)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return None
    return dialog.new_job()
