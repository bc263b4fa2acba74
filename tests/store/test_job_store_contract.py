"""The job store contract: one suite against the files store and the database store on
every hub database (embedded SQLite, PostgreSQL and MariaDB through ODBC)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hub.store.base import JobStore
from hub.store.dbjobs import DELETION_TABLE, JOB_TABLE, DbJobStore
from hub.store.files import FileJobStore
from hub.store.hubdb import open_hub_database
from hub.store.importer import import_files
from shared.errors import InternalError, JobChanged, NotFound, StoreUnavailable
from tests.servers import HUB_BACKENDS, database_nodes, fresh_database

STORE_KINDS = ("files", *HUB_BACKENDS)
MakeStore = Callable[[], JobStore]
TRICKY = "// café 日本語 🎉\r\nreturn { ok: 'ü' };\r\n\tlast line without newline"


@pytest.fixture(params=STORE_KINDS)
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeStore]:
    """Makes stores on one shared place: each call is another node on the same jobs."""
    if request.param == "files":
        yield lambda: FileJobStore(tmp_path / "jobs")
        return
    with database_nodes(request.param, tmp_path) as node:
        yield lambda: DbJobStore(node())


@pytest.fixture
def store(make_store: MakeStore) -> JobStore:
    return make_store()


def edit_outside(store: JobStore, name: str, code: str, by: str | None = None) -> None:
    """Change (or create) a job the way a person or another tool would, past the hub.
    A file has no saver; a row has whatever the tool writes in UpdatedBy."""
    if isinstance(store, FileJobStore):
        path = store.folder / f"{name}.job.js"
        path.write_bytes(code.encode("utf-8"))
        return
    assert isinstance(store, DbJobStore)
    store.ensure_schema()
    if store.db.write(f"UPDATE {JOB_TABLE} SET Code = ?, UpdatedAt = ?, UpdatedBy = ? "
                      "WHERE Name = ?", (code, time.time(), by, name)) == 0:
        store.db.write(f"INSERT INTO {JOB_TABLE} (Name, Code, UpdatedAt, UpdatedBy) "
                       "VALUES (?, ?, ?, ?)", (name, code, time.time(), by))


def test_get_list_save_delete(store: JobStore) -> None:
    assert store.get("alpha") is None and store.list_jobs() == []
    saved = store.save("alpha", "return 1", "alice")
    assert (saved.name, saved.code, saved.version, saved.updated_by) == (
        "alpha", "return 1", 1, "alice")
    store.save("beta", "return 2")
    got = store.get("alpha")
    assert got is not None and (got.code, got.version, got.updated_by) == ("return 1", 1, "alice")
    assert [j.name for j in store.list_jobs()] == ["alpha", "beta"]
    assert store.delete("alpha") is True
    assert store.get("alpha") is None and store.delete("alpha") is False
    assert [j.name for j in store.list_jobs()] == ["beta"]


def test_code_is_kept_byte_exact(store: JobStore) -> None:
    store.save("tricky", TRICKY)
    got = store.get("tricky")
    assert got is not None and got.code == TRICKY
    old = store.get_version("tricky", 1)
    assert old is not None and old.code == TRICKY
    if isinstance(store, FileJobStore):
        assert (store.folder / "tricky.job.js").read_bytes() == TRICKY.encode("utf-8")


def test_two_megabytes_of_code(store: JobStore) -> None:
    line = "// ünïcödé padding to make a large job, CRLF ended\r\n"
    code = line * (2 * 1024 * 1024 // len(line.encode("utf-8"))) + "return 1"
    assert len(code.encode("utf-8")) > 2 * 1024 * 1024 - 100
    store.save("big", code)
    got, old = store.get("big"), store.get_version("big", 1)
    assert got is not None and got.code == code
    assert old is not None and old.code == code
    assert store.versions("big")[0].size == len(code.encode("utf-8"))


def test_versions_are_numbered_with_who_and_when(store: JobStore) -> None:
    before = time.time()
    for code, by in (("return 'a'", "alice"), ("return 'bb'", "bob"), ("return 'ccc'", None)):
        store.save("job", code, by)
    after = time.time()
    found = store.versions("job")
    assert [(v.version, v.saved_by, v.size, v.current) for v in found] == [
        (3, None, 12, True), (2, "bob", 11, False), (1, "alice", 10, False)]
    assert all(before - 1 <= v.saved <= after + 1 for v in found)
    assert found[0].saved >= found[1].saved >= found[2].saved
    got = store.get("job")
    assert got is not None and (got.version, got.updated_by) == (3, None)
    assert store.versions("never-saved") == []


def test_get_version(store: JobStore) -> None:
    store.save("job", "return 1", "alice")
    store.save("job", "return 2", "bob")
    first = store.get_version("job", 1)
    assert first is not None and (first.code, first.version, first.updated_by) == (
        "return 1", 1, "alice")
    assert store.get_version("job", 3) is None
    assert store.get_version("nobody", 1) is None


def test_restore_makes_a_new_version(store: JobStore) -> None:
    store.save("job", "return 1", "alice")
    store.save("job", "return 2", "bob")
    restored = store.restore("job", 1, "carol")
    assert (restored.code, restored.version, restored.updated_by) == ("return 1", 3, "carol")
    got = store.get("job")
    assert got is not None and (got.code, got.version) == ("return 1", 3)
    assert [(v.version, v.current) for v in store.versions("job")] == [
        (3, True), (2, False), (1, False)]
    with pytest.raises(NotFound):
        store.restore("job", 9, "carol")


def test_a_deleted_job_keeps_its_versions_and_can_be_restored(store: JobStore) -> None:
    store.save("job", "return 1", "alice")
    store.save("job", "return 2", "bob")
    assert store.delete("job")
    assert store.get("job") is None and store.list_jobs() == []
    assert [(v.version, v.current) for v in store.versions("job")] == [(2, False), (1, False)]
    restored = store.restore("job", 1, "carol")
    assert (restored.code, restored.version) == ("return 1", 3)
    assert [j.name for j in store.list_jobs()] == ["job"]
    store.delete("job")
    assert store.save("job", "return 4").version == 4


def test_two_nodes_see_each_others_saves_at_once(make_store: MakeStore) -> None:
    one, two = make_store(), make_store()
    one.save("shared", "return 1", "alice")
    seen = two.get("shared")
    assert seen is not None and (seen.code, seen.version) == ("return 1", 1)
    two.save("shared", "return 2", "bob")
    seen = one.get("shared")
    assert seen is not None and (seen.code, seen.version, seen.updated_by) == (
        "return 2", 2, "bob")
    assert [j.code for j in one.list_jobs()] == ["return 2"]
    one.delete("shared")
    assert two.get("shared") is None


def test_concurrent_saves_get_unique_consecutive_versions(make_store: MakeStore) -> None:
    nodes = [make_store(), make_store()]
    results: list[int] = []
    failures: list[BaseException] = []

    def saver(index: int) -> None:
        try:
            for round_ in range(3):
                code = f"return {index * 10 + round_}"
                results.append(nodes[index % 2].save("busy", code, f"t{index}").version)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=saver, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert sorted(results) == list(range(1, 19))
    listed = nodes[0].versions("busy")
    assert [v.version for v in listed] == list(range(18, 0, -1))
    newest = nodes[1].get_version("busy", 18)
    current = nodes[0].get("busy")
    assert newest is not None and current is not None
    assert (current.code, current.version) == (newest.code, 18)


def test_a_job_changed_outside_the_hub(store: JobStore) -> None:
    store.save("job", "return 1", "alice")
    edit_outside(store, "job", "return 'by hand'")
    got = store.get("job")
    assert got is not None and (got.code, got.version) == ("return 'by hand'", 2)
    listed = store.versions("job")
    assert [(v.version, v.current) for v in listed] == [(2, True), (1, False)]
    unsaved = store.get_version("job", 2)
    assert unsaved is not None and unsaved.code == "return 'by hand'"
    # The next save keeps the hand edit as version 2 before adding its own.
    assert store.save("job", "return 3", "bob").version == 3
    kept = store.get_version("job", 2)
    assert kept is not None and kept.code == "return 'by hand'"
    assert [(v.version, v.saved_by) for v in store.versions("job")] == [
        (3, "bob"), (2, None), (1, "alice")]


def test_a_job_the_hub_never_saved(store: JobStore) -> None:
    edit_outside(store, "legacy", "return 'old'", by="iqx")
    got = store.get("legacy")
    expected_by = None if isinstance(store, FileJobStore) else "iqx"
    assert got is not None and (got.version, got.updated_by) == (1, expected_by)
    assert [j.name for j in store.list_jobs()] == ["legacy"]
    assert store.delete("legacy")  # kept as version 1 first: a delete loses nothing
    assert store.get("legacy") is None
    assert [(v.version, v.saved_by) for v in store.versions("legacy")] == [(1, expected_by)]
    restored = store.restore("legacy", 1, "alice")
    assert (restored.code, restored.version) == ("return 'old'", 2)


def test_a_save_based_on_an_old_version_is_refused(store: JobStore) -> None:
    store.save("job", "return 1", "alice")
    assert store.save("job", "return 2", "bob", base_version=1).version == 2
    with pytest.raises(JobChanged) as refused:
        store.save("job", "return 'stale'", "carol", base_version=1)
    assert refused.value.current_version == 2
    got = store.get("job")
    assert got is not None and (got.code, got.version) == ("return 2", 2)
    assert [v.version for v in store.versions("job")] == [2, 1]
    assert store.save("job", "return 3", base_version=None).version == 3


def test_base_version_zero_and_a_deleted_job(store: JobStore) -> None:
    assert store.save("job", "return 1", base_version=0).version == 1
    with pytest.raises(JobChanged) as exists:
        store.save("job", "return 2", base_version=0)
    assert exists.value.current_version == 1
    store.delete("job")
    with pytest.raises(JobChanged) as gone:
        store.save("job", "return 2", base_version=1)
    assert gone.value.current_version is None and store.get("job") is None
    assert store.save("job", "return 2", base_version=0).version == 2


def test_a_hand_edit_is_the_version_an_editor_bases_on(store: JobStore) -> None:
    store.save("job", "return 1")
    edit_outside(store, "job", "return 'by hand'")
    with pytest.raises(JobChanged):  # opened before the hand edit
        store.save("job", "return 'mine'", base_version=1)
    assert store.save("job", "return 'mine'", base_version=2).version == 3


def test_racing_saves_from_one_version_on_two_nodes(make_store: MakeStore) -> None:
    nodes = [make_store(), make_store()]
    nodes[0].save("busy", "return 0")
    outcomes: list[str] = []
    start = threading.Barrier(6)

    def saver(index: int) -> None:
        start.wait()
        try:
            nodes[index % 2].save("busy", f"return {index}", base_version=1)
            outcomes.append("saved")
        except JobChanged:
            outcomes.append("refused")

    threads = [threading.Thread(target=saver, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["refused"] * 5 + ["saved"]
    assert [v.version for v in nodes[1].versions("busy")] == [2, 1]


def test_deleted_jobs_are_listed_until_saved_again(store: JobStore) -> None:
    assert store.deleted() == []
    store.save("gone", "return 1", "alice")
    store.save("gone", "return 2", "alice")
    store.save("kept", "return 1")
    before = time.time()
    assert store.delete("gone", "bob")
    [deleted] = store.deleted()
    assert (deleted.name, deleted.deleted_by, deleted.last_version) == ("gone", "bob", 2)
    assert deleted.deleted_at is not None and before - 1 <= deleted.deleted_at <= time.time() + 1
    assert not store.delete("gone", "carol")  # nothing to delete: the mark stays bob's
    assert store.deleted()[0].deleted_by == "bob"
    store.save("gone", "return 3")
    assert store.deleted() == []
    store.delete("gone")
    assert [(d.name, d.deleted_by, d.last_version) for d in store.deleted()] == [
        ("gone", None, 3)]


def test_a_job_deleted_before_deletions_were_kept_is_listed(store: JobStore) -> None:
    store.save("old", "return 1")
    store.delete("old")
    _forget_deletion_mark(store, "old")
    [deleted] = store.deleted()
    assert (deleted.name, deleted.deleted_at, deleted.deleted_by, deleted.last_version) == (
        "old", None, None, 1)


def _forget_deletion_mark(store: JobStore, name: str) -> None:
    """Make the store look as one written before deletions were recorded."""
    if isinstance(store, FileJobStore):
        index = store.folder / ".versions" / name / "index.json"
        raw = json.loads(index.read_text())
        raw.pop("deleted")
        index.write_text(json.dumps(raw))
        return
    assert isinstance(store, DbJobStore)
    store.db.write(f"DELETE FROM {DELETION_TABLE} WHERE Name = ?", (name,))


def test_files_store_keeps_versions_out_of_the_job_list(tmp_path: Path) -> None:
    store = FileJobStore(tmp_path / "jobs")
    store.save("job", "return 1")
    store.save("job", "return 2")
    assert [j.name for j in store.list_jobs()] == ["job"]
    assert sorted(p.name for p in store.folder.iterdir()) == [".versions", "job.job.js"]
    history = store.folder / ".versions" / "job"
    assert sorted(p.name for p in history.iterdir()) == ["1.job.js", "2.job.js", "index.json"]
    assert store.report_non_jobs() == []
    assert list(store.folder.rglob("*.tmp")) == []  # every write renamed into place


@pytest.mark.expected_warning
def test_files_store_with_a_damaged_index(tmp_path: Path,
                                          caplog: pytest.LogCaptureFixture) -> None:
    store = FileJobStore(tmp_path / "jobs")
    store.save("job", "return 1")
    (store.folder / ".versions" / "job" / "index.json").write_text("{not json")
    got = store.get("job")  # the job still runs, its version unknown
    assert got is not None and (got.code, got.version) == ("return 1", 0)
    assert "damaged" in caplog.text
    with pytest.raises(InternalError):
        store.save("job", "return 2")  # refused rather than overwrite version files
    assert (store.folder / "job.job.js").read_text() == "return 1"


@pytest.fixture(params=HUB_BACKENDS)
def db_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DbJobStore]:
    with fresh_database(request.param, tmp_path) as url:
        db = open_hub_database(url)
        try:
            yield DbJobStore(db)
        finally:
            db.close()


def test_import_files(db_store: DbJobStore, tmp_path: Path) -> None:
    files = FileJobStore(tmp_path / "folder")
    for name, code in (("new", "return 'n'"), ("same", TRICKY), ("differs", "return 'f'")):
        files.save(name, code)
    db_store.save("same", TRICKY, "alice")
    db_store.save("differs", "return 'db'", "alice")

    report = import_files(files, db_store, overwrite=False, by="owner")
    assert report == {"copied": ["new"], "skipped": ["differs", "same"], "replaced": []}
    new = db_store.get("new")
    assert new is not None and (new.code, new.updated_by) == ("return 'n'", "owner")
    kept = db_store.get("differs")
    assert kept is not None and kept.code == "return 'db'"

    report = import_files(files, db_store, overwrite=True, by="owner")
    assert report == {"copied": [], "skipped": ["new", "same"], "replaced": ["differs"]}
    replaced = db_store.get("differs")
    assert replaced is not None and (replaced.code, replaced.version) == ("return 'f'", 2)
    assert len(db_store.versions("same")) == 1  # unchanged code adds no version


def test_a_store_that_answers_is_reachable(store: JobStore) -> None:
    store.reachable()  # raises when it cannot be reached
    store.save("probe_me", "return 1")
    store.reachable()  # raises when it cannot be reached


def test_a_files_store_without_its_folder_is_unreachable(tmp_path: Path) -> None:
    store = FileJobStore(tmp_path / "jobs")
    (tmp_path / "jobs").rename(tmp_path / "moved")
    with pytest.raises(StoreUnavailable, match="jobs folder"):
        store.reachable()


def test_a_store_says_what_differs_not_what_it_is(store: JobStore,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """Callers branch on what a store does (its reads may block: read in a thread);
    its name is a label for people, and there is no kind to branch on."""
    assert not hasattr(store, "kind")
    assert (store.store_name, store.reads_may_block) in {("files", False), ("db", True)}
    with caplog.at_level("INFO"):
        store.report_at_start()  # nothing stray here: nothing said
    assert "is not a job" not in caplog.text


def test_a_folder_names_its_plain_js_files_at_start(tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    store = FileJobStore(tmp_path / "jobs")
    store.save("job", "return 1")
    (store.folder / "helper.js").write_text("return 2", encoding="utf-8")
    with caplog.at_level("INFO"):
        store.report_at_start()
    assert caplog.text.count("helper.js in the jobs folder is not a job") == 1
