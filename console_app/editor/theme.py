"""Editor colours for light and dark palettes, and the cpp lexer's style numbers.

The console follows the system palette, so the scheme is picked from the window
colour's lightness rather than from a setting."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette

__all__ = ["DARK", "LIGHT", "Scheme", "bgr", "is_dark", "scheme_for"]

# Lexilla's cpp lexer styles (SCE_C_*), the ones JavaScript uses.
DEFAULT, COMMENT, COMMENT_LINE, COMMENT_DOC, NUMBER, WORD, STRING, CHARACTER = range(8)
OPERATOR, IDENTIFIER, STRING_EOL = 10, 11, 12
REGEX, COMMENT_LINE_DOC, WORD2, COMMENT_DOC_KEYWORD, COMMENT_DOC_KEYWORD_ERROR = 14, 15, 16, 17, 18
GLOBAL_CLASS, STRING_RAW, TASK_MARKER, ESCAPE_SEQUENCE = 19, 20, 26, 27
COMMENT_STYLES = frozenset({COMMENT, COMMENT_LINE, COMMENT_DOC, COMMENT_LINE_DOC,
                            COMMENT_DOC_KEYWORD, COMMENT_DOC_KEYWORD_ERROR, TASK_MARKER})
STRING_STYLES = frozenset({STRING, CHARACTER, STRING_EOL, STRING_RAW, REGEX, ESCAPE_SEQUENCE})


@dataclass(frozen=True)
class Scheme:
    """Colours as ``#rrggbb``; ``syntax`` maps a lexer style to its foreground."""

    name: str
    fore: str
    back: str
    margin_fore: str
    margin_back: str
    caret_line: str
    selection: str
    brace_good: str
    brace_bad: str
    error: str
    warning: str
    breakpoint: str
    paused: str
    annotation_back: str
    syntax: dict[int, str]


LIGHT = Scheme(
    "light", fore="#1f1f1f", back="#ffffff", margin_fore="#8a8a8a", margin_back="#f3f3f3",
    caret_line="#f5f8ff", selection="#add6ff", brace_good="#c8f0c8", brace_bad="#ffc8c8",
    error="#d32f2f", warning="#d98200", breakpoint="#e51400", paused="#fff3a0",
    annotation_back="#fdecea",
    syntax={COMMENT: "#008000", COMMENT_LINE: "#008000", COMMENT_DOC: "#008000",
            COMMENT_LINE_DOC: "#008000", COMMENT_DOC_KEYWORD: "#267f99",
            NUMBER: "#098658", WORD: "#0000ff", WORD2: "#795e26", GLOBAL_CLASS: "#267f99",
            STRING: "#a31515", CHARACTER: "#a31515", STRING_RAW: "#a31515",
            STRING_EOL: "#a31515", REGEX: "#811f3f", ESCAPE_SEQUENCE: "#ee0000",
            OPERATOR: "#383838", IDENTIFIER: "#001080", TASK_MARKER: "#0000ff"},
)

DARK = Scheme(
    "dark", fore="#d4d4d4", back="#1e1e1e", margin_fore="#858585", margin_back="#252526",
    caret_line="#2a2d2e", selection="#264f78", brace_good="#0e4b2e", brace_bad="#6b1f1f",
    error="#f14c4c", warning="#cca700", breakpoint="#e51400", paused="#4b4b18",
    annotation_back="#3a1d1d",
    syntax={COMMENT: "#6a9955", COMMENT_LINE: "#6a9955", COMMENT_DOC: "#6a9955",
            COMMENT_LINE_DOC: "#6a9955", COMMENT_DOC_KEYWORD: "#4ec9b0",
            NUMBER: "#b5cea8", WORD: "#569cd6", WORD2: "#dcdcaa", GLOBAL_CLASS: "#4ec9b0",
            STRING: "#ce9178", CHARACTER: "#ce9178", STRING_RAW: "#ce9178",
            STRING_EOL: "#ce9178", REGEX: "#d16969", ESCAPE_SEQUENCE: "#d7ba7d",
            OPERATOR: "#d4d4d4", IDENTIFIER: "#9cdcfe", TASK_MARKER: "#569cd6"},
)


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def scheme_for(palette: QPalette) -> Scheme:
    return DARK if is_dark(palette) else LIGHT


def bgr(colour: str) -> int:
    """Scintilla takes colours as 0xBBGGRR."""
    c = QColor(colour)
    return c.red() | (c.green() << 8) | (c.blue() << 16)
