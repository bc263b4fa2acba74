"""The job header: the leading ``/* ... */`` comment whose ``Key: value`` lines are
the job's contract (metadata, limits, access level, mode, isolation).

Parsing never fails: an unreadable value falls back to its default and leaves a
warning (with the line it is on) that the hub shows in ``/available`` and in
``POST /check``.

Limits take a unit: ``Runtime``/``CPU`` in ``ms``, ``s`` or ``min`` (milliseconds
when none is given), ``Memory`` in ``MB`` or ``GB`` (megabytes when none is given;
a GB is 1024 MB). The unit may follow the number straight away (``10s``) or after
a space (``10 s``); whatever comes after is commentary (``60000 ms of wall
clock``). A unit the hub does not take for that key (``10 h``, ``512 KB``,
``Runtime: 1 GB``) or a value that is not a whole number of the base unit
(``0.5 ms``) is refused with a warning, never read as something else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

__all__ = [
    "ACCESS_LEVELS",
    "DEFAULT_LIMITS",
    "ISOLATIONS",
    "SECRET_NAME_RE",
    "SECRET_VALUE_MAX",
    "SECRET_VALUE_MIN",
    "JobHeader",
    "Limits",
    "ResolvedLimits",
    "parse_header",
    "resolve_limits",
]

ACCESS_LEVELS = ("public", "user", "owner", "key")
MODES = ("job", "page")
# ``Isolation:``: "warm" runs in a compartment of a kept isolate (strict mode, frozen
# built-ins); "fresh" keeps the old behaviour (a fresh isolate per run, sloppy mode).
ISOLATIONS = ("warm", "fresh")

# A leading byte-order mark must not hide the header (it would silently drop Access).
_HEADER_RE = re.compile(r"\A\ufeff?\s*/\*(.*?)\*/", re.DOTALL)
_LINE_RE = re.compile(r"^\s*\*?\s*([A-Za-z][A-Za-z0-9 _-]*?)\s*:(?!//)\s*(.*?)\s*$")
# A number (digits, "_" between them, an optional fraction), the spaces after it,
# the word after those (a unit or commentary) and the rest.
_LIMIT_RE = re.compile(r"\A(\d+(?:_\d+)*(?:\.\d+)?)(\s*)([^\W\d_]*)(.*)\Z", re.DOTALL)
# Units per key, in the key's base unit (ms for times, MB for memory).
_TIME_UNITS = {"ms": 1, "msec": 1, "msecs": 1, "millisecond": 1, "milliseconds": 1,
               "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
               "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000}
_MEMORY_UNITS = {"mb": 1, "mib": 1, "megabyte": 1, "megabytes": 1,
                 "gb": 1024, "gib": 1024, "gigabyte": 1024, "gigabytes": 1024}
# Words that read as a unit: after a number they are refused unless the key takes
# them, so "10 h" or "512 KB" is never taken for 10 ms or 512 MB.
_UNIT_WORDS = frozenset({
    *_TIME_UNITS, *_MEMORY_UNITS, "ns", "us", "µs", "μs", "m", "h", "hr", "hrs", "hour",
    "hours", "d", "day", "days", "b", "byte", "bytes", "k", "kb", "kib", "kilobyte",
    "kilobytes", "g", "t", "tb", "tib", "meg", "megs", "gig", "gigs"})

# Header key (lower case) -> field name for the plain text fields.
_TEXT_KEYS = {
    "name": "name",
    "description": "description",
    "author": "author",
    "version": "version",
    "last updated": "last_updated",
}
_LIMIT_KEYS = {"runtime": "runtime", "memory": "memory", "cpu": "cpu"}
# A secret's name: what ``Secrets:`` declares and the hub's secrets store keys on.
SECRET_NAME_RE = re.compile(r"\A[A-Za-z_][A-Za-z0-9_.-]{0,63}\Z")
# A secret's value, in characters. Every value a run reads is masked wherever it occurs
# in the run's output, so a very short one would mask ordinary words too.
SECRET_VALUE_MIN = 6
SECRET_VALUE_MAX = 16 * 1024


@dataclass(frozen=True)
class Limits:
    runtime_ms: int
    memory_mb: int
    cpu_ms: int

    def as_job_view(self) -> dict[str, int]:
        """The ``limits`` global a job sees."""
        return {"runtimeMs": self.runtime_ms, "memoryMb": self.memory_mb, "cpuMs": self.cpu_ms}


DEFAULT_LIMITS = Limits(runtime_ms=10_000, memory_mb=256, cpu_ms=5_000)


@dataclass
class JobHeader:
    name: str | None = None
    description: str | None = None
    author: str | None = None
    version: str | None = None
    last_updated: str | None = None
    runtime: int | None = None
    memory: int | None = None
    cpu: int | None = None
    access: str = "user"
    mode: str = "job"
    isolation: str = "warm"
    secrets: tuple[str, ...] = ()   # the names ``secrets.get`` may read
    extra: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # Where each of ``warnings`` is, in the same order: (line, column), both 1-based.
    warning_places: list[tuple[int, int]] = field(default_factory=list)
    # Where each limit that was given is ("runtime" -> its value's line and column).
    limit_places: dict[str, tuple[int, int]] = field(default_factory=dict)

    def warn(self, place: tuple[int, int], message: str) -> None:
        self.warnings.append(message)
        self.warning_places.append(place)


@dataclass(frozen=True)
class _HeaderLine:
    key: str              # lower case
    value: str
    place: tuple[int, int]  # the value's line and column in the source


def _header_lines(source: str) -> list[_HeaderLine]:
    match = _HEADER_RE.match(source)
    if not match:
        return []
    line = source.count("\n", 0, match.start(1)) + 1
    line_start = source.rfind("\n", 0, match.start(1)) + 1
    offset = match.start(1)   # where the current piece starts in the source
    found = []
    for piece in match.group(1).splitlines(keepends=True):
        m = _LINE_RE.match(piece.rstrip("\r\n"))
        if m:
            column = offset + m.start(2) - line_start + 1
            found.append(_HeaderLine(m.group(1).strip().lower(), m.group(2), (line, column)))
        offset += len(piece)
        if piece.endswith("\n"):  # other line breaks end a header line, not an editor's
            line += 1
            line_start = offset
    return found


_LIMIT_LABELS = {"runtime": "Runtime", "memory": "Memory", "cpu": "CPU"}


def _limit_value(key: str, raw: str) -> tuple[int | None, str | None]:
    """The value in the key's base unit, or None and why it was refused."""
    label = _LIMIT_LABELS[key]
    units = _MEMORY_UNITS if key == "memory" else _TIME_UNITS
    taken = "MB or GB" if key == "memory" else "ms, s or min"
    base = "MB" if key == "memory" else "ms"
    match = _LIMIT_RE.match(raw)
    number, gap, word, rest = match.groups() if match else ("", "", "", "")
    unit = word.lower()
    # Glued on ("1e3", "10,000", "10s3"), or a word that is a unit of another kind or
    # scale ("10 h", "512 KB"): refused. Any other word after a space is commentary.
    glued = (not gap and not word and rest[:1] not in ("", " ", "\t")) or (
        word and (rest[:1].isalnum() or rest[:1] == "_"))
    if match is None or glued or (word and not gap and unit not in units):
        return None, (f"{label}: '{raw[:80]}' is not a number with a unit ({taken}); "
                      "using the default")
    if unit in _UNIT_WORDS and unit not in units:
        return None, (f"{label}: '{word[:20]}' is not a unit the hub takes here "
                      f"({taken}); using the default")
    if unit not in units:
        unit = base.lower()
    value = Decimal(number.replace("_", "")) * units[unit]
    if value != value.to_integral_value() or value < 1:
        return None, (f"{label}: '{raw[:80]}' is not a whole number of {base} of at least 1; "
                      "using the default")
    return int(value), None


