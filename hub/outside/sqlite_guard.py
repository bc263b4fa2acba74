"""What a job's SQL may not do on a SQLite business database.

A SQLite connection can reach far past its own file: ``ATTACH`` (and ``VACUUM INTO``,
which attaches its target) opens or creates any file the hub process may touch, the
hub's own ``hub.db`` and ``history.db`` included; ``load_extension`` runs native code;
some ``PRAGMA``s name the data folder or change how files are written. And a pooled
connection's TEMP objects outlive the statement that made them, so one caller's TEMP
view or trigger would shadow or capture the next caller's tables. None of that is the
business data a job is for, so it is refused:

* on ``sqlite:///`` URLs by an authorizer (:class:`SqliteGuard`) that SQLite asks
  about every action of every statement as it is compiled — exact, whatever the
  spelling;
* on the SQLite3 ODBC driver, which offers no authorizer, by reading the statement's
  tokens (:func:`refused_in_sqlite_text`). SQLite has no dynamic SQL, so a refused
  keyword or function name cannot be built at run time; what the reading cannot see
  is native code the driver was told to load (its ``LoadExt=`` option) and objects
  already in the file. TEMP objects are not refused there: those connections are
  never reused (see :mod:`hub.outside.database`).

A refusal reaches the job as :class:`~shared.errors.JobFailed` whose code is
``42501``, the SQL state for "insufficient privilege".
"""

from __future__ import annotations

import re
import sqlite3

from shared.errors import JobFailed

__all__ = ["REFUSED_STATE", "SESSION_TABLE", "SqliteGuard", "refusal", "refused_in_sqlite_text"]

REFUSED_STATE = "42501"
SESSION_TABLE = "webhub_session"  # the hub's per-connection table in the temp schema

# Read-only pragmas that name a table or index (or a check's limit) as their argument.
PRAGMAS_WITH_ARGUMENT = frozenset({
    "table_info", "table_xinfo", "index_info", "index_xinfo", "index_list",
    "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check",
})
# Pragmas allowed only as a query (no value): setting them would change the pooled
# connection for the next caller or how the file is written.
PRAGMAS_QUERY_ONLY = frozenset({
    "foreign_keys", "journal_mode", "user_version", "application_id", "encoding",
    "page_size", "page_count", "freelist_count", "schema_version", "data_version",
    "auto_vacuum", "collation_list", "function_list", "module_list", "pragma_list",
    "table_list", "compile_options",
})
# Native code, files on disk, or (fts3_tokenizer's two-argument form) a raw pointer.
REFUSED_FUNCTIONS = frozenset({
    "load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "fsdir",
})
_TEMP_ACTIONS = {
    sqlite3.SQLITE_CREATE_TEMP_TABLE: "CREATE TEMP TABLE",
    sqlite3.SQLITE_CREATE_TEMP_VIEW: "CREATE TEMP VIEW",
    sqlite3.SQLITE_CREATE_TEMP_TRIGGER: "CREATE TEMP TRIGGER",
    sqlite3.SQLITE_CREATE_TEMP_INDEX: "CREATE TEMP INDEX",
    sqlite3.SQLITE_DROP_TEMP_TABLE: "DROP of a TEMP table",
    sqlite3.SQLITE_DROP_TEMP_VIEW: "DROP of a TEMP view",
    sqlite3.SQLITE_DROP_TEMP_TRIGGER: "DROP of a TEMP trigger",
    sqlite3.SQLITE_DROP_TEMP_INDEX: "DROP of a TEMP index",
}
_WRITES = (sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE)
# Virtual tables that show the connection itself: sqlite_stmt lists the statements
# open on the pooled connection — other callers' SQL —, dbstat and sqlite_dbpage the
# file's raw pages.
REFUSED_TABLES = frozenset({"sqlite_stmt", "dbstat", "sqlite_dbpage"})


def refusal(what: str) -> JobFailed:
    """The job's error for a refused action."""
    return JobFailed(
        f"db.exec refuses {what}: jobs reach the business database's own tables only",
        sqlstate=REFUSED_STATE,
    )


def pragma_refused(name: str, has_value: bool) -> bool:
    lowered = name.lower()
    if lowered in PRAGMAS_WITH_ARGUMENT:
        return False
    return lowered not in PRAGMAS_QUERY_ONLY or has_value


