"""One-time Scintilla set-up for a job editor (lexer, margins, markers, indicators)
and the colours, applied again whenever the system palette changes."""

from __future__ import annotations

from lexilla import create_lexer
from PySide6.QtGui import QFontDatabase
from pyside6_scintilla import Scintilla, ScintillaEdit

from console_app.editor import theme
from console_app.editor.catalog import GLOBAL_CLASSES, GLOBALS, JS_KEYWORDS
from console_app.editor.theme import Scheme, bgr

__all__ = ["apply_scheme", "configure"]

S = Scintilla
MARGIN_NUMBERS, MARGIN_SYMBOLS, MARGIN_FOLD = 0, 1, 2
MARK_BREAKPOINT, MARK_ERROR, MARK_WARNING, MARK_PAUSED_ARROW, MARK_PAUSED_LINE = 1, 2, 3, 4, 5
SYMBOL_MASK = sum(1 << m for m in (MARK_BREAKPOINT, MARK_ERROR, MARK_WARNING, MARK_PAUSED_ARROW))
# Indicators 0-7 belong to lexers; containers use 8 and up.
# IND_LIVE_ERROR: the hub's check while typing, cleared with each verdict apart from
# the errors a save or run reported (IND_ERROR, kept until cleared).
IND_ERROR, IND_WARNING, IND_LIVE_ERROR = 8, 9, 10
# Styles for annotations, above the cpp lexer's styles (0-27) and inactive ones (64-91).
STYLE_ERROR_NOTE, STYLE_WARNING_NOTE = 100, 101

_FOLD_SYMBOLS = {
    S.MarkerOutline.Folder: S.MarkerSymbol.BoxPlus,
    S.MarkerOutline.FolderOpen: S.MarkerSymbol.BoxMinus,
    S.MarkerOutline.FolderSub: S.MarkerSymbol.VLine,
    S.MarkerOutline.FolderTail: S.MarkerSymbol.LCorner,
    S.MarkerOutline.FolderEnd: S.MarkerSymbol.BoxPlusConnected,
    S.MarkerOutline.FolderOpenMid: S.MarkerSymbol.BoxMinusConnected,
    S.MarkerOutline.FolderMidTail: S.MarkerSymbol.TCorner,
}


def _lexer(sci: ScintillaEdit) -> None:
    lexer = create_lexer("cpp")
    if lexer is None:  # a lexilla build without cpp: plain text still edits fine
        return
    sci.setILexer(lexer.detach())
    for key, value in (("fold", "1"), ("fold.comment", "1"), ("fold.compact", "0"),
                       ("lexer.cpp.backquoted.strings", "1"),
                       ("lexer.cpp.track.preprocessor", "0")):
        sci.setProperty(key, value)
    sci.setKeyWords(0, " ".join(JS_KEYWORDS))
    sci.setKeyWords(1, " ".join(e.name for e in GLOBALS))  # the job's globals: WORD2
    sci.setKeyWords(3, " ".join(GLOBAL_CLASSES))
    sci.setKeyWords(5, "TODO FIXME XXX")


def _margins(sci: ScintillaEdit) -> None:
    sci.setMarginTypeN(MARGIN_NUMBERS, S.MarginType.Number)
    sci.setMarginMaskN(MARGIN_NUMBERS, 0)
    sci.setMarginTypeN(MARGIN_SYMBOLS, S.MarginType.Symbol)
    sci.setMarginMaskN(MARGIN_SYMBOLS, SYMBOL_MASK)
    sci.setMarginWidthN(MARGIN_SYMBOLS, 16)
    sci.setMarginSensitiveN(MARGIN_SYMBOLS, True)
    sci.setMarginCursorN(MARGIN_SYMBOLS, S.CursorShape.Arrow)
    sci.setMarginTypeN(MARGIN_FOLD, S.MarginType.Symbol)
    sci.setMarginMaskN(MARGIN_FOLD, S.MaskFolders)
    sci.setMarginWidthN(MARGIN_FOLD, 14)
    sci.setMarginSensitiveN(MARGIN_FOLD, True)
    sci.setAutomaticFold(S.AutomaticFold.Show | S.AutomaticFold.Click | S.AutomaticFold.Change)
    sci.setFoldFlags(S.FoldFlag.LineAfterContracted)
    for number, symbol in _FOLD_SYMBOLS.items():
        sci.markerDefine(number, symbol)


