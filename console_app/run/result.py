"""A finished run's result, shown the way its type suggests: JSON as a tree with a raw
view, text as text, HTML as a preview with its source, CSV as a table, an image as a
picture; CSV, PDF, images and other files are offered for saving."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QObject, Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from console_app.models.rows import ROOT, Index
from console_app.run.json_tree import JsonTreeModel
from shared.ndjson import MetaData

# (suggested file name) -> chosen path or None; tests inject one instead of a file dialog.
SavePicker = Callable[[str], str | None]
CSV_PREVIEW_ROWS = 2000


def result_kind(meta: MetaData) -> str:
    """json | html | text | csv | image | file, from the metadata line."""
    fmt = meta.format.split(";")[0].strip().lower()
    if meta.type == "json":
        return "json"
    if meta.type == "csv" or fmt == "text/csv":
        return "csv"
    if meta.type == "html" or fmt == "text/html":
        return "html"
    if meta.type in ("text", "redirect") or fmt.startswith("text/") or fmt.endswith("json"):
        return "text"
    if fmt.startswith("image/"):
        return "image"
    return "file"


def suggested_name(meta: MetaData, job: str) -> str:
    if meta.filename:
        return meta.filename
    ext = {"csv": ".csv", "pdf": ".pdf", "html": ".html", "json": ".json"}.get(meta.type, "")
    return f"{job or 'result'}{ext}"


def _ask_save_path(suggested: str) -> str | None:
    path, _filter = QFileDialog.getSaveFileName(None, "Save the result", suggested)
    return path or None


class CsvModel(QAbstractTableModel):
    """The first rows of a CSV result; the first row is the header."""

    def __init__(self, text: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        rows = list(csv.reader(io.StringIO(text)))
        self.header: list[str] = rows[0] if rows else []
        self.rows: list[list[str]] = rows[1:CSV_PREVIEW_ROWS + 1]
        self.width = max([len(self.header), *(len(r) for r in self.rows)], default=0)

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else self.width

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self.header[section] if section < len(self.header) else ""
        return str(section + 1)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or role != Qt.ItemDataRole.DisplayRole:
            return None
        row = self.rows[index.row()]
        return row[index.column()] if index.column() < len(row) else ""


def _text_view(text: str) -> QPlainTextEdit:
    view = QPlainTextEdit(text)
    view.setReadOnly(True)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    return view


class ResultView(QWidget):
    """Shows one result; ``kind`` says which way, ``saved_to`` where Save wrote it."""

    def __init__(self, meta: MetaData, data: bytes, job: str = "",
                 save_picker: SavePicker | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.meta, self.data, self.job = meta, data, job
        self.kind = result_kind(meta)
        self.saved_to: Path | None = None
        self.save_error = ""
        self._pick = save_picker or _ask_save_path
        self.tabs = QTabWidget()
        self.json_model: JsonTreeModel | None = None
        self.csv_model: CsvModel | None = None
        self.save_button = QPushButton(f"Save {suggested_name(meta, job)}…")
        self.save_button.clicked.connect(self.save)
        self.info = QLabel(f"{meta.format} · {len(data)} bytes")
        bar = QHBoxLayout()
        bar.addWidget(self.info, 1)
        bar.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.tabs, 1)
        self._fill()

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")

    def _fill(self) -> None:
        fill: dict[str, Callable[[], None]] = {
            "json": self._json, "html": self._html, "text": self._text, "csv": self._csv,
            "image": self._image, "file": self._file}
        fill[self.kind]()
        # Text-like results are read here; files are what one saves.
        self.save_button.setVisible(self.kind in ("csv", "image", "file", "html"))

    def _json(self) -> None:
        try:
            value = json.loads(self.data or b"null")
        except ValueError:
            self.tabs.addTab(_text_view(self.text), "Raw")
            return
        self.json_model = JsonTreeModel(value, self)
        tree = QTreeView()
        tree.setModel(self.json_model)
        tree.setAlternatingRowColors(True)
        tree.expandToDepth(0)
        tree.resizeColumnToContents(0)
        self.tabs.addTab(tree, "Tree")
        self.tabs.addTab(_text_view(json.dumps(value, indent=2, ensure_ascii=False)), "Raw")

    def _html(self) -> None:
        preview = QTextBrowser()
        # A preview only: links and remote images are not followed from the console.
        preview.setOpenLinks(False)
        preview.setHtml(self.text)
        self.tabs.addTab(preview, "Preview")
        self.tabs.addTab(_text_view(self.text), "Source")

    def _text(self) -> None:
        self.tabs.addTab(_text_view(self.text), "Text")

    def _csv(self) -> None:
        self.csv_model = CsvModel(self.text, self)
        table = QTableView()
        table.setModel(self.csv_model)
        self.tabs.addTab(table, "Table")
        self.tabs.addTab(_text_view(self.text), "Raw")

    def _image(self) -> None:
        pixmap = QPixmap()
        label = QLabel()
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        if pixmap.loadFromData(self.data):
            label.setPixmap(pixmap)
        else:
            label.setText("This image could not be shown; save it to open it elsewhere.")
        self.tabs.addTab(label, "Image")

    def _file(self) -> None:
        name = suggested_name(self.meta, self.job)
        label = QLabel(f"The job answered a file: {name} ({self.meta.format}, "
                       f"{len(self.data)} bytes). Save it to open it.")
        label.setWordWrap(True)
        self.tabs.addTab(label, "File")

    def save(self) -> None:
        chosen = self._pick(suggested_name(self.meta, self.job))
        if not chosen:
            return
        try:
            Path(chosen).write_bytes(self.data)
        except OSError as err:
            self.save_error = f"Could not save to {chosen}: {err.strerror or err}"
            self.info.setText(self.save_error)
            return
        self.saved_to = Path(chosen)
        self.info.setText(f"Saved to {chosen}")
