"""What a revision script asks of the run it is part of (see :mod:`.runner`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from alembic import op

from hub.store.dialects import Dialect

__all__ = ["execute_all", "hub_dialect", "scope"]


def hub_dialect() -> Dialect:
    """The hub's dialect of the database being upgraded (column types, IF NOT EXISTS)."""
    return cast(Dialect, op.get_context().opts["hub_dialect"])


def scope() -> str:
    """``hub`` (the hub database: every table) or ``history`` (a local history file)."""
    return str(op.get_context().opts["hub_scope"])


def execute_all(statements: Sequence[str]) -> None:
    """Plain DDL, as the driver takes it (no bind-parameter parsing of the text)."""
    bind = op.get_bind()
    for statement in statements:
        bind.exec_driver_sql(statement)
