"""The management API's bodies, one definition for both sides.

Every request and answer body of ``/api/webjobs/...`` (not a job's own answer) is a
frozen stdlib dataclass in a module of this package, one module per feature
(``shared.wire.secrets``, ...). Its field names are the JSON's names, camelCase as on
the wire, so the dataclass *is* the shape:

- the hub declares it as the route's body and ``response_model``: FastAPI validates
  with it and ``/openapi.json`` shows it (``hub.api.typed``);
- the console turns an answer into it with :func:`decode` (stdlib only), so a field
  renamed on one side fails the console's tests, not an owner's screen.

Conventions: a field that may be absent has a default; ``X | None`` means JSON null is
allowed; lists are ``tuple[X, ...]`` (immutable, read from JSON arrays); timestamps are
ISO-8601 strings as the hub writes them. Unknown keys in an answer are skipped
(an older console keeps working with a newer hub); ``strict=True`` refuses them, which
the drift tests use.
"""

from __future__ import annotations

from shared.wire.decode import ShapeError, decode, encode

__all__ = ["ShapeError", "decode", "encode"]
