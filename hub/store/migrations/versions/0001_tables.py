"""The hub's tables as they were before migrations: adopted where they exist.

A frozen copy of the DDL the stores made with ``CREATE TABLE IF NOT EXISTS`` (history,
identity, schedules, secrets, jobs), so a database made by an older hub is taken over
as it stands (every statement is ``IF NOT EXISTS``) and then stamped. The stores' own
DDL may change later; this text never does.

Revision ID: 0001
Revises: none
"""

from __future__ import annotations

from hub.store.dialects import Dialect
from hub.store.migrations.revisions import execute_all, hub_dialect, scope

revision = "0001"
down_revision: str | None = None
branch_labels = None
depends_on = None

_BUCKETS = 35  # hub.history.columns.BUCKETS when this revision was made

_RUN_COLUMNS = """{id},
    job_id {varchar}(100) NOT NULL,
    job_name {varchar}(100) NOT NULL,
    source {varchar}(16) NOT NULL,
    caller_kind {varchar}(16) NOT NULL,
    caller_id {varchar}(200),
    caller_name {varchar}(200),
    caller_class {varchar}(32),
    started {real} NOT NULL,
    node {varchar}(200) NOT NULL,
    ref {varchar}(100) NOT NULL,
    outcome {varchar}(16) NOT NULL,
    job_version {bigint},
    method {varchar}(16),
    params {text},
    code {varchar}(32),
    message {text},
    limit_kind {varchar}(16),
    http_status INTEGER,
    result {text},
    result_truncated INTEGER NOT NULL,
    result_size {bigint} NOT NULL,
    result_type {varchar}(32),
    result_format {varchar}(255),
    logs {text},
    logs_truncated INTEGER NOT NULL,
    calls {text},
    ended {real},
    runtime_ms {bigint},
    cpu_ms {bigint},
    schedule_id {varchar}(100),
    schedule_name {varchar}(200),
    started_hour {bigint} NOT NULL,
    rt_bucket INTEGER,
    search_text {text}"""

_COUNTERS = ("runs {bigint} NOT NULL, failures {bigint} NOT NULL, "
             "rt_count {bigint} NOT NULL, rt_sum {bigint} NOT NULL, rt_max {bigint}, "
             + ", ".join(f"b{i:02d} {{bigint}} NOT NULL" for i in range(_BUCKETS)))

_RUN_INDEXES = (
    ("webjob_runs_started", "started, id"),
    ("webjob_runs_job", "job_name, started"),
    ("webjob_runs_outcome", "outcome, started"),
    ("webjob_runs_source", "source, started"),
    ("webjob_runs_caller", "caller_name, started"),
    ("webjob_runs_schedule", "schedule_id, started"),
)

_SQLITE_SEARCH = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS webjob_runs_fts USING fts5(search_text, "
    "content='webjob_runs', content_rowid='id', tokenize='trigram')",
    "CREATE TRIGGER IF NOT EXISTS webjob_runs_fts_insert AFTER INSERT ON webjob_runs BEGIN "
    "INSERT INTO webjob_runs_fts(rowid, search_text) VALUES (new.id, new.search_text); END",
    "CREATE TRIGGER IF NOT EXISTS webjob_runs_fts_delete AFTER DELETE ON webjob_runs BEGIN "
    "INSERT INTO webjob_runs_fts(webjob_runs_fts, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); END",
    "CREATE TRIGGER IF NOT EXISTS webjob_runs_fts_update AFTER UPDATE OF search_text "
    "ON webjob_runs BEGIN INSERT INTO webjob_runs_fts(webjob_runs_fts, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); "
    "INSERT INTO webjob_runs_fts(rowid, search_text) VALUES (new.id, new.search_text); END",
]


