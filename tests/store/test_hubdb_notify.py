"""LISTEN/NOTIFY between hub nodes on one PostgreSQL database (psycopg): a notify on
one node reaches another's listener, after the commit when sent in a transaction;
a listener whose session is terminated says so (``on_lost``, once however many tries
to connect again fail), reconnects, says so (``on_resync``) and goes on receiving;
``close`` leaves no thread and tells of no loss. Other backends have no notifications."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hub.store.hubdb import HubDatabase
from hub.store.notify import MAX_PAYLOAD_BYTES, Listener, check_notification
from shared.errors import BadRequest, InternalError
from tests.servers import database_nodes, pg_admin

WAIT_S = 10.0


class Inbox:
    """What a listener was told, awaited with a deadline (no sleeps)."""

    def __init__(self) -> None:
        self.messages: queue.Queue[tuple[str, str]] = queue.Queue()
        self.resyncs = 0
        self.resynced = threading.Event()
        self.told: list[str] = []   # "resync" and "lost", in the order they came

    def on_message(self, channel: str, payload: str) -> None:
        self.messages.put((channel, payload))

    def on_resync(self) -> None:
        self.resyncs += 1
        self.told.append("resync")
        self.resynced.set()

    def on_lost(self) -> None:
        self.told.append("lost")

    def next(self) -> tuple[str, str]:
        return self.messages.get(timeout=WAIT_S)

    def await_resync(self) -> None:
        assert self.resynced.wait(WAIT_S), "on_resync was not called"
        self.resynced.clear()


def _listening(db: HubDatabase, channels: list[str]) -> tuple[Listener, Inbox]:
    inbox = Inbox()
    listener = db.listen(channels, inbox.on_message, inbox.on_resync, inbox.on_lost)
    inbox.await_resync()  # the first connect: LISTEN is in place
    return listener, inbox


def _threads_named(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


def _eventually(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_notify_on_one_node_reaches_the_other(tmp_path: Path) -> None:
    with database_nodes("postgresql", tmp_path) as node:
        sender, receiver = node(), node()
        assert sender.supports_notify and receiver.supports_notify
        listener, inbox = _listening(receiver, ["jobs", "Schedules"])
        sender.notify("jobs", "saved:hello")
        assert inbox.next() == ("jobs", "saved:hello")
        sender.notify("Schedules", "ünïcode ✓")  # the case and the text are kept
        assert inbox.next() == ("Schedules", "ünïcode ✓")
        sender.notify("other", "nobody listens")
        sender.notify("jobs", "")
        assert inbox.next() == ("jobs", "")
        listener.close()


def test_a_notify_in_a_transaction_goes_out_at_commit_only(tmp_path: Path) -> None:
    with database_nodes("postgresql", tmp_path) as node:
        sender, receiver, bystander = node(), node(), node()
        listener, inbox = _listening(receiver, ["jobs"])
        with pytest.raises(RuntimeError), sender.transaction():
            sender.notify("jobs", "rolled back")
            raise RuntimeError("abandon")
        with sender.transaction() as tx:
            sender.notify("jobs", "committed")
            tx.notify("jobs", "committed too")
            # Not out yet: a marker sent outside the transaction arrives first.
            bystander.notify("jobs", "marker")
            assert inbox.next() == ("jobs", "marker")
        assert inbox.next() == ("jobs", "committed")
        assert inbox.next() == ("jobs", "committed too")
        assert inbox.messages.empty()
        listener.close()


@pytest.mark.expected_warning
def test_a_terminated_listener_resyncs_and_hears_again(tmp_path: Path) -> None:
    with database_nodes("postgresql", tmp_path) as node:
        sender, receiver = node(), node()
        listener, inbox = _listening(receiver, ["jobs"])
        first_pid = listener.backend_pid
        assert first_pid is not None
        pg_admin("SELECT pg_terminate_backend(%s)", [first_pid])
        inbox.await_resync()
        assert inbox.resyncs == 2 and listener.connects == 2
        assert inbox.told == ["resync", "lost", "resync"]
        assert listener.backend_pid not in (None, first_pid)
        sender.notify("jobs", "after the outage")
        assert inbox.next() == ("jobs", "after the outage")
        listener.close()
        assert inbox.told == ["resync", "lost", "resync"]  # closing is no loss


@pytest.mark.expected_warning
def test_a_listener_waits_out_a_refusing_database(tmp_path: Path) -> None:
    with database_nodes("postgresql", tmp_path) as node:
        sender, receiver = node(), node()
        listener, inbox = _listening(receiver, ["jobs"])
        name = receiver.url.target.rsplit("/", 1)[1]
        pg_admin(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS false")
        try:
            pg_admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE datname = %s", [name])
            _eventually(lambda: not listener.connected)
            assert listener.backend_pid is None
            _eventually(lambda: inbox.told == ["resync", "lost"])
        finally:
            pg_admin(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS true")
        inbox.await_resync()
        assert listener.connected
        assert inbox.told == ["resync", "lost", "resync"]  # the loss told once
        sender.notify("jobs", "back")
        assert inbox.next() == ("jobs", "back")
        listener.close()


def test_close_stops_the_thread_promptly(tmp_path: Path) -> None:
    with database_nodes("postgresql", tmp_path) as node:
        db = node()
        before = len(_threads_named("webhub-listen"))
        listener, _ = _listening(db, ["jobs"])
        second, _ = _listening(db, ["runs"])
        assert len(_threads_named("webhub-listen")) == before + 2
        started = time.monotonic()
        listener.close()
        assert time.monotonic() - started < 1.0
        assert not listener.running
        listener.close()  # twice is fine
        db.close()  # closes the listeners it made
        assert not second.running
        assert len(_threads_named("webhub-listen")) == before


@pytest.mark.expected_warning
def test_a_failing_callback_does_not_stop_the_listener(tmp_path: Path) -> None:
    with database_nodes("postgresql", tmp_path) as node:
        db = node()
        heard: queue.Queue[str] = queue.Queue()

        def on_message(channel: str, payload: str) -> None:
            if payload == "boom":
                raise ValueError(payload)
            heard.put(payload)

        resynced = threading.Event()
        listener = db.listen(["jobs"], on_message, resynced.set)
        assert resynced.wait(WAIT_S)
        db.notify("jobs", "boom")
        db.notify("jobs", "fine")
        assert heard.get(timeout=WAIT_S) == "fine"
        listener.close()


def test_channels_and_payloads_are_checked(tmp_path: Path) -> None:
    with database_nodes("postgresql", tmp_path) as node:
        db = node()
        for channel in ["", "1abc", "a-b", "a;b", "x" * 64, "a b", 'a"b']:
            with pytest.raises(BadRequest):
                db.notify(channel, "x")
            with pytest.raises(BadRequest):
                db.listen([channel], lambda c, p: None, lambda: None)
        with pytest.raises(BadRequest):
            db.notify("jobs", "x" * MAX_PAYLOAD_BYTES)
        with pytest.raises(BadRequest):
            db.notify("jobs", "é" * (MAX_PAYLOAD_BYTES // 2))  # bytes, not characters
        with pytest.raises(BadRequest):
            db.listen([], lambda c, p: None, lambda: None)
        db.notify("jobs", "x" * (MAX_PAYLOAD_BYTES - 1))  # the longest PostgreSQL takes


@given(st.text(max_size=80), st.text(max_size=40))
def test_check_notification_accepts_only_identifiers(channel: str, payload: str) -> None:
    identifier = (0 < len(channel) <= 63 and channel.isascii()
                  and (channel[0].isalpha() or channel[0] == "_")
                  and all(c.isalnum() or c == "_" for c in channel))
    try:
        check_notification(channel, payload)
    except BadRequest:
        assert not identifier
    else:
        assert identifier


@pytest.mark.parametrize("kind", ["sqlite", "postgresql-odbc"])
def test_other_backends_have_no_notifications(kind: str, tmp_path: Path) -> None:
    with database_nodes(kind, tmp_path) as node:
        db = node()
        assert not db.supports_notify
        db.notify("jobs", "nowhere")  # a no-op
        with db.transaction():
            db.notify("jobs", "nowhere")
        with pytest.raises(BadRequest):
            db.notify("bad-name", "x")  # still checked, so a mistake shows everywhere
        with pytest.raises(InternalError):
            db.listen(["jobs"], lambda c, p: None, lambda: None)
