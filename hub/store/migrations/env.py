"""Alembic's environment for the hub: the connection, already locked and inside its
transaction, is handed over by :mod:`hub.store.migrations.runner`."""

from __future__ import annotations

from alembic import context

attributes = context.config.attributes
context.configure(connection=attributes["connection"], hub_dialect=attributes["hub_dialect"],
                  hub_scope=attributes["hub_scope"])
with context.begin_transaction():
    context.run_migrations()