def _markers(sci: ScintillaEdit) -> None:
    sci.markerDefine(MARK_BREAKPOINT, S.MarkerSymbol.Circle)
    sci.markerDefine(MARK_ERROR, S.MarkerSymbol.RoundRect)
    sci.markerDefine(MARK_WARNING, S.MarkerSymbol.SmallRect)
    sci.markerDefine(MARK_PAUSED_ARROW, S.MarkerSymbol.ShortArrow)
    # In no margin's mask, so it colours the whole line's background.
    sci.markerDefine(MARK_PAUSED_LINE, S.MarkerSymbol.Background)
    for indicator in (IND_ERROR, IND_WARNING, IND_LIVE_ERROR):
        sci.indicSetStyle(indicator, S.IndicatorStyle.Squiggle)
    sci.annotationSetVisible(S.AnnotationVisible.Boxed)
    # End-of-line notes do not add lines, so a header note appearing while typing
    # does not push the code down.
    sci.eOLAnnotationSetVisible(S.EOLAnnotationVisible.Standard)


def configure(sci: ScintillaEdit, scheme: Scheme) -> None:
    """Everything that does not depend on colours, then the colours."""
    sci.setCodePage(S.CpUtf8)
    _lexer(sci)
    sci.setTabWidth(2)
    sci.setUseTabs(False)
    sci.setIndentationGuides(S.IndentView.LookBoth)
    sci.setCaretLineVisible(True)
    sci.setMouseDwellTime(500)
    sci.autoCSetIgnoreCase(True)
    sci.autoCSetOrder(S.Ordering.Custom)
    sci.autoCSetMaxHeight(10)
    sci.setVisiblePolicy(S.VisiblePolicy.Slop | S.VisiblePolicy.Strict, 5)
    # Scrollable as wide as the longest line seen, not Scintilla's fixed 2000 px: a
    # short file shows no horizontal scroll bar.
    sci.setScrollWidth(1)
    sci.setScrollWidthTracking(True)
    _margins(sci)
    _markers(sci)
    apply_scheme(sci, scheme)


def _base_styles(sci: ScintillaEdit, scheme: Scheme) -> None:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    default = S.StylesCommon.Default
    sci.styleSetFont(default, font.family())
    sci.styleSetSize(default, max(font.pointSize(), 9))
    sci.styleSetFore(default, bgr(scheme.fore))
    sci.styleSetBack(default, bgr(scheme.back))
    sci.styleClearAll()  # copies the default to every style before the syntax colours
    for style, colour in scheme.syntax.items():
        sci.styleSetFore(style, bgr(colour))
    sci.styleSetBold(theme.WORD, True)
    sci.styleSetItalic(theme.COMMENT_DOC, True)
    sci.styleSetFore(S.StylesCommon.LineNumber, bgr(scheme.margin_fore))
    sci.styleSetBack(S.StylesCommon.LineNumber, bgr(scheme.margin_back))
    sci.styleSetBack(S.StylesCommon.BraceLight, bgr(scheme.brace_good))
    sci.styleSetBold(S.StylesCommon.BraceLight, True)
    sci.styleSetBack(S.StylesCommon.BraceBad, bgr(scheme.brace_bad))
    for style, colour in ((STYLE_ERROR_NOTE, scheme.error),
                          (STYLE_WARNING_NOTE, scheme.warning)):
        sci.styleSetFore(style, bgr(colour))
        sci.styleSetBack(style, bgr(scheme.annotation_back if style == STYLE_ERROR_NOTE
                                    else scheme.back))
        sci.styleSetItalic(style, True)


def apply_scheme(sci: ScintillaEdit, scheme: Scheme) -> None:
    _base_styles(sci, scheme)
    sci.setCaretFore(bgr(scheme.fore))
    sci.setCaretLineBack(bgr(scheme.caret_line))
    sci.setSelBack(True, bgr(scheme.selection))
    sci.setMarginBackN(MARGIN_SYMBOLS, bgr(scheme.margin_back))
    sci.setFoldMarginColour(True, bgr(scheme.margin_back))
    sci.setFoldMarginHiColour(True, bgr(scheme.margin_back))
    for outline in _FOLD_SYMBOLS:
        sci.markerSetFore(outline, bgr(scheme.margin_back))
        sci.markerSetBack(outline, bgr(scheme.margin_fore))
    for number, colour in ((MARK_BREAKPOINT, scheme.breakpoint), (MARK_ERROR, scheme.error),
                           (MARK_WARNING, scheme.warning), (MARK_PAUSED_ARROW, scheme.warning)):
        sci.markerSetFore(number, bgr(colour))
        sci.markerSetBack(number, bgr(colour))
    sci.markerSetBack(MARK_PAUSED_LINE, bgr(scheme.paused))
    sci.indicSetFore(IND_ERROR, bgr(scheme.error))
    sci.indicSetFore(IND_LIVE_ERROR, bgr(scheme.error))
    sci.indicSetFore(IND_WARNING, bgr(scheme.warning))
    sci.colourise(0, -1)
