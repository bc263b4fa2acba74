"""The cluster's key check: one row per check, written by the first node to start
(see :mod:`hub.store.keycheck`). Not in a local history file.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from hub.store.migrations.revisions import execute_all, hub_dialect, scope

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if scope() != "hub":
        return
    execute_all([hub_dialect().create_table("webhub_key_check", """label {varchar}(64) NOT NULL
        PRIMARY KEY,
        check_value {varchar}(128) NOT NULL,
        created {real} NOT NULL""")])


def downgrade() -> None:
    if scope() == "hub":
        execute_all(["DROP TABLE webhub_key_check"])