def parse_header(source: str, job_name: str | None = None) -> JobHeader:
    """Read the header of ``source``. ``job_name`` decides the default access
    level: a job named ``public_...`` is public when the header says nothing."""
    header = JobHeader()
    access_given = False
    for item in _header_lines(source):
        key, raw = item.key, item.value
        if key in _TEXT_KEYS:
            setattr(header, _TEXT_KEYS[key], raw)
        elif key in _LIMIT_KEYS:
            value, refusal = _limit_value(key, raw)
            setattr(header, _LIMIT_KEYS[key], value)
            header.limit_places[key] = item.place
            if refusal is not None:
                header.warn(item.place, refusal)
        elif key == "access":
            access_given = _read_access(header, item)
        elif key == "mode":
            _read_mode(header, item)
        elif key == "isolation":
            _read_isolation(header, item)
        elif key == "secrets":
            _read_secrets(header, item)
        else:
            header.extra[key] = raw
    if not access_given:
        is_public = job_name is not None and job_name.startswith("public_")
        header.access = "public" if is_public else "user"
    return header


def _read_access(header: JobHeader, item: _HeaderLine) -> bool:
    raw = item.value
    value = raw.split()[0].lower() if raw.split() else ""
    if value in ACCESS_LEVELS:
        header.access = value
        return True
    # An unreadable access level must never open a job up: fall back to owner.
    header.access = "owner"
    header.warn(item.place, f"Access: '{raw}' is not one of {', '.join(ACCESS_LEVELS)}; "
                            "treated as owner")
    return True


