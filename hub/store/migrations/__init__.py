"""The hub's schema, versioned with Alembic (``alembic_version`` in each database).

:func:`upgrade` brings a database to the newest revision (under a lock, so several
nodes starting at once upgrade it once); :func:`pending_migrations` says what is
missing (for a readiness probe); :func:`prepare_at_start` is what the hub runs before
its stores are used. See :mod:`.runner` for how each backend is reached."""

import logging

# Before Alembic is imported: it logs each plugin it sets up, and the context it makes
# at every start; the hub logs what an upgrade did instead.
logging.getLogger("alembic").setLevel(logging.WARNING)

from hub.store.migrations.runner import (  # noqa: E402
    current_revision,
    head_revision,
    pending_migrations,
    pending_on_pool,
    upgrade,
)
from hub.store.migrations.startup import (  # noqa: E402
    prepare_at_start,
    upgrade_local_history,
)

__all__ = ["current_revision", "head_revision", "pending_migrations", "pending_on_pool",
           "prepare_at_start", "upgrade", "upgrade_local_history"]
