"""Hub settings, read once from the environment (a ``.env`` file may supply them).

Every setting, its default and meaning is listed in the README's settings table.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import os
import secrets
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from shared.errors import BadRequest
from shared.header import Limits


@dataclass(frozen=True)
class Settings:
    home: Path
    jobs_dir: Path
    secret: str
    system_token: str
    node: str
    maxima: Limits
    max_concurrent: int
    queue_timeout_ms: int
    max_body_mb: int
    spare_workers: int
    public_rate: int              # requests a minute per address on public jobs; 0: off
    trusted_proxies: str          # peers whose X-Forwarded-For is believed
    session_idle_hours: float
    modules: tuple[str, ...]      # npm modules jobs may require()
    hub_db: str                   # the hub's own tables: users, jobs, schedules, history
    job_store: str                # files | db
    history_store: str            # local | sql | mongo
    history_max: int              # local store: newest runs kept
    history_retention_days: int
    mongo_url: str
    timezone: str                 # schedules' default time zone (IANA)
    job_db: str                   # the business database db.exec queries
    job_db_pool: int
    job_db_session_sql: str | None
    http_allow: str
    http_deny: str
    http_test_loopback_port: str  # tests only: lets http() reach one loopback port
    # Dev servers: the page console drawer (?_console=1) for every caller, not only owners.
    page_console: bool = False
    # Caps on one run (JOB-003 with limit "result", "payload" or "console" past them).
    max_result_mb: int = 50       # the result body
    max_payload_mb: int = 64      # one bridge call (db.exec, http()) or its answer
    max_console_mb: int = 10      # the console, in characters (plus 32 a line)
    # Several nodes on one hub database: limits counted in Redis when set, else in the
    # database (one node alone keeps them in memory); a node that has not beaten its
    # heartbeat for node_timeout_s seconds is taken for dead (its runs interrupted).
    redis_url: str | None = None
    node_timeout_s: int = 30
    # How the other nodes reach this one (a debug session's requests are passed on to
    # its node); `webhub serve` fills it from its --host and --port when not set.
    node_url: str | None = None
    # Operations: the log's format (text | json) and whether it has an access line per
    # request; a run's console lines in the server log (off, or at most N lines a run).
    log_format: str = "text"
    access_log: bool = False
    job_log_lines: int = 200      # 0: a run's console never reaches the server log
    # Who may scrape GET /metrics without the system token (addresses or networks).
    metrics_allow: str = "127.0.0.1,::1"

    @functools.cached_property
    def sign_key(self) -> str:
        """The key jobs' sign()/verify() use, derived so the secret itself never
        enters a V8 context (once: every run passes it)."""
        digest = hmac.new(self.secret.encode(), b"webjobs sign/verify v1", hashlib.sha256).digest()
        return base64.b64encode(digest).decode()

    @property
    def max_body_bytes(self) -> int:
        return self.max_body_mb * 1024 * 1024


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"{name} must be a whole number, not '{raw}'") from None
    if value <= 0:
        raise BadRequest(f"{name} must be positive, not {value}")
    return value


def _kept_value(env: Mapping[str, str], name: str, path: Path) -> str:
    """``env[name]`` if set, else a random value generated once into ``path`` (0600)."""
    given = env.get(name, "").strip()
    if given:
        return given
    if path.exists():
        return path.read_text().strip()
    value = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value + "\n")
    return value


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``env`` (default: the process environment plus ``./.env``)."""
    if env is None:
        from dotenv import load_dotenv

        load_dotenv(override=False)
        env = os.environ
    home = Path(env.get("WEBHUB_HOME", "") or "./.webhub").resolve()
    home.mkdir(parents=True, exist_ok=True)
    return Settings(
        home=home,
        jobs_dir=Path(env.get("WEBJOB_JOBS_DIR", "") or "./jobs").resolve(),
        secret=_kept_value(env, "WEBHUB_SECRET", home / "secret"),
        system_token=_kept_value(env, "WEBHUB_SYSTEM_TOKEN", home / "system-token"),
        node=env.get("WEBHUB_NODE", "").strip() or socket.gethostname(),
        maxima=Limits(
            runtime_ms=_int(env, "WEBJOB_MAX_RUNTIME_MS", 300_000),
            memory_mb=_int(env, "WEBJOB_MAX_MEMORY_MB", 2048),
            cpu_ms=_int(env, "WEBJOB_MAX_CPU_MS", 120_000),
        ),
        max_concurrent=_int(env, "WEBJOB_MAX_CONCURRENT", 8),
        queue_timeout_ms=_int(env, "WEBJOB_QUEUE_TIMEOUT_MS", 15_000),
        max_body_mb=_int(env, "WEBJOB_MAX_BODY_MB", 10),
        spare_workers=_spares(env),
        public_rate=_count(env, "WEBJOB_PUBLIC_RATE", 60),
        trusted_proxies=env.get("WEBHUB_TRUSTED_PROXIES", "").strip(),
        session_idle_hours=_hours(env, "WEBHUB_SESSION_IDLE_HOURS", 12.0),
        modules=tuple(m.strip() for m in env.get("WEBJOB_MODULES", "date-fns,pdf-lib").split(",")
                      if m.strip()),
        hub_db=env.get("WEBHUB_DB", "").strip() or f"sqlite:///{home / 'hub.db'}",
        job_store=_choice(env, "WEBJOB_STORE", ("files", "db"), "files"),
        history_store=_choice(env, "WEBJOB_HISTORY_STORE", ("local", "sql", "mongo"), "local"),
        history_max=_int(env, "WEBJOB_HISTORY_MAX", 100_000),
        history_retention_days=_int(env, "WEBJOB_HISTORY_RETENTION_DAYS", 90),
        mongo_url=env.get("WEBJOB_MONGO_URL", "").strip() or "mongodb://127.0.0.1:27017",
        timezone=_zone(env.get("WEBHUB_TZ", "").strip() or "UTC"),
        job_db=env.get("WEBJOB_DB", "").strip() or f"sqlite:///{home / 'business.db'}",
        job_db_pool=_int(env, "WEBJOB_DB_POOL", 8),
        job_db_session_sql=env.get("WEBJOB_DB_SESSION_SQL", "").strip() or None,
        http_allow=env.get("WEBJOB_HTTP_ALLOW", ""),
        http_deny=env.get("WEBJOB_HTTP_DENY", ""),
        http_test_loopback_port=env.get("WEBJOB_HTTP_TEST_LOOPBACK_PORT", ""),
        page_console=env.get("WEBJOB_PAGE_CONSOLE", "").strip() == "1",
        max_result_mb=_int(env, "WEBJOB_MAX_RESULT_MB", 50),
        max_payload_mb=_int(env, "WEBJOB_MAX_PAYLOAD_MB", 64),
        max_console_mb=_int(env, "WEBJOB_MAX_CONSOLE_MB", 10),
        redis_url=env.get("WEBHUB_REDIS_URL", "").strip() or None,
        node_timeout_s=_int(env, "WEBHUB_NODE_TIMEOUT_S", 30),
        node_url=env.get("WEBHUB_NODE_URL", "").strip().rstrip("/") or None,
        log_format=_choice(env, "WEBHUB_LOG_FORMAT", ("text", "json"), "text"),
        access_log=env.get("WEBHUB_ACCESS_LOG", "").strip() == "1",
        job_log_lines=_count(env, "WEBJOB_LOG_LINES", 200),
        metrics_allow=env.get("WEBHUB_METRICS_ALLOW", "127.0.0.1,::1").strip(),
    )


def _zone(name: str) -> str:
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise BadRequest(f"WEBHUB_TZ: '{name}' is not a known time zone") from None
    return name


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...], default: str) -> str:
    raw = env.get(name, "").strip().lower()
    if raw == "file":
        raw = "files"
    if not raw:
        return default
    if raw not in choices:
        raise BadRequest(f"{name} must be one of {', '.join(choices)}, not '{raw}'")
    return raw


def _hours(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        raise BadRequest(f"{name} must be a number of hours, not '{raw}'") from None
    if not value > 0:
        raise BadRequest(f"{name} must be positive, not {raw}")
    return value


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    """Like ``_int`` but 0 is allowed (it switches the thing off)."""
    return 0 if env.get(name, "").strip() == "0" else _int(env, name, default)


def _spares(env: Mapping[str, str]) -> int:
    # A worker that just finished is busy building its next context for a few
    # milliseconds; spares keep a ready one at hand for every free slot.
    default = max(2, _int(env, "WEBJOB_MAX_CONCURRENT", 8) // 2)
    return _count(env, "WEBJOB_SPARE_WORKERS", default)
