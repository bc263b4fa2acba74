"""The Secrets page's wire parsing, checks and table model, without a hub or views."""

from __future__ import annotations

import datetime as dt

from PySide6.QtCore import Qt
from pytestqt.modeltest import ModelTester

from console_app.client.secrets import (
    MAX_VALUE,
    MIN_VALUE,
    SecretInfo,
    name_problem,
    value_problem,
)
from console_app.models.secrets import (
    DECLARED,
    NAME,
    STATUS,
    UPDATED,
    Roles,
    SecretTableModel,
    badge_of,
    summary,
)
from shared.wire import decode
from shared.wire import secrets as wire_secrets

NOW = 1_800_000_000.0
ISO = dt.datetime.fromtimestamp(NOW - 180, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
WIRE = [
    {"name": "stripe_signing", "set": True, "declaredBy": ["pay_hook", "refunds"],
     "updatedAt": ISO, "updatedBy": "owner"},
    {"name": "crm_api", "set": False, "declaredBy": ["sync"], "updatedAt": None,
     "updatedBy": None},
    {"name": "old.token", "set": True, "declaredBy": [], "updatedAt": ISO, "updatedBy": None},
]


def items() -> list[SecretInfo]:
    return [SecretInfo.from_wire(decode(wire_secrets.SecretInfo, w, strict=True)) for w in WIRE]


def test_wire_to_info_and_badges() -> None:
    signing, crm, old = items()
    assert signing.declared_by == ("pay_hook", "refunds") and signing.updated_at == NOW - 180
    assert signing.updated_by == "owner" and badge_of(signing) == "set"
    assert crm.missing and not crm.is_set and crm.updated_at is None
    assert badge_of(crm) == "missing"
    assert old.unused and badge_of(old) == "unused"
    odd = wire_secrets.SecretInfo("x", True, (), "not a time", None)
    assert SecretInfo.from_wire(odd).updated_at is None
    assert summary(items()) == "2 secrets set · 1 missing"
    assert summary(items()[:1]) == "1 secret set"


def test_checks_mirror_the_hub() -> None:
    assert name_problem("stripe_signing") is None and name_problem("_a.b-c9") is None
    for bad in ("9lives", "has space", "x" * 65, "", "a/b", "é"):
        assert name_problem(bad) is not None, bad
    assert name_problem("x" * 64) is None
    assert value_problem("s" * MIN_VALUE) is None and value_problem("s" * MAX_VALUE) is None
    assert value_problem("s" * (MIN_VALUE - 1)) is not None
    assert value_problem("s" * (MAX_VALUE + 1)) is not None
    secret = "hunter2\x00xx"
    why = value_problem(secret)
    assert why is not None and "hunter2" not in why  # a refusal never quotes the value


def test_table_model_rows_badges_and_roles(qtmodeltester: ModelTester) -> None:
    model = SecretTableModel(clock=lambda: NOW)
    model.set_secrets(items())
    qtmodeltester.check(model)
    assert model.rowCount() == 3 and model.columnCount() == 4
    assert model.row_of("crm_api") == 0  # missing ones first
    crm = model.index(0, STATUS)
    assert model.data(crm) == "missing" and model.data(crm, Roles.MISSING) is True
    assert model.data(crm, Roles.BADGE_COLOUR) == "#c62828"
    assert model.data(model.index(0, UPDATED)) == "never set"
    row = model.row_of("stripe_signing")
    assert model.data(model.index(row, NAME)) == "stripe_signing"
    assert model.data(model.index(row, DECLARED)) == "pay_hook, refunds"
    assert model.data(model.index(row, DECLARED), Roles.DECLARED_BY) == ["pay_hook", "refunds"]
    assert model.data(model.index(row, UPDATED)).endswith(" by owner (3 min ago)")
    assert model.data(model.index(row, STATUS), Roles.BADGE) == "set"
    old = model.row_of("old.token")
    assert model.data(model.index(old, DECLARED)) == "no job"
    assert model.data(model.index(old, STATUS), Qt.ItemDataRole.ToolTipRole).startswith("Set, but")
    assert isinstance(model.data(model.index(old, NAME), Roles.SECRET), SecretInfo)
    model.set_secrets([])
    qtmodeltester.check(model)
    assert model.rowCount() == 0 and model.secret_at(0) is None
