"""The console's typed calls for issue 17's hub routes (console_app.client.jobs), against
a real hub: save with the opened version, the check, deleted jobs and their restore."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from console_app.client import jobs
from console_app.client.connection import HubConnection
from shared.errors import Conflict, JobChanged, NotFound
from tests.hub.conftest import TOKEN, HubProcess


@pytest.fixture
def conn(hub: HubProcess) -> Iterator[HubConnection]:
    with HubConnection(hub.url, TOKEN, timeout=30) as connection:
        yield connection
        for name in ("i17k_job", "i17k_gone"):
            with contextlib.suppress(NotFound):  # the test deleted it already
                jobs.delete(connection, name)


def test_save_with_the_opened_version(conn: HubConnection) -> None:
    first = jobs.save(conn, "i17k_job", "return 1", base_version=0).currentVersion
    code, opened = jobs.code_and_version(conn, "i17k_job")
    assert (code, opened) == ("return 1", first)
    second = jobs.save(conn, "i17k_job", "return 2", base_version=opened).currentVersion
    with pytest.raises(JobChanged) as refused:
        jobs.save(conn, "i17k_job", "return 'stale'", base_version=opened)
    assert refused.value.current_version == second
    jobs.save(conn, "i17k_job", "return 'forced'")  # no base: an overwrite
    assert jobs.code(conn, "i17k_job") == "return 'forced'"


def test_check(conn: HubConnection) -> None:
    assert jobs.check(conn, "return 1") == jobs.CodeCheck(True, [])
    result = jobs.check(conn, "/*\nRuntime: 10 h\n*/\nreturn (")
    assert result.ok is False
    assert [(p.line, p.severity, p.source) for p in result.problems] == [
        (2, "warning", "header"), (4, "error", "syntax")]
    assert result.problems[0].column == 10


def test_deleted_jobs_and_restore(conn: HubConnection) -> None:
    jobs.save(conn, "i17k_gone", "return 'kept'")
    jobs.delete(conn, "i17k_gone")
    [gone] = [d for d in jobs.deleted_jobs(conn) if d.name == "i17k_gone"]
    assert gone.last_version >= 1 and gone.deleted_at is not None and gone.deleted_by
    restored = jobs.restore_deleted(conn, "i17k_gone")
    assert restored.name == "i17k_gone"
    assert jobs.code(conn, "i17k_gone") == "return 'kept'"
    assert all(d.name != "i17k_gone" for d in jobs.deleted_jobs(conn))
    with pytest.raises(Conflict):
        jobs.restore_deleted(conn, "i17k_gone")
