"""Pieces of the Manage page: the badge delegate, the new-job template and the
injectable ways the page asks the owner things (so tests can answer them)."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QRect, QSize, QSortFilterProxyModel, Qt, QUrl
from PySide6.QtGui import QColor, QDesktopServices, QPainter, QPen
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMessageBox,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from console_app.models.jobs import BADGES_ROLE, Badge
from console_app.models.rows import Index
from console_app.pages.create_dialog import NewJob, ask_new_job
from console_app.run.params import ParamsDialog

BADGE_COLOURS = {"public": "#1e88e5", "page": "#8e24aa", "extended": "#ef6c00",
                 "scheduled": "#2e7d32", "schedule-off": "#9e9e9e", "key": "#6d4c41"}
BADGE_PAD, BADGE_GAP = 6, 4


class BadgeDelegate(QStyledItemDelegate):
    """Paints ``BADGES_ROLE`` as small coloured pills."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        badges = index.data(BADGES_ROLE)
        if not isinstance(badges, list):
            super().paint(painter, option, index)
            return
        self.initStyleOption(option, index)
        option.text = ""
        style = option.widget.style() if option.widget else None
        if style is not None:  # selection background and focus, without the text
            style.drawControl(style.ControlElement.CE_ItemViewItem, option, painter,
                              option.widget)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        metrics = option.fontMetrics
        x, rect = option.rect.x() + BADGE_GAP, option.rect
        height = metrics.height() + 2
        y = rect.y() + (rect.height() - height) // 2
        # On a selected row a pill of the selection's own colour would melt into it.
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        edge = QPen(QColor("#ffffff"), 1.5) if selected else QPen(Qt.PenStyle.NoPen)
        for badge in badges:
            width = metrics.horizontalAdvance(badge.text) + 2 * BADGE_PAD
            pill = QRect(x, y, width, height)
            painter.setPen(edge)
            painter.setBrush(QColor(BADGE_COLOURS.get(badge.kind, "#757575")))
            painter.drawRoundedRect(pill, height / 2, height / 2)
            painter.setPen(QColor("#ffffff"))
            painter.drawText(pill, Qt.AlignmentFlag.AlignCenter, badge.text)
            x += width + BADGE_GAP
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        badges = index.data(BADGES_ROLE)
        base = super().sizeHint(option, index)
        if not isinstance(badges, list):
            return base
        metrics = option.fontMetrics
        width = sum(metrics.horizontalAdvance(b.text) + 2 * BADGE_PAD + BADGE_GAP
                    for b in badges if isinstance(b, Badge))
        return QSize(width + BADGE_GAP, max(base.height(), metrics.height() + 6))


def _ask_params(name: str, last: dict[str, Any], parent: QWidget | None) -> dict[str, Any] | None:
    dialog = ParamsDialog(name, last, parent)
    return dialog.params() if dialog.exec() == ParamsDialog.DialogCode.Accepted else None


def _confirm(title: str, text: str, parent: QWidget | None) -> bool:
    answer = QMessageBox.question(parent, title, text)
    return answer == QMessageBox.StandardButton.Yes


def _pick_file(title: str, parent: QWidget | None) -> str | None:
    path, _filter = QFileDialog.getOpenFileName(parent, title, "",
                                                "Jobs (*.job.js *.js);;All files (*)")
    return path or None


def _running_as_root() -> bool:
    # Browsers refuse to start as root and xdg-open still reports success: the
    # console cannot tell that nothing opened, so it says where to go instead.
    return hasattr(os, "geteuid") and os.geteuid() == 0


@dataclass
class Asker:
    """How the page asks the owner and reaches the desktop; tests replace each one."""

    params: Callable[[str, dict[str, Any], QWidget | None], dict[str, Any] | None] = \
        _ask_params
    confirm: Callable[[str, str, QWidget | None], bool] = _confirm
    pick_file: Callable[[str, QWidget | None], str | None] = _pick_file
    # The Create dialog: a name checked as typed and a template (None: cancelled).
    new_job: Callable[[Collection[str], QWidget | None], NewJob | None] = ask_new_job
    open_url: Callable[[QUrl], bool] = field(default=QDesktopServices.openUrl)
    as_root: Callable[[], bool] = _running_as_root


class CountHeader:
    """The list's header: how many jobs the filters show, of how many there are, and the
    store; kept current as the filters, the search or the list change."""

    def __init__(self, label: QLabel, proxy: QSortFilterProxyModel) -> None:
        self.label, self.proxy, self.store = label, proxy, ""
        for signal in (proxy.rowsInserted, proxy.rowsRemoved, proxy.modelReset,
                       proxy.layoutChanged):
            signal.connect(self.update)

    def update(self, *_args: Any) -> None:
        source = self.proxy.sourceModel()
        shown, total = self.proxy.rowCount(), source.rowCount() if source else 0
        count = str(total) if shown == total else f"{shown} of {total}"
        store = f" · store: {self.store}" if self.store else ""
        self.label.setText(f"<b>Jobs</b> · {count}{store}")
