"""History search on PostgreSQL through a ``pg_trgm`` GIN index on ``search_text``.

The search is ``search_text LIKE '%term%'``, which the trigram index answers without
reading every row. The extension needs the right to create it in the database (it is
a trusted extension: the database owner may); without that right, or without the
extension on the server, a warning is logged and search keeps its scan. MariaDB and
SQL Server keep their scan; SQLite has its own FTS5 trigram index (revision 0001).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import logging

from alembic import op
from sqlalchemy.exc import DBAPIError

from hub.store.migrations.revisions import execute_all, hub_dialect

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

log = logging.getLogger("webhub.db")
INDEX = "webjob_runs_search_trgm"


def upgrade() -> None:
    if hub_dialect().name != "postgresql":
        return
    try:
        with op.get_bind().begin_nested():
            execute_all(["CREATE EXTENSION IF NOT EXISTS pg_trgm"])
    except DBAPIError as exc:
        log.warning("history search keeps its scan: the pg_trgm extension cannot be made "
                    "in this database (%s); its owner or a superuser may run CREATE EXTENSION "
                    "pg_trgm, then CREATE INDEX %s ON webjob_runs USING gin (search_text "
                    "gin_trgm_ops)", str(exc.orig).strip().splitlines()[0], INDEX)
        return
    execute_all([f"CREATE INDEX IF NOT EXISTS {INDEX} ON webjob_runs "
                 "USING gin (search_text gin_trgm_ops)"])


def downgrade() -> None:
    if hub_dialect().name == "postgresql":
        execute_all([f"DROP INDEX IF EXISTS {INDEX}"])
