"""One cluster, one key: every node of a hub database must run with the same
``WEBHUB_SECRET`` (it seals the secrets and signs what jobs sign).

The database keeps a check value, ``webhub_key_check`` (made by migration 0003):
an HMAC of a fixed label under a key derived from the secret — neither the secret
nor a plain hash of it, so the row tells nothing about the secret. The first node
to start writes it (an insert that adds nothing when another node's is there, then
read back, so two first nodes agree on one); every node compares its own with it
and refuses to start on a difference.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable

from hub.store.hubdb import HubDatabase
from shared.errors import InternalError

__all__ = ["KEY_CHECK_TABLE", "check_cluster_key", "key_check_value"]

KEY_CHECK_TABLE = "webhub_key_check"
LABEL = "cluster-key"
_DERIVE = b"webjobs cluster key check: key v1"
_CHECKED = b"webjobs cluster key check: value v1"


def key_check_value(secret: str) -> str:
    """The check value of ``secret`` (hex), the same on every node with that secret."""
    key = hmac.new(secret.encode(), _DERIVE, hashlib.sha256).digest()
    return hmac.new(key, _CHECKED, hashlib.sha256).hexdigest()


def check_cluster_key(db: HubDatabase, secret: str, *,
                      clock: Callable[[], float] = time.time) -> None:
    """Write this node's check value if the database has none; an InternalError naming
    WEBHUB_SECRET when the one there differs."""
    mine = key_check_value(secret)
    insert = db.dialect.insert_ignore(
        f"INSERT INTO {KEY_CHECK_TABLE} (label, check_value, created) VALUES (?, ?, ?)")
    db.write(insert, (LABEL, mine, clock()))
    row = db.read_one(f"SELECT check_value FROM {KEY_CHECK_TABLE} WHERE label = ?", (LABEL,))
    if row is None:
        raise InternalError(f"The {db.label} kept no cluster key check in {KEY_CHECK_TABLE}")
    if not hmac.compare_digest(str(row[0]), mine):
        raise InternalError(
            f"WEBHUB_SECRET differs from the one the other nodes on this {db.label} "
            f"({db.setting}) run with: this node refuses to start. Give every node the "
            "same WEBHUB_SECRET (or WEBHUB_HOME/secret file).")
