"""Database values to JSON and back: one mapping, the same for every driver.

A job's ``db.exec`` sees every column value as one of these (database → JSON):

=========================  ===================================================
database value             JSON value
=========================  ===================================================
``None`` (SQL NULL)        ``null``
``bool``                   ``true`` / ``false``
``int``                    a number when ``|n| <= 2**53``, else a decimal string
``float``                  a number; NaN and ±infinity become ``null``
``decimal.Decimal``        a number when the decimal is exactly a double
                           (``float(d) == d``), else its decimal string;
                           NaN and ±infinity become ``null``
``datetime.datetime``      ISO 8601, ``2024-05-01T13:45:00[.ffffff][+02:00]``:
                           a naive value stays naive, an aware one keeps its offset
``datetime.date``          ``YYYY-MM-DD``
``datetime.time``          ``HH:MM:SS[.ffffff]`` (plus its offset if it has one)
``datetime.timedelta``     an ISO 8601 duration, ``[-]P[nD]T[nH][nM]n[.ffffff]S``,
                           e.g. ``P1DT2H3M4.5S``, ``-PT30S``, ``PT0S``
                           (days are 24 hours; a negative value gets a leading ``-``)
``bytes`` / ``bytearray``  base64 text (standard alphabet, padded)
/ ``memoryview``
``uuid.UUID``              its canonical text ``xxxxxxxx-xxxx-...``
``str``                    the same text
=========================  ===================================================

Anything else a driver hands back is turned into its ``str()``.

Parameters go the other way (JSON → database): ``null``, booleans, numbers and
strings pass through unchanged; ``{"base64": "..."}`` becomes ``bytes``; lists
and any other object are refused with :class:`~shared.errors.JobFailed`, which
the job sees as a thrown error naming the parameter.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import decimal
import math
import uuid
from collections.abc import Sequence
from typing import Any

from shared.errors import JobFailed

__all__ = ["MAX_SAFE_INT", "duration_iso", "param_from_json", "params_from_json", "to_json"]

JsonValue = None | bool | int | float | str

# Largest integer a JavaScript number holds exactly.
MAX_SAFE_INT = 2**53


def to_json(value: Any) -> JsonValue:
    """One database value as its JSON-safe value (see the module table)."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if abs(value) <= MAX_SAFE_INT else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return _decimal(value)
    if isinstance(value, dt.datetime):  # before date: a datetime is a date
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return duration_iso(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(value)


def _decimal(value: decimal.Decimal) -> JsonValue:
    if not value.is_finite():
        return None
    as_float = float(value)
    if math.isfinite(as_float) and decimal.Decimal(as_float) == value:
        return as_float
    return str(value)


def duration_iso(value: dt.timedelta) -> str:
    """``value`` as an ISO 8601 duration with days of 24 hours, e.g. ``P1DT2H3M4.5S``."""
    sign = "-" if value < dt.timedelta(0) else ""
    micros = abs(value) // dt.timedelta(microseconds=1)
    seconds, micros = divmod(micros, 1_000_000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    out = f"{sign}P{days}D" if days else f"{sign}P"
    time_part = (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    if seconds or micros or not (days or time_part):
        time_part += f"{seconds}.{micros:06d}".rstrip("0").rstrip(".") + "S"
    return out + ("T" + time_part if time_part else "")


def param_from_json(value: Any, position: int = 1) -> Any:
    """One JSON parameter as the value bound to a ``?`` (``position`` counts from 1)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict) and set(value) == {"base64"}:
        return _base64_param(value["base64"], position)
    kind = "a list" if isinstance(value, list | tuple) else f"a {type(value).__name__}"
    if isinstance(value, dict):
        kind = "an object other than {base64: '...'}"
    raise JobFailed(
        f"db.exec parameter {position} is {kind}; parameters must be null, a boolean, "
        "a number, a string or {base64: '...'} for binary data"
    )


def _base64_param(text: Any, position: int) -> bytes:
    if not isinstance(text, str):
        raise JobFailed(f"db.exec parameter {position}: 'base64' must be a string")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise JobFailed(f"db.exec parameter {position}: 'base64' is not valid base64") from None


def params_from_json(params: Sequence[Any] | None) -> list[Any]:
    """All parameters of one statement; ``None`` means none. Anything but a list is refused."""
    if params is None:
        return []
    if not isinstance(params, list | tuple):
        raise JobFailed("db.exec parameters must be a list (one value for each '?')")
    return [param_from_json(v, i) for i, v in enumerate(params, start=1)]
