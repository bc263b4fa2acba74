"""What a failing statement on the hub's own database is reported as: a value the
server refuses is the statement's fault (SYS-500, the connection kept), not an outage
(SYS-503, which makes the history writer spool and retry it for ever)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.errors import InternalError, StoreUnavailable
from tests.servers import database_nodes


@pytest.mark.parametrize("kind", ["postgresql", "postgresql-odbc", "mariadb"])
def test_a_value_out_of_range_is_not_an_outage(kind: str, tmp_path: Path) -> None:
    with database_nodes(kind, tmp_path) as node:
        db = node()
        db.write("CREATE TABLE narrow (n SMALLINT)")
        with pytest.raises(InternalError) as caught:
            db.write("INSERT INTO narrow (n) VALUES (?)", [10**9])
        assert not isinstance(caught.value, StoreUnavailable), caught.value
        assert db.read("SELECT COUNT(*) FROM narrow")[0][0] == 0  # and it still answers