def _read_mode(header: JobHeader, item: _HeaderLine) -> None:
    raw = item.value
    value = raw.split()[0].lower() if raw.split() else ""
    if value in MODES:
        header.mode = value
    else:
        header.warn(item.place, f"Mode: '{raw}' is not 'page'; treated as a plain job")


def _read_isolation(header: JobHeader, item: _HeaderLine) -> None:
    raw = item.value
    value = raw.split()[0].lower() if raw.split() else ""
    if value in ISOLATIONS:
        header.isolation = value
    else:
        header.warn(item.place, f"Isolation: '{raw[:80]}' is not 'warm' or 'fresh'; "
                                "treated as warm")


def _read_secrets(header: JobHeader, item: _HeaderLine) -> None:
    """``Secrets: a, b`` (commas or spaces); a name that cannot be a secret's is left out
    with a warning. Several ``Secrets:`` lines add up."""
    names = list(header.secrets)
    for name in (n for n in re.split(r"[,\s]+", item.value) if n):
        if not SECRET_NAME_RE.match(name):
            header.warn(item.place, f"Secrets: '{name[:80]}' is not a secret name (letters, "
                                    "digits, _ . -, at most 64); left out")
        elif name not in names:
            names.append(name)
    header.secrets = tuple(names)


@dataclass(frozen=True)
class ResolvedLimits:
    limits: Limits
    extended: bool
    notes: tuple[str, ...]


def resolve_limits(header: JobHeader, maxima: Limits,
                   defaults: Limits = DEFAULT_LIMITS) -> ResolvedLimits:
    """Declared limits, defaulted and clamped to the server maxima.

    ``extended`` is true when the job asks for more than a default (the list's
    *extended* badge); ``notes`` says what was clamped, for the server log."""
    notes: list[str] = []
    values = []
    for label, declared, default, cap in (
        ("Runtime", header.runtime, defaults.runtime_ms, maxima.runtime_ms),
        ("Memory", header.memory, defaults.memory_mb, maxima.memory_mb),
        ("CPU", header.cpu, defaults.cpu_ms, maxima.cpu_ms),
    ):
        value = default if declared is None else declared
        if value > cap:
            notes.append(f"{label}: {value} is above the server maximum {cap}; clamped")
            value = cap
        values.append(value)
    limits = Limits(*values)
    extended = (limits.runtime_ms > defaults.runtime_ms or limits.memory_mb > defaults.memory_mb
                or limits.cpu_ms > defaults.cpu_ms)
    return ResolvedLimits(limits, extended, tuple(notes))
