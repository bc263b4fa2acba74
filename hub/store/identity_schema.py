"""The tables of the hub's user directory, in any dialect of :mod:`hub.store.dialects`.

Plain columns only (integer keys, VARCHAR/INTEGER/REAL, timestamps as seconds
since the epoch, booleans as 0/1), so one text serves every database.
"""

from __future__ import annotations

from hub.store.hubdb import HubDatabase
from shared.errors import InternalError

SCHEMA_VERSION = 1


def _statements(db: HubDatabase) -> list[str]:
    d = db.dialect
    return [
        d.create_table("schema_version", "version INTEGER NOT NULL"),
        d.create_table("users", """{id},
            name {varchar}(64) NOT NULL UNIQUE,
            user_class {varchar}(16) NOT NULL,
            staff_id {bigint},
            password_hash {varchar}(255),
            disabled INTEGER NOT NULL DEFAULT 0,
            created {real} NOT NULL"""),
        d.create_table("api_tokens", """{id},
            user_id {bigint} NOT NULL REFERENCES users (id),
            digest {varchar}(64) NOT NULL UNIQUE,
            label {varchar}(100) NOT NULL,
            created {real} NOT NULL,
            last_used {real},
            revoked INTEGER NOT NULL DEFAULT 0"""),
        d.create_index("api_tokens_user", "api_tokens", "user_id"),
        d.create_table("sessions", """{id},
            user_id {bigint} NOT NULL REFERENCES users (id),
            digest {varchar}(64) NOT NULL UNIQUE,
            created {real} NOT NULL,
            last_seen {real} NOT NULL"""),
        d.create_index("sessions_user", "sessions", "user_id"),
        d.create_table("api_keys", """{id},
            job_name {varchar}(100) NOT NULL,
            digest {varchar}(64) NOT NULL UNIQUE,
            label {varchar}(100) NOT NULL,
            created {real} NOT NULL,
            last_used {real},
            revoked INTEGER NOT NULL DEFAULT 0"""),
        d.create_index("api_keys_job", "api_keys", "job_name"),
    ]


def ensure_identity_schema(db: HubDatabase) -> None:
    """Create the tables (if need be) and check this hub understands their version."""
    db.ensure_schema(_statements(db))
    with db.transaction() as tx:
        row = tx.read_one("SELECT MAX(version) FROM schema_version")
        found = row[0] if row else None
        if found is None:
            tx.write("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        elif int(found) > SCHEMA_VERSION:
            raise InternalError(f"The hub database has schema version {found}, newer than "
                                f"this hub understands ({SCHEMA_VERSION}); upgrade the hub")
