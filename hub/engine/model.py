"""What the engine takes and gives: its configuration, a run's request, its state
while it runs and its result, and the hosts that answer a job's calls.
``hub.engine.engine`` re-exports them."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from hub.engine import protocol
from hub.engine.redaction import NO_SECRETS, Redactor
from shared.errors import JobError
from shared.header import Limits
from shared.ndjson import LogLine


def new_ref() -> str:
    """A short reference a failure carries and its log lines repeat."""
    return os.urandom(5).hex()


class BridgeHost(Protocol):
    """Answers a job's calls to the outside (``db.exec``, ``http()``); ``state`` is the
    run's own, the same object for every call of one run."""

    async def call(self, op: str, args: Any, run: RunRequest, state: RunState) -> Any: ...


class CallAllowance(Protocol):
    """A per-run cap on one kind of call: ``take()`` once per call, raising when spent."""

    def take(self) -> None: ...


class DebugHost(Protocol):
    """A debug run's pauses: ``debug.*`` calls from the job go here, and the run's
    runtime limit is held while one is being answered (the run is parked)."""

    async def call(self, op: str, args: Any) -> Any: ...


@dataclass
class EngineConfig:
    max_concurrent: int = 8
    queue_timeout_ms: int = 15_000
    spare_workers: int = 1
    runs_per_worker: int = 16      # runs one worker's isolate holds at once (1: one at a time)
    max_result_mb: float = 50      # a run's result body
    max_payload_mb: float = 64     # one bridge call or its reply
    max_console_mb: float = 10     # a run's console, in characters (plus 32 a line)

    @functools.cached_property
    def caps(self) -> protocol.Caps:
        return protocol.Caps(result_bytes=int(self.max_result_mb * protocol.MB),
                             payload_bytes=int(self.max_payload_mb * protocol.MB),
                             console_chars=int(self.max_console_mb * protocol.MB))


@dataclass(frozen=True, slots=True)
class JsonParams:
    """A run's parameters kept as the JSON text they arrived as (a large request body):
    the hub never builds the value, the worker does. ``text`` is UTF-8 JSON the hub has
    checked (its depth, its numbers, lone surrogates cleaned, engine flags taken out);
    ``preview`` is the bounded, masked part history and the page console show."""

    text: bytes
    preview: Any

    def as_fragment(self) -> orjson.Fragment:
        """The text, for the worker's message: written into it as it is."""
        return orjson.Fragment(self.text)


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What a run is, fixed when it is made: what changes while it runs is its
    ``RunState``, which the engine makes."""

    job_id: str
    job_name: str
    source: str
    limits: Limits
    params: Any = field(default_factory=dict)
    request: dict[str, Any] = field(default_factory=dict)
    origin: str = "http"          # http, editor, adhoc, schedule, debug
    pretty: bool = False
    sign_key: str = ""
    on_log: Callable[[LogLine], None] | None = None
    on_start: Callable[[], None] | None = None  # called once a worker has the run
    staff_id: int | None = None   # the caller's, for the database session
    # The run's reference: its failure answer and every log line about it carry it.
    ref: str = field(default_factory=lambda: new_ref())
    created: float = field(default_factory=time.monotonic)
    approved_modules: list[str] = field(default_factory=list)
    modules: list[dict[str, str]] = field(default_factory=list)  # builds this job names
    debugger: DebugHost | None = None  # a debug run: the source is instrumented
    bridge: BridgeHost | None = None   # answers this run's calls instead of the engine's
    # The secrets the job's header declares, and the values of those that are set;
    # every value is masked (``redactor``) in what leaves the run.
    secret_names: tuple[str, ...] = ()
    secrets: dict[str, str] = field(default_factory=dict)
    # "warm": the worker's warm isolate, a new compartment (strict mode); "fresh":
    # a fresh isolate and sloppy mode, for a job whose header says ``Isolation: fresh``.
    isolation: str = "warm"
    redactor: Redactor = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "redactor",
                           Redactor(self.secrets.values()) if self.secrets else NO_SECRETS)


@dataclass(slots=True)
class RunState:
    """A run's state while it is active: made by the engine for each run and handed
    to the bridge host with each call. Its ``calls`` end up in the run's result."""

    # A console line the host adds on the job's behalf (an http call...); a no-op
    # once the run is over.
    note: Callable[[str, str], None]
    # The run's outbound calls and queries as the bridge host records them (bounded),
    # and the bytes of their answers kept with them.
    calls: list[dict[str, Any]] = field(default_factory=list)
    answers_bytes: int = 0
    http_budget: CallAllowance | None = None  # the bridge's, from the run's first http()

    def end(self) -> None:
        """The run is over. Its note, the active run's, goes: kept, it would tie the
        run and its whole answer in a cycle only the collector's rare pass frees."""
        self.note = _console_closed


def _console_closed(level: str, message: str) -> None:
    """A finished run's note: its console takes no more lines."""


@dataclass
class RunResult:
    job_id: str
    ok: bool
    meta: dict[str, Any]
    body: bytes
    error: JobError | None
    runtime_ms: int
    cpu_ms: int
    logs: list[LogLine] = field(default_factory=list)
    ref: str = ""   # the run's reference (set by the runner; failures carry it too)
    # Masks the run's secret values. Console lines and the error are masked already;
    # the body is the job's own answer and is not (history masks what it keeps).
    redactor: Redactor = NO_SECRETS
    # The run's outbound calls and queries (``RunState.calls``), for its history.
    calls: list[dict[str, Any]] = field(default_factory=list)