class SqliteGuard:
    """The authorizer of one ``sqlite3`` connection (``set_authorizer``).

    ``refused`` names what the last denial was, so the job hears it in words rather
    than SQLite's bare "not authorized"; ``hub_statement`` is set while the hub's own
    session statement runs, the one thing that may write to the temp schema."""

    def __init__(self) -> None:
        self.refused: str | None = None
        self.hub_statement = False

    def __call__(
        self, action: int, arg1: str | None, arg2: str | None, schema: str | None,
        _trigger: str | None,
    ) -> int:
        what = self._refused_action(action, arg1, arg2, schema)
        if what is None:
            return sqlite3.SQLITE_OK
        self.refused = self.refused or what
        return sqlite3.SQLITE_DENY

    def _refused_action(
        self, action: int, arg1: str | None, arg2: str | None, schema: str | None
    ) -> str | None:
        if action == sqlite3.SQLITE_ATTACH:
            return "ATTACH and VACUUM (they open other files)"
        if action == sqlite3.SQLITE_DETACH:
            return "DETACH"
        if action == sqlite3.SQLITE_PRAGMA:
            name = arg1 or ""
            return f"PRAGMA {name}" if pragma_refused(name, arg2 is not None) else None
        if action == sqlite3.SQLITE_FUNCTION:
            name = (arg2 or "").lower()
            return f"the function {name}()" if name in REFUSED_FUNCTIONS else None
        if action == sqlite3.SQLITE_READ and (arg1 or "").lower() in REFUSED_TABLES:
            return f"reading {arg1} (it shows the connection, not the business tables)"
        if action in _TEMP_ACTIONS:
            return f"{_TEMP_ACTIONS[action]} (TEMP objects would outlive the run)"
        if action in _WRITES and schema == "temp":
            if self.hub_statement and arg1 == SESSION_TABLE:
                return None
            return "writing to the temp schema (TEMP objects would outlive the run)"
        return None


# ---------------------------------------------------------------- the ODBC driver's text

_TOKEN = re.compile(
    r"""
      (?P<space>\s+|--[^\n]*(?:\n|$)|/\*.*?(?:\*/|$))
    | (?P<string>'(?:[^']|'')*'?)
    | (?P<quoted>"(?:[^"]|"")*"?|`(?:[^`]|``)*`?|\[[^\]]*\]?)
    | (?P<word>[A-Za-z_\x80-\U0010FFFF][A-Za-z0-9_$\x80-\U0010FFFF]*)
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_KEYWORDS_REFUSED = {"attach": "ATTACH", "detach": "DETACH", "vacuum": "VACUUM"}


def _tokens(sql: str) -> list[tuple[str, str]]:
    """(kind, text) for each token but spaces and comments; identifiers unquoted."""
    out: list[tuple[str, str]] = []
    for match in _TOKEN.finditer(sql):
        kind = match.lastgroup or "other"
        text = match.group()
        if kind == "space":
            continue
        if kind == "quoted":
            text, kind = text[1:-1] if len(text) > 1 else "", "name"
        out.append((kind, text))
    return out


def refused_in_sqlite_text(sql: str) -> str | None:
    """What ``sql`` does that :class:`SqliteGuard` would deny, read from its tokens
    (for the SQLite3 ODBC driver, which has no authorizer); None when nothing."""
    tokens = _tokens(sql)
    for index, (kind, text) in enumerate(tokens):
        if kind not in ("word", "name"):
            continue
        lowered = text.lower()
        if kind == "word" and lowered in _KEYWORDS_REFUSED:
            return _KEYWORDS_REFUSED[lowered]
        if kind == "word" and lowered == "pragma":
            refused = _pragma_statement(tokens[index + 1:index + 5])  # it reads four
            if refused:
                return refused
        if lowered in REFUSED_FUNCTIONS:
            return f"the function {lowered}()"
        if lowered.startswith("pragma_") and pragma_refused(lowered[7:], False):
            return f"PRAGMA {lowered[7:]}"
    return None


def _pragma_statement(rest: list[tuple[str, str]]) -> str | None:
    """``PRAGMA [schema.]name [= value | (value)]``: the refusal, or None."""
    if len(rest) >= 3 and rest[1] == ("other", "."):
        rest = rest[2:]
    if not rest:
        return "PRAGMA"
    name = rest[0][1]
    has_value = len(rest) > 1 and rest[1][1] in ("=", "(")
    return f"PRAGMA {name}" if pragma_refused(name, has_value) else None
