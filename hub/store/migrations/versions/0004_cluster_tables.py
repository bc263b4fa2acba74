"""The tables of a hub running as several nodes: heartbeats and the runs in flight
(:mod:`hub.cluster`), the scheduler's running occurrences and overlap leases
(:mod:`hub.schedule.leases`), and the limits counted in the database
(:mod:`hub.store.limits_store`). Not in a local history file.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from hub.store.migrations.revisions import execute_all, hub_dialect, scope

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

TABLES = ("webhub_nodes", "webhub_running", "IQXNetWebJobScheduleRun",
          "IQXNetWebJobScheduleLease", "IQXNetWebJobLimitHit", "IQXNetWebJobLimitLock")


def upgrade() -> None:
    if scope() != "hub":
        return
    d = hub_dialect()
    execute_all([
        d.create_table("webhub_nodes", """node {varchar}(200) PRIMARY KEY,
            instance {varchar}(240) NOT NULL,
            host {varchar}(255) NOT NULL,
            pid {bigint} NOT NULL,
            started {real} NOT NULL,
            beat {real} NOT NULL,
            url {varchar}(500)"""),
        d.create_table("webhub_running", """job_id {varchar}(200) PRIMARY KEY,
            node {varchar}(200) NOT NULL,
            job_name {varchar}(200) NOT NULL,
            source {varchar}(16) NOT NULL,
            started {real} NOT NULL,
            caller {text} NOT NULL,
            ref {varchar}(64) NOT NULL,
            job_version {bigint},
            method {varchar}(16) NOT NULL,
            schedule_id {varchar}(200),
            schedule_name {varchar}(200),
            stop_requested {real}"""),
        d.create_index("webhub_running_node", "webhub_running", "node"),
        d.create_table("IQXNetWebJobScheduleRun", """ScheduleID {bigint} NOT NULL,
            Occurrence {varchar}(64) NOT NULL,
            Node {varchar}(100) NOT NULL,
            DueAt {real} NOT NULL,
            Attempt INTEGER NOT NULL,
            Reason {varchar}(16) NOT NULL,
            JobID {varchar}(64) NOT NULL,
            StartedAt {real} NOT NULL,
            PRIMARY KEY (ScheduleID, Occurrence)"""),
        d.create_index("IQXNetWebJobScheduleRun_Node", "IQXNetWebJobScheduleRun", "Node"),
        d.create_table("IQXNetWebJobScheduleLease", """ScheduleID {bigint} NOT NULL PRIMARY KEY,
            Node {varchar}(100) NOT NULL,
            Until {real} NOT NULL,
            SkipFrom {real},
            SkipCount INTEGER NOT NULL DEFAULT 0"""),
        d.create_table("IQXNetWebJobLimitHit", "Counter {varchar}(80) NOT NULL, "
                       "Bucket {bigint} NOT NULL, Hits INTEGER NOT NULL, "
                       "PRIMARY KEY (Counter, Bucket)"),
        d.create_index("IQXNetWebJobLimitHit_Bucket", "IQXNetWebJobLimitHit", "Bucket"),
        d.create_table("IQXNetWebJobLimitLock", "Counter {varchar}(80) NOT NULL PRIMARY KEY, "
                       "LockedUntil {real} NOT NULL, LockedBy {bigint} NOT NULL"),
    ])


def downgrade() -> None:
    if scope() == "hub":
        execute_all([f"DROP TABLE {table}" for table in reversed(TABLES)])
