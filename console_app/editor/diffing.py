"""A unified diff split into typed lines, so a view can colour them without parsing."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

__all__ = ["DiffLine", "unified_diff"]


@dataclass(frozen=True)
class DiffLine:
    """``kind``: ``"file"`` (the ---/+++ lines), ``"hunk"`` (@@), ``"add"``,
    ``"remove"`` or ``"context"``."""

    kind: str
    text: str


def _kind(line: str) -> str:
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "remove"
    return "context"


def unified_diff(old: str, new: str, old_label: str, new_label: str,
                 context: int = 3) -> list[DiffLine]:
    """``old`` → ``new`` as typed lines; empty when the texts are the same."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), old_label, new_label,
                                 n=context, lineterm="")
    # The first two lines name the files; telling them apart by their "---" would also
    # catch a removed line that starts with "--".
    return [DiffLine("file" if i < 2 else _kind(line), line) for i, line in enumerate(lines)]
