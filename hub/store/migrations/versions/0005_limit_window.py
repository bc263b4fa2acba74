"""The request rates' windows counted in the database, one row per counter
(:mod:`hub.store.limits_store`): PostgreSQL only (the buckets are arrays); the other
servers keep counting in ``IQXNetWebJobLimitHit``. Not in a local history file.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from hub.store.migrations.revisions import execute_all, hub_dialect, scope

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def _postgresql() -> bool:
    return scope() == "hub" and hub_dialect().name == "postgresql"


def upgrade() -> None:
    if not _postgresql():
        return
    d = hub_dialect()
    execute_all([
        d.create_table("IQXNetWebJobLimitWindow", "Counter {varchar}(80) NOT NULL PRIMARY KEY, "
                       "Buckets BIGINT[] NOT NULL, Hits INTEGER[] NOT NULL, "
                       "Admitted BOOLEAN NOT NULL, Touched {bigint} NOT NULL"),
        d.create_index("IQXNetWebJobLimitWindow_Touched", "IQXNetWebJobLimitWindow", "Touched"),
    ])


def downgrade() -> None:
    if _postgresql():
        execute_all(["DROP TABLE IQXNetWebJobLimitWindow"])
