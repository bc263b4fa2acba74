"""Every hub setting, declared once: its variable, the field of ``Settings`` it fills,
how its text is read, its default as the README shows it, and what it means.

``load_settings`` reads them in this order (a reader may use the values before it:
WEBHUB_HOME first); ``python -m hub.settings_doc`` writes the README's settings table
from them, and a test keeps the two equal. Any setting may instead come from the file
``<NAME>_FILE`` names (hub/setting_readers.py).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from hub.setting_readers import (
    Reader,
    Source,
    choice,
    count,
    flag,
    hours,
    in_home,
    kept,
    names,
    optional_text,
    path,
    text,
    url,
    whole,
    zone,
)


@dataclass(frozen=True)
class Declared:
    name: str               # the environment variable
    field: str | None       # what it fills in Settings; None: read by a library itself
    read: Reader | None
    default: str            # as the README shows it (Markdown)
    meaning: str            # the README's text (Markdown)


def host_name() -> Reader:
    return lambda src, name: src.raw(name) or socket.gethostname()


def _half_the_runs(src: Source) -> int:
    # A worker that just finished is busy building its next context for a few
    # milliseconds; spares keep a ready one at hand for every free slot.
    return max(2, int(src.values["max_concurrent"]) // 2)


DECLARED: tuple[Declared, ...] = (
    Declared("WEBHUB_HOME", "home", path("./.webhub"),
             "`./.webhub`",
             "The hub's data folder: its secret, system token, the embedded `hub.db`, "
             "the local history `history.db` and the history spool."),
    Declared("WEBHUB_DB", "hub_db", url(in_home("hub.db")),
             "`sqlite:///WEBHUB_HOME/hub.db`",
             "The hub's own tables — users, tokens, sessions, API keys, the job store "
             "when `WEBJOB_STORE=db`, schedules, history when "
             "`WEBJOB_HISTORY_STORE=sql`, and a cluster's nodes, runs in flight and "
             "limit counters. `sqlite:///path`; "
             "`postgresql://user:password@host:port/database[?sslmode=…]` (also "
             "`postgres://`: PostgreSQL through psycopg 3, the form for several nodes, "
             "the only one that pushes changes between them); or `odbc:<connection "
             "string>` to PostgreSQL (\"PostgreSQL Unicode\"), MariaDB or SQLite3. A "
             "database that cannot be reached fails within 3 s; logs and errors never "
             "show the password. The hub upgrades the tables at start (see *Running "
             "several nodes*). Jobs' `db.exec` (`WEBJOB_DB`) stays ODBC."),
    Declared("WEBJOB_STORE", "job_store",
             choice(("files", "db"), "files", aliases={"file": "files"}),
             "`files`",
             "Where jobs live: `files` (the jobs folder) or `db` (the `IQXNetWebJob` "
             "table on `WEBHUB_DB`; each node keeps the jobs it has loaded and learns "
             "of saves by `NOTIFY` on PostgreSQL through psycopg, or by one small "
             "version check per run elsewhere, so every node sees a save at once)."),
    Declared("WEBJOB_JOBS_DIR", "jobs_dir", path("./jobs"),
             "`./jobs`",
             "Where `<name>.job.js` files live (and `.versions/`, their saved "
             "versions)."),
    Declared("WEBJOB_HISTORY_STORE", "history_store", choice(("local", "sql", "mongo"), "local"),
             "`local`",
             "Where run history goes: `local` (a SQLite file per node), `sql` (the "
             "`webjob_runs` table on `WEBHUB_DB`, shared by nodes) or `mongo` "
             "(`IQXWebHub.webjob_runs` on `WEBJOB_MONGO_URL`)."),
    Declared("WEBJOB_HISTORY_MAX", "history_max", whole(100_000),
             "100000",
             "`local` history keeps the newest this many runs."),
    Declared("WEBJOB_HISTORY_RETENTION_DAYS", "history_retention_days", whole(90),
             "90",
             "Runs older than this are removed (hourly; a TTL index in MongoDB)."),
    Declared("WEBHUB_TZ", "timezone", zone("UTC"),
             "`UTC`",
             "The time zone new schedules use unless they name one (IANA, e.g. "
             "`Europe/London`)."),
    Declared("WEBJOB_MONGO_URL", "mongo_url", url(lambda src: "mongodb://127.0.0.1:27017"),
             "`mongodb://127.0.0.1:27017`",
             "The MongoDB server for `WEBJOB_HISTORY_STORE=mongo`."),
    Declared("WEBHUB_SECRET", "secret", kept("secret"),
             "generated into `WEBHUB_HOME/secret`",
             "Keys `sign`/`verify` (a key derived from it enters the sandbox, never the"
             " secret) and seals the secrets store (changing it makes stored secrets "
             "unreadable: set them again)."),
    Declared("WEBHUB_SYSTEM_TOKEN", "system_token", kept("system-token"),
             "generated into `WEBHUB_HOME/system-token` and printed at start",
             "Bearer token that may manage and run every job."),
    Declared("WEBHUB_NODE", "node", host_name(),
             "the host name",
             "This node's name (health, logs, `/running`); each node of a cluster needs"
             " its own, and a second live process with the same name refuses to start."),
    Declared("WEBHUB_NODE_URL", "node_url", url(trim_slash=True),
             "`http://<--host>:<--port>` of `webhub serve` (the host name when it "
             "listens on every address)",
             "How the other nodes reach this one: a debug session's requests that land "
             "elsewhere are passed on to its node."),
    Declared("WEBHUB_NODE_TIMEOUT_S", "node_timeout_s", whole(30),
             "30",
             "A node whose heartbeat is older than this is taken for dead: its runs are"
             " marked `interrupted`, its scheduled runs retried where the schedule says"
             " so. Keep the nodes' clocks in step (NTP) well within it: the database's"
             " public rate limit on PostgreSQL goes by the database server's clock, but"
             " Redis windows, other databases and sign-in throttling go by each node's,"
             " so a node's clock error shifts its own limits by as much."),
    Declared("WEBHUB_REDIS_URL", "redis_url", url(),
             "(none)",
             "Redis (`redis://[:password@]host:port/db`, `rediss://` for TLS) where "
             "every node counts the public rate limit and sign-in throttling, under "
             "`webjobs:<cluster>:` (derived from `WEBHUB_SECRET`). Unset: nodes on a "
             "server `WEBHUB_DB` count in that database; a SQLite `WEBHUB_DB` counts in"
             " memory. While the store is unreachable each node counts alone and warns "
             "once a minute."),
    Declared("WEBJOB_MAX_RUNTIME_MS", "max_runtime_ms", whole(300_000),
             "300000",
             "Cap on a job's `Runtime`."),
    Declared("WEBJOB_MAX_MEMORY_MB", "max_memory_mb", whole(2048),
             "2048",
             "Cap on a job's `Memory`."),
    Declared("WEBJOB_MAX_CPU_MS", "max_cpu_ms", whole(120_000),
             "120000",
             "Cap on a job's `CPU`."),
    Declared("WEBJOB_MAX_CONCURRENT", "max_concurrent", whole(8),
             "8",
             "Worker processes that hold runs at once on this node (each serves up to "
             "`WEBJOB_RUNS_PER_WORKER` runs); more runs wait in a queue."),
    Declared("WEBJOB_RUNS_PER_WORKER", "runs_per_worker", whole(16),
             "16",
             "Runs one worker process serves at once in its warm isolate, each with its own "
             "globals, interleaved while they wait (`db.exec`, `http()`, timers). `1`: "
             "one run per worker at a time. Jobs with `Isolation: fresh` or a `Memory` above "
             "the default always have a worker to themselves."),
    Declared("WEBJOB_QUEUE_TIMEOUT_MS", "queue_timeout_ms", whole(15_000),
             "15000",
             "How long a request may wait in the queue before `SYS-429`."),
    Declared("WEBJOB_MAX_BODY_MB", "max_body_mb", whole(10),
             "10",
             "Largest request body (`SYS-413` above it)."),
    Declared("WEBJOB_MAX_RESULT_MB", "max_result_mb", whole(50),
             "50",
             "Largest answer a run may return; over it the run fails with `JOB-003`, "
             "`limit: \"result\"` (the worker checks before sending, the hub again before"
             " reading)."),
    Declared("WEBJOB_MAX_PAYLOAD_MB", "max_payload_mb", whole(64),
             "64",
             "Largest single crossing between a job and the hub: a `db.exec` or "
             "`http()` call (SQL and parameters, a request body) or its answer (rows, a"
             " response). Over it the run fails with `JOB-003`, `limit: \"payload\"`."),
    Declared("WEBJOB_MAX_CONSOLE_MB", "max_console_mb", whole(10),
             "10",
             "A run's console, counted in characters plus 32 a line; over it the run "
             "fails with `JOB-003`, `limit: \"console\"`. A run's console lines past 8 MB"
             " are dropped first (with a line saying so), so only a worker that lies "
             "about its console reaches it, unless it is set lower."),
    Declared("WEBJOB_PUBLIC_RATE", "public_rate", count(60),
             "60",
             "Requests a minute per client address on public jobs for callers without "
             "credentials; 0 turns it off."),
    Declared("WEBHUB_TRUSTED_PROXIES", "trusted_proxies", text(),
             "(none)",
             "IPs or CIDRs of reverse proxies whose `X-Forwarded-For` is believed."),
    Declared("WEBHUB_HEADER_TIMEOUT_S", "header_timeout_s", whole(10),
             "10",
             "Seconds a request's headers may take to arrive, from its first byte (from "
             "the connection, for the first request); past them the connection is closed."),
    Declared("WEBHUB_SESSION_IDLE_HOURS", "session_idle_hours", hours(12.0),
             "12",
             "A browser session ends after this long unused."),
    Declared("WEBJOB_MODULES", "modules", names("date-fns,pdf-lib"),
             "`date-fns,pdf-lib`",
             "The npm modules jobs may `require()`; `make setup` installs them from the"
             " lockfile in `hub/engine/js/modules`."),
    Declared("WEBJOB_DB", "job_db", url(in_home("business.db")),
             "`sqlite:///WEBHUB_HOME/business.db`",
             "The database `db.exec` queries: `sqlite:///path`, or `odbc:<ODBC "
             "connection string>` (PostgreSQL with \"PostgreSQL Unicode\", MariaDB, SQL "
             "Server with \"ODBC Driver 18 for SQL Server\" or FreeTDS, SQLite3). "
             "`pyodbc` is loaded only for an ODBC URL."),
    Declared("WEBJOB_DB_POOL", "job_db_pool", whole(8),
             "8",
             "Connections to it, at most."),
    Declared("WEBJOB_DB_MAX_ROWS", "job_db_max_rows", whole(100_000),
             "100000",
             "Most rows one `db.exec` answer may hold: past them (or past "
             "`WEBJOB_MAX_PAYLOAD_MB`) the fetch stops and the run fails with `JOB-003`, "
             "`limit: \"rows\"` (or `\"payload\"`)."),
    Declared("WEBJOB_DB_SESSION_SQL", "job_db_session_sql", optional_text(),
             "(none)",
             "A statement run before each query with the caller's staff id as its one "
             "`?`, e.g. `EXEC sp_set_session_context N'userstaffid', ?` (SQL Server) or"
             " `SELECT set_config('webhub.userstaffid', ?, false)` (PostgreSQL)."),
    Declared("WEBJOB_HTTP_ALLOW", "http_allow", text(),
             "(any public host)",
             "Comma-separated host names `http()` may call (`*.example.org` for "
             "subdomains); set, it allows nothing else."),
    Declared("WEBJOB_HTTP_DENY", "http_deny", text(),
             "(none)",
             "Host names, IPs or CIDRs `http()` may never call."),
    Declared("WEBJOB_HTTP_TEST_LOOPBACK_PORT", "http_test_loopback_port", text(),
             "(none)",
             "Tests only: lets `http()` reach one port on 127.0.0.1. The hub logs a "
             "warning at start whenever it is set."),
    Declared("WEBJOB_PAGE_CONSOLE", "page_console", flag(),
             "off",
             "`1` adds the page console drawer (`?_console=1`) for every caller, not "
             "only owners signed in with a browser session: for dev servers."),
    Declared("WEBJOB_SPARE_WORKERS", "spare_workers", count(_half_the_runs),
             "half of `WEBJOB_MAX_CONCURRENT`, at least 2",
             "Worker processes kept warm beyond the concurrent runs, so a free slot "
             "never waits for a worker to get ready."),
    Declared("WEBHUB_LOG_FORMAT", "log_format", choice(("text", "json"), "text"),
             "`text`",
             "The server log's format: `text` (a line of time, level, logger and "
             "message) or `json` (one JSON object a line: `time`, `level`, `logger`, "
             "`message`, and `run`, `job`, `node`, `ref`, `caller` where known)."),
    Declared("WEBHUB_ACCESS_LOG", "access_log", flag(),
             "off",
             "`1` adds a line per HTTP request to the server log (in its format; secret"
             " values masked)."),
    Declared("WEBJOB_LOG_LINES", "job_log_lines", count(200),
             "200",
             "A run's console lines also go to the server log as `[WebJob:<name>] "
             "<level> <text>` with the run id, at most this many a run (one line then "
             "says how many were left out; history keeps its own cap); 0: none."),
    Declared("WEBHUB_METRICS_TOKEN", "metrics_token", optional_text(),
             "(none)",
             "A bearer token that may read `GET /metrics` (Prometheus) and nothing else; "
             "the system token may too."),
    Declared("WEBHUB_METRICS_ALLOW", "metrics_allow", text(),
             "(none)",
             "Addresses or networks that may read `GET /metrics` without a token (e.g. "
             "`10.0.5.0/24` for the Prometheus servers). A request that came through a "
             "proxy not in `WEBHUB_TRUSTED_PROXIES` (it carries `X-Forwarded-For`, "
             "`Forwarded` or `X-Real-IP`) is never let in by its address."),
    Declared("OTEL_EXPORTER_OTLP_ENDPOINT", None, None,
             "(none)",
             "Set, the hub sends traces over OTLP/HTTP to this collector (e.g. "
             "`http://127.0.0.1:4318`): a span per request and per run, with a child "
             "span for each `db.exec` and `http()` call. The SDK's other `OTEL_*` "
             "settings apply."),
    Declared("OTEL_SERVICE_NAME", None, None,
             "`webjobs-hub`",
             "The service name traces carry."),
)
