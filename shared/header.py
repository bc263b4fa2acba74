"""The job header: the leading ``/* ... */`` comment whose ``Key: value`` lines are
the job's contract (metadata, limits, access level, mode).

Parsing never fails: an unreadable value falls back to its default and leaves a
warning that the hub shows in ``/available``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "ACCESS_LEVELS",
    "DEFAULT_LIMITS",
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

# A leading byte-order mark must not hide the header (it would silently drop Access).
_HEADER_RE = re.compile(r"\A\ufeff?\s*/\*(.*?)\*/", re.DOTALL)
_LINE_RE = re.compile(r"^\s*\*?\s*([A-Za-z][A-Za-z0-9 _-]*?)\s*:(?!//)\s*(.*?)\s*$")
# A whole number, optionally with a unit written straight after it ("512MB", "60000ms").
_NUMBER_RE = re.compile(r"^(\d+)(?:[A-Za-z]{1,2})?$")

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
    secrets: tuple[str, ...] = ()   # the names ``secrets.get`` may read
    extra: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _header_lines(source: str) -> list[tuple[str, str]]:
    match = _HEADER_RE.match(source)
    if not match:
        return []
    pairs = []
    for line in match.group(1).splitlines():
        m = _LINE_RE.match(line)
        if m:
            pairs.append((m.group(1).strip().lower(), m.group(2)))
    return pairs


_LIMIT_LABELS = {"runtime": "Runtime", "memory": "Memory", "cpu": "CPU"}


def _limit_value(key: str, raw: str, warnings: list[str]) -> int | None:
    # Allow a trailing comment or unit after the number ("60000  ms of wall clock").
    token = raw.split()[0].replace("_", "") if raw.split() else ""
    match = _NUMBER_RE.match(token)
    if match and int(match.group(1)) >= 1:
        return int(match.group(1))
    warnings.append(f"{_LIMIT_LABELS[key]}: '{raw}' is not a whole number of at least 1; "
                    "using the default")
    return None


def parse_header(source: str, job_name: str | None = None) -> JobHeader:
    """Read the header of ``source``. ``job_name`` decides the default access
    level: a job named ``public_...`` is public when the header says nothing."""
    header = JobHeader()
    access_given = False
    for key, raw in _header_lines(source):
        if key in _TEXT_KEYS:
            setattr(header, _TEXT_KEYS[key], raw)
        elif key in _LIMIT_KEYS:
            setattr(header, _LIMIT_KEYS[key], _limit_value(key, raw, header.warnings))
        elif key == "access":
            access_given = _read_access(header, raw)
        elif key == "mode":
            _read_mode(header, raw)
        elif key == "secrets":
            _read_secrets(header, raw)
        else:
            header.extra[key] = raw
    if not access_given:
        is_public = job_name is not None and job_name.startswith("public_")
        header.access = "public" if is_public else "user"
    return header


def _read_access(header: JobHeader, raw: str) -> bool:
    value = raw.split()[0].lower() if raw.split() else ""
    if value in ACCESS_LEVELS:
        header.access = value
        return True
    # An unreadable access level must never open a job up: fall back to owner.
    header.access = "owner"
    header.warnings.append(f"Access: '{raw}' is not one of {', '.join(ACCESS_LEVELS)}; "
                           "treated as owner")
    return True


def _read_mode(header: JobHeader, raw: str) -> None:
    value = raw.split()[0].lower() if raw.split() else ""
    if value in MODES:
        header.mode = value
    else:
        header.warnings.append(f"Mode: '{raw}' is not 'page'; treated as a plain job")


def _read_secrets(header: JobHeader, raw: str) -> None:
    """``Secrets: a, b`` (commas or spaces); a name that cannot be a secret's is left out
    with a warning. Several ``Secrets:`` lines add up."""
    names = list(header.secrets)
    for name in (n for n in re.split(r"[,\s]+", raw) if n):
        if not SECRET_NAME_RE.match(name):
            header.warnings.append(f"Secrets: '{name[:80]}' is not a secret name (letters, "
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
