"""SQLite's full-text index of the run history made again without positions or token
counts (``detail=none, columnsize=0``), in the hub database and in a local history file.

Search checks every candidate the index gives with ``LIKE`` (hub/history/sqlsearch.py),
so the index only has to say which rows hold each trigram of the term; what it no
longer keeps made up most of what every run's insert wrote. The table and its triggers
are dropped and made again, then filled from the runs already kept (``rebuild``), so
every run recorded before is found as before. Merging is put off while the index is
built and the usual settings come back after it. Other servers: nothing to do.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

from alembic import op

from hub.store.migrations.revisions import execute_all, hub_dialect

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

FTS = "webjob_runs_fts"
TRIGGERS = ("webjob_runs_fts_insert", "webjob_runs_fts_delete", "webjob_runs_fts_update")
CANDIDATES = "tokenize='trigram', detail=none, columnsize=0"
WITH_POSITIONS = "tokenize='trigram'"  # as revision 0001 made it


def _made_again(options: str) -> list[str]:
    """The index dropped, made with ``options`` and filled from the runs table."""
    config = f"INSERT INTO {FTS}({FTS}, rank) VALUES"
    return [
        *(f"DROP TRIGGER IF EXISTS {name}" for name in TRIGGERS),
        f"DROP TABLE IF EXISTS {FTS}",
        f"CREATE VIRTUAL TABLE {FTS} USING fts5(search_text, content='webjob_runs', "
        f"content_rowid='id', {options})",
        "CREATE TRIGGER webjob_runs_fts_insert AFTER INSERT ON webjob_runs BEGIN "
        f"INSERT INTO {FTS}(rowid, search_text) VALUES (new.id, new.search_text); END",
        "CREATE TRIGGER webjob_runs_fts_delete AFTER DELETE ON webjob_runs BEGIN "
        f"INSERT INTO {FTS}({FTS}, rowid, search_text) "
        "VALUES ('delete', old.id, old.search_text); END",
        "CREATE TRIGGER webjob_runs_fts_update AFTER UPDATE OF search_text "
        f"ON webjob_runs BEGIN INSERT INTO {FTS}({FTS}, rowid, search_text) "
        "VALUES ('delete', old.id, old.search_text); "
        f"INSERT INTO {FTS}(rowid, search_text) VALUES (new.id, new.search_text); END",
        f"{config} ('automerge', 0)",
        f"{config} ('crisismerge', 2000)",
        f"INSERT INTO {FTS}({FTS}) VALUES ('rebuild')",
        f"{config} ('automerge', 4)",
        f"{config} ('crisismerge', 16)",
    ]


def _defined_with(options: str) -> bool:
    row = op.get_bind().exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (FTS,)).first()
    return row is not None and str(row[0]).rstrip().endswith(f", {options})")


def upgrade() -> None:
    if hub_dialect().name == "sqlite" and not _defined_with(CANDIDATES):
        execute_all(_made_again(CANDIDATES))


def downgrade() -> None:
    if hub_dialect().name == "sqlite" and not _defined_with(WITH_POSITIONS):
        execute_all(_made_again(WITH_POSITIONS))
