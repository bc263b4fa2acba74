"""Hub settings, read once from the environment (a ``.env`` file may supply them).

Each setting is declared once, in hub/setting_list.py (its variable, reader, default and
meaning); the README's settings table is generated from there.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hub.setting_list import DECLARED
from hub.setting_readers import Source
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
    runs_per_worker: int          # runs one worker's isolate serves at once
    max_body_mb: int
    spare_workers: int
    public_rate: int              # requests a minute per address on public jobs; 0: off
    trusted_proxies: str          # peers whose X-Forwarded-For is believed
    header_timeout_s: int         # a request's headers must arrive within this
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
    job_db_max_rows: int
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
    # Who may scrape GET /metrics: a bearer token of its own (or the system token), or
    # addresses and networks let in without one (none by default).
    metrics_allow: str = ""
    metrics_token: str | None = None

    @functools.cached_property
    def sign_key(self) -> str:
        """The key jobs' sign()/verify() use, derived so the secret itself never
        enters a V8 context (once: every run passes it)."""
        digest = hmac.new(self.secret.encode(), b"webjobs sign/verify v1", hashlib.sha256).digest()
        return base64.b64encode(digest).decode()

    @property
    def max_body_bytes(self) -> int:
        return self.max_body_mb * 1024 * 1024


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``env`` (default: the process environment plus ``./.env``)."""
    if env is None:
        from dotenv import load_dotenv

        load_dotenv(override=False)
        env = os.environ
    source = Source(env)
    values: dict[str, Any] = {}
    source.values = values
    for declared in DECLARED:
        if declared.field is None or declared.read is None:
            continue
        values[declared.field] = declared.read(source, declared.name)
        if declared.field == "home":
            values["home"].mkdir(parents=True, exist_ok=True)
            source.home = values["home"]
    values["maxima"] = Limits(runtime_ms=values.pop("max_runtime_ms"),
                              memory_mb=values.pop("max_memory_mb"),
                              cpu_ms=values.pop("max_cpu_ms"))
    return Settings(**values)


