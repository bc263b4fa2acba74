"""The secrets store contract on every hub database (SQLite, PostgreSQL, MariaDB):
values sealed with AES-GCM under a key from WEBHUB_SECRET and the name, who changed
each and when, and the refusals of a box that cannot open what it is given."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hub.secrets.box import SecretBox
from hub.secrets.store import SECRET_TABLE, SecretStore
from shared.errors import InternalError
from tests.servers import HUB_BACKENDS, database_nodes

HUB_SECRET = "the hub secret of this cluster"
MakeStore = Callable[..., SecretStore]


class Clock:
    def __init__(self) -> None:
        self.now = 1_795_000_000.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


@pytest.fixture(params=HUB_BACKENDS)
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeStore]:
    """Each call is another node on the same database (its own hub secret if given)."""
    clock = Clock()
    with database_nodes(request.param, tmp_path) as node:
        def make(secret: str = HUB_SECRET) -> SecretStore:
            return SecretStore(node(), SecretBox(secret), clock=clock)

        yield make


def test_put_values_list_and_delete(make_store: MakeStore) -> None:
    store = make_store()
    assert store.list_secrets() == [] and store.values(["a"]) == {}
    assert store.put("stripe_signing", "whsec_1 ünïcödé ✓", "ann") is True
    assert store.put("crm.api", "k-2", "bo") is True
    assert store.values(["stripe_signing", "crm.api", "absent"]) == {
        "stripe_signing": "whsec_1 ünïcödé ✓", "crm.api": "k-2"}
    listed = store.list_secrets()
    assert [(s.name, s.updated_by) for s in listed] == [("crm.api", "bo"),
                                                         ("stripe_signing", "ann")]
    assert store.put("crm.api", "k-3", "cy") is False  # replaced
    again = {s.name: s for s in store.list_secrets()}["crm.api"]
    assert again.updated_by == "cy" and again.updated > listed[0].updated
    assert store.values(["crm.api"]) == {"crm.api": "k-3"}
    assert store.delete("crm.api", "dee") is True and store.delete("crm.api", "dee") is False
    assert [s.name for s in store.list_secrets()] == ["stripe_signing"]
    changes = [(c.name, c.action, c.by) for c in store.changes()]
    assert changes == [("crm.api", "delete", "dee"), ("crm.api", "set", "cy"),
                       ("crm.api", "set", "bo"), ("stripe_signing", "set", "ann")]
    assert [c.action for c in store.changes("stripe_signing")] == ["set"]


def test_names_are_case_sensitive(make_store: MakeStore) -> None:
    store = make_store()
    store.put("Key", "upper-value", None)
    store.put("key", "lower-value", None)
    assert store.values(["Key", "key"]) == {"Key": "upper-value", "key": "lower-value"}


def test_rows_hold_only_sealed_values(make_store: MakeStore) -> None:
    store = make_store()
    store.put("hook", "plain-value-123", "ann")
    (stored,) = store.db.read(f"SELECT Value FROM {SECRET_TABLE} WHERE Name = ?", ["hook"])[0:1]
    assert "plain-value-123" not in str(stored[0]) and str(stored[0]).startswith("v1:")
    store.put("hook", "plain-value-123", "ann")
    (again,) = store.db.read(f"SELECT Value FROM {SECRET_TABLE} WHERE Name = ?", ["hook"])
    assert again[0] != stored[0]  # a fresh nonce each time


def test_another_node_reads_a_change_at_once(make_store: MakeStore) -> None:
    one, two = make_store(), make_store()
    one.put("hook", "first-value", "ann")
    assert two.values(["hook"]) == {"hook": "first-value"}
    two.put("hook", "second-value", "bo")
    assert one.values(["hook"]) == {"hook": "second-value"}


def test_a_row_moved_to_another_name_or_hub_secret_does_not_open(make_store: MakeStore) -> None:
    store = make_store()
    store.put("a_name", "value-of-a", None)
    store.put("b_name", "value-of-b", None)
    (sealed,) = store.db.read(f"SELECT Value FROM {SECRET_TABLE} WHERE Name = ?", ["a_name"])
    store.db.write(f"UPDATE {SECRET_TABLE} SET Value = ? WHERE Name = ?", [sealed[0], "b_name"])
    with pytest.raises(InternalError, match="Secret 'b_name' cannot be decrypted") as caught:
        store.values(["b_name"])
    assert "value-of" not in caught.value.message
    other = make_store("a different hub secret")
    with pytest.raises(InternalError, match="'a_name'"):
        other.values(["a_name"])


def test_concurrent_first_puts_both_land(make_store: MakeStore) -> None:
    stores = [make_store() for _ in range(4)]
    results: list[bool] = []
    threads = [threading.Thread(target=lambda s=s, i=i: results.append(  # type: ignore[misc]
        s.put("raced", f"value-{i}-xyz", f"node{i}"))) for i, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False, False, False, True]
    assert stores[0].values(["raced"])["raced"].startswith("value-")
    assert len(stores[0].changes("raced")) == 4


def test_log_mask_hides_held_values_until_released() -> None:
    import io
    import logging

    from hub.secrets.logmask import LogMask

    mask, out = LogMask(), io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(mask)
    logger = logging.getLogger("tests.secrets.mask")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        with mask.hold(["held-value-1"]), mask.hold(["held-value-1", "other-value"]):
            logger.warning("a %s and %s", "held-value-1", "other-value")
            try:
                raise ValueError("boom held-value-1")
            except ValueError:
                logger.exception("failed")
        logger.warning("after: held-value-1")
    finally:
        logger.removeHandler(handler)
    lines = out.getvalue()
    assert "a *** and ***" in lines and "boom ***" in lines
    assert lines.count("held-value-1") == 1 and "after: held-value-1" in lines
