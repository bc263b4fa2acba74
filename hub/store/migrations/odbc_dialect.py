"""A SQLAlchemy dialect for PostgreSQL reached through ``pyodbc`` (psqlODBC).

SQLAlchemy ships none; the migrations need only plain statements and the version
table, which PostgreSQL's own dialect compiles and pyodbc's connector sends. The
connection itself is always the hub's (``creator=``), never one SQLAlchemy opens."""

from __future__ import annotations

from sqlalchemy.connectors.pyodbc import PyODBCConnector
from sqlalchemy.dialects import registry
from sqlalchemy.dialects.postgresql.base import PGDialect

__all__ = ["URL", "PGDialectOdbc"]

URL = "postgresql+webhubodbc://"


class PGDialectOdbc(PyODBCConnector, PGDialect):  # type: ignore[misc]
    supports_statement_cache = True
    supports_native_decimal = True


registry.register("postgresql.webhubodbc", __name__, "PGDialectOdbc")
