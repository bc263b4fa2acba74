"""PostgreSQL's history search index keeps a short pending list (64 kB, not 4 MB).

A GIN index puts new entries in an unsorted pending list and moves them into the index
in bulk, at a vacuum or once the list outgrows ``gin_pending_list_limit`` (4 MB by
default). Every search reads that whole list: measured at 300,000 runs, a search that
finds nothing took 5.4 ms with a full list and 0.7 ms with an empty one, and a rare
term's 8.1 ms became 5.3. With 64 kB the list is moved in by the history writer (off
the request path) every few hundred runs, and a search reads at most 64 kB of it. What
is pending now is moved in at once. Without the index (no ``pg_trgm``): nothing.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

from alembic import op

from hub.store.migrations.revisions import execute_all, hub_dialect

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

INDEX = "webjob_runs_search_trgm"   # made by revision 0002
PENDING_LIST_KB = 64


def _index_exists() -> bool:
    found = op.get_bind().exec_driver_sql(f"SELECT to_regclass('{INDEX}')")
    return found.scalar() is not None


def upgrade() -> None:
    if hub_dialect().name != "postgresql" or not _index_exists():
        return
    execute_all([f"ALTER INDEX {INDEX} SET (gin_pending_list_limit = {PENDING_LIST_KB})",
                 f"SELECT gin_clean_pending_list('{INDEX}'::regclass)"])


def downgrade() -> None:
    if hub_dialect().name == "postgresql" and _index_exists():
        execute_all([f"ALTER INDEX {INDEX} RESET (gin_pending_list_limit)"])