def history_tables(d: Dialect) -> list[str]:
    out = [
        d.create_table("webjob_runs", _RUN_COLUMNS),
        d.create_index("webjob_runs_job_id", "webjob_runs", "job_id", unique=True),
        *(d.create_index(name, "webjob_runs", columns) for name, columns in _RUN_INDEXES),
        d.create_table("webjob_run_hours", "started_hour {bigint} NOT NULL PRIMARY KEY, "
                       + _COUNTERS),
        d.create_table("webjob_run_jobs", "job_name {varchar}(100) NOT NULL PRIMARY KEY, "
                       + _COUNTERS),
        d.create_table("webjob_history_marks", "mark {varchar}(64) NOT NULL PRIMARY KEY"),
    ]
    return out + (_SQLITE_SEARCH if d.name == "sqlite" else [])


def identity_tables(d: Dialect) -> list[str]:
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


def schedule_tables(d: Dialect) -> list[str]:
    return [
        d.create_table("IQXNetWebJobSchedule", """{id},
            Name {varchar}(100) NOT NULL,
            Cron {varchar}(200) NOT NULL,
            JobName {varchar}(100) NOT NULL,
            Params {text} NOT NULL,
            Enabled INTEGER NOT NULL,
            Timezone {varchar}(64) NOT NULL,
            CatchUp {varchar}(8) NOT NULL,
            Overlap {varchar}(8) NOT NULL,
            MaxRetries INTEGER NOT NULL,
            LastRun {real},
            NextRun {real},
            LastStatus {varchar}(32),
            RetryAt {real},
            RetryAttempt INTEGER NOT NULL,
            UpdatedAt {real} NOT NULL,
            UpdatedBy {varchar}(100)"""),
        d.create_table("IQXNetWebJobScheduleClaim", """ScheduleID {bigint} NOT NULL,
            Occurrence {varchar}(64) NOT NULL,
            Node {varchar}(100) NOT NULL,
            ClaimedAt {real} NOT NULL,
            PRIMARY KEY (ScheduleID, Occurrence)"""),
        d.create_index("IQXNetWebJobScheduleClaim_At", "IQXNetWebJobScheduleClaim",
                       "ClaimedAt"),
    ]


def secret_tables(d: Dialect) -> list[str]:
    return [
        d.create_table("IQXNetWebJobSecret", """Name {varchar}(64) NOT NULL PRIMARY KEY,
            Value {text} NOT NULL,
            UpdatedAt {real} NOT NULL,
            UpdatedBy {varchar}(100)"""),
        d.create_table("IQXNetWebJobSecretChange", """{id},
            Name {varchar}(64) NOT NULL,
            Action {varchar}(16) NOT NULL,
            ChangedAt {real} NOT NULL,
            ChangedBy {varchar}(100)"""),
        d.create_index("IQXNetWebJobSecretChange_Name", "IQXNetWebJobSecretChange", "Name"),
    ]


def job_tables(d: Dialect) -> list[str]:
    return [
        d.create_table("IQXNetWebJob", """Name {varchar}(100) NOT NULL PRIMARY KEY,
            Code {text} NOT NULL,
            UpdatedAt {real} NOT NULL,
            UpdatedBy {varchar}(100)"""),
        d.create_table("IQXNetWebJobVersion", """Name {varchar}(100) NOT NULL,
            Version INTEGER NOT NULL,
            Code {text} NOT NULL,
            SavedAt {real} NOT NULL,
            SavedBy {varchar}(100),
            Size {bigint} NOT NULL,
            CodeHash {varchar}(64) NOT NULL,
            PRIMARY KEY (Name, Version)"""),
        d.create_table("IQXNetWebJobDeletion", """Name {varchar}(100) NOT NULL PRIMARY KEY,
            DeletedAt {real} NOT NULL,
            DeletedBy {varchar}(100)"""),
    ]


def upgrade() -> None:
    d = hub_dialect()
    statements = history_tables(d)
    if scope() == "hub":
        statements += (identity_tables(d) + schedule_tables(d) + secret_tables(d)
                       + job_tables(d))
    execute_all(statements)


def downgrade() -> None:
    raise NotImplementedError("The hub's first schema revision is not undone: it holds "
                              "every table")
