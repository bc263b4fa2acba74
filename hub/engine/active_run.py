"""One run on one worker, from its hand-over to its result.

``ActiveRun`` is the worker's owner while the run lasts: it collects the console
lines and host calls the worker reports, answers the calls through the bridge (or a
debugger), and enforces the run's limits: the runtime deadline, CPU and resident
memory watched from /proc, and the caps on its result, payloads and console.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from hub.engine import protocol
from hub.engine.background import background
from hub.engine.model import BridgeHost, JsonParams, RunRequest, RunResult, RunState
from hub.engine.pool import WorkerProcess, read_cpu_ms, read_rss_mb
from shared.errors import JobError, JobFailed, LimitExceeded, NeighbourBroke, error_class_for
from shared.ndjson import LogLine

log = logging.getLogger("webhub.engine")

# Headroom for the resident-memory watchdog above the V8 heap limit: the
# worker's own Python and V8 baseline plus ordinary external buffers.
_RSS_HEADROOM_MB = 192
# How the prelude marks a console line it cut short (its LINE_CAP).
_CUT_LINE = re.compile(r"\A(.*)( … \[\d+ chars\])\Z", re.DOTALL)
# What a console line costs besides its text (the prelude counts the same).
_LINE_COST = 32
# The hub counts the console a little differently from the prelude (a cut line's
# marker, the host's own notes): an honest run never needs more room than this.
_CONSOLE_MARGIN = 64 * 1024
# A reply line's own framing, besides its value.
_REPLY_FRAMING = 4096
# The watchdog's first look at a run's CPU and memory: most runs are over by then.
_FIRST_LOOK_S = 0.01
# How long a worker has to end a run the hub has ended (its runtime is up, its caller
# left) before the worker is ended instead: the run spins and cannot be stopped.
END_GRACE_S = 2.0


class ActiveRun:
    """One run on one worker: collects what the worker reports, enforces limits."""

    def __init__(self, req: RunRequest, worker: WorkerProcess, bridge: BridgeHost | None,
                 caps: protocol.Caps, alone: bool = True,
                 on_broke: Callable[[], None] | None = None) -> None:
        self.req = req
        self.worker = worker
        # The run has its worker to itself: the worker's CPU and memory are the run's,
        # watched from /proc, and a stop kills the worker. Else the worker watches the
        # run's CPU in its isolate, and the hub ends the run alone.
        self.alone = alone
        self.on_broke = on_broke  # the run broke its worker's isolate beyond repair
        self.bridge = bridge
        self.caps = caps
        self.handed = False  # the worker has the run (it gets ready again by itself)
        self.console_used = 0  # characters, plus _LINE_COST a line
        self.started = time.monotonic()
        # The clock the job's console lines are timed on (epoch ms; see _spec): the
        # hub's own lines use it too, so the console reads in order.
        self.clock_origin_ms = int(time.time() * 1000)
        self.logs: list[LogLine] = []
        # Settles with (meta, body, cpu_ms), or with the JobError that ended the run.
        self.finished: asyncio.Future[tuple[dict[str, Any], bytes, int] | JobError] = (
            asyncio.get_running_loop().create_future())
        self.kill_reason: JobError | None = None
        self.host_calls: set[asyncio.Task[None]] = set()
        self.deadline: asyncio.Timeout | None = None  # the runtime limit, while running
        self.parked_s = 0.0  # time held by a debugger, not counted against the limit
        self.watchdog: asyncio.Task[None] | None = None  # from _FIRST_LOOK_S in
        self.state = RunState(self.host_note)

    # -- RunOwner ---------------------------------------------------------------
    def on_log(self, lines: list[list[Any]]) -> None:
        for level, message, t in lines:
            self._log(LogLine(str(level), str(message), int(t)))

    def host_note(self, level: str, message: str) -> None:
        """A console line written by the host on the job's behalf (an http call...)."""
        if not self.finished.done():
            self._log(LogLine(level, message, self._console_ms()))

    def _log(self, line: LogLine) -> None:
        # The one way into a run's console (live readers, history, the page drawer,
        # a debugger's stream): the run's secret values are masked here, and its
        # size is capped (the prelude caps it too; a worker can lie).
        self.console_used += len(line.message) + _LINE_COST
        if self.console_over:
            if not self.finished.done():
                self.stop(self._over("console"))
            return
        redactor = self.req.redactor
        if redactor:
            cut = _CUT_LINE.match(line.message)
            message = (redactor.cut(cut.group(1)) + cut.group(2) if cut
                       else redactor.text(line.message))
            line = LogLine(line.level, message, line.t)
        self.logs.append(line)
        if self.req.on_log is not None:
            self.req.on_log(line)

    @property
    def console_over(self) -> bool:
        return self.console_used > self.caps.console_chars + _CONSOLE_MARGIN

    def _over(self, limit: str) -> LimitExceeded:
        cap = {"result": self.caps.result_bytes, "payload": self.caps.payload_bytes,
               "console": self.caps.console_chars}[limit]
        return LimitExceeded(protocol.over_cap(limit, cap), limit=limit)

    def accepts_body(self, size: int) -> bool:
        return size <= self.caps.result_bytes

    def on_oversize(self, limit: str) -> None:
        if self.kill_reason is None:
            self.kill_reason = self._over(limit)

    def on_call(self, call: dict[str, Any], size: int) -> None:
        if size > self.caps.payload_bytes + _REPLY_FRAMING:
            self.stop(self._over("payload"))
            return
        task = background(self._answer(call))
        self.host_calls.add(task)
        task.add_done_callback(self.host_calls.discard)

    def on_done(self, meta: dict[str, Any], body: bytes, cpu_ms: int) -> None:
        if not self.finished.done():
            self.finished.set_result((meta, body, cpu_ms))

    def on_exit(self, neighbour_broke: bool = False) -> None:
        if self.finished.done():
            return
        reason = self.kill_reason
        if reason is None and neighbour_broke:
            reason = NeighbourBroke(
                "The run was ended because another run on its worker broke a limit the "
                "worker could not stop; run it again")
        self.finished.set_result(reason or JobFailed(
            "The job's worker process ended unexpectedly (crashed or was killed)"))

    def on_breach(self, limit: str) -> None:
        """The worker could not stop this run at its limit, and ends."""
        if self.kill_reason is None:
            self.kill_reason = _limit_error(limit, self.req)
        self._broke()

    def _broke(self) -> None:
        if self.on_broke is not None:
            on_broke, self.on_broke = self.on_broke, None
            on_broke()

    # -- host calls ---------------------------------------------------------------
    async def _answer(self, call: dict[str, Any]) -> None:
        if call.get("run") != self.req.job_id or self.finished.done():
            return
        op = str(call.get("op"))
        try:
            if op.startswith("debug.") and self.req.debugger is not None:
                # Variable views leave the run here: its secret values are masked.
                args = self.req.redactor.deep(call.get("args"))
                ok, value = True, await self._parked(self.req.debugger.call(op, args))
            elif (bridge := self.req.bridge or self.bridge) is None or op.startswith("debug."):
                raise JobFailed(f"'{op}' is not available to jobs on this hub")
            else:
                ok, value = True, await bridge.call(op, call.get("args"), self.req, self.state)
        except LimitExceeded as exc:  # a cap the host enforces ends the run, as ours do
            self.stop(exc)
            return
        except JobError as exc:  # ``job_code`` (e.g. an SQL state) becomes the Error's code
            ok, value = False, {"message": exc.message, "code": exc.extra.get("job_code", exc.code)}
        if self.finished.done():  # an answer after the run ended goes nowhere
            return
        reply = protocol.encode({"op": "reply", "run": self.req.job_id, "id": call.get("id"),
                                 "ok": ok, "value": value})
        if len(reply) > self.caps.payload_bytes + _REPLY_FRAMING:
            self.stop(self._over("payload"))
            return
        self.worker.write(reply)

    async def _parked(self, work: Awaitable[Any]) -> Any:
        """While a debugger holds the run, its runtime limit is held too: the time
        parked is added back to the deadline when the run goes on."""
        deadline = self.deadline
        when = deadline.when() if deadline is not None else None
        if deadline is not None:
            deadline.reschedule(None)
        parked = time.monotonic()
        try:
            return await work
        finally:
            held = time.monotonic() - parked
            self.parked_s += held
            # The run may have ended while parked (its client hung up, the hub is
            # stopping): its timeout is finished then, and has nothing to move.
            if deadline is not None and when is not None:
                with contextlib.suppress(RuntimeError):
                    deadline.reschedule(when + held)

    # -- limits -------------------------------------------------------------------
    def stop(self, reason: JobError) -> None:
        """End the run now with ``reason``. A run alone on its worker: the worker is
        killed. Else the worker ends the run alone (``end``), and is killed only if it
        has not within ``END_GRACE_S`` (the run spins beyond its reach)."""
        if self.kill_reason is None:
            self.kill_reason = reason
        if self.alone:
            self.worker.kill()
            return
        if not self.finished.done():
            self.finished.set_result(self.kill_reason)
        limit = reason.extra.get("limit")
        self.worker.send({"op": "end", "run": self.req.job_id, "limit": limit})
        asyncio.get_running_loop().call_later(END_GRACE_S, self._end_overdue)

    def _end_overdue(self) -> None:
        if self.req.job_id in self.worker.places and self.worker.alive:
            log.warning("run %s: its worker could not end it in %.0f s; the worker is ended",
                        self.req.ref, END_GRACE_S)
            self.worker.kill(broken_by=self.req.job_id)
            self._broke()

    async def supervise(self) -> None:
        """Watch CPU and resident memory. It starts ``_FIRST_LOOK_S`` in, so a short
        run never pays for /proc reads (nor for this task); CPU before it is bounded
        by the wall clock (V8 runs single-threaded), which is counted instead."""
        limits, pid = self.req.limits, self.worker.pid
        cpu0, rss0 = read_cpu_ms(pid), read_rss_mb(pid)
        if cpu0 is None or rss0 is None:
            return
        cpu0 -= int((time.monotonic() - self.started) * 1000)
        rss_cap = rss0 + limits.memory_mb + _RSS_HEADROOM_MB
        while not self.finished.done():
            cpu, rss = read_cpu_ms(pid), read_rss_mb(pid)
            if cpu is None or rss is None:
                return
            if cpu - cpu0 > limits.cpu_ms:
                self.stop(_limit_error("cpu", self.req))
                return
            if rss > rss_cap:
                self.stop(_limit_error("memory", self.req))
                return
            # CPU cannot outrun two cores, so there is no need to look sooner.
            remaining_s = (limits.cpu_ms - (cpu - cpu0)) / 2000
            await asyncio.sleep(min(0.05, max(0.01, remaining_s)))

    def _start_watch(self) -> None:
        if not self.finished.done():
            self.watchdog = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        # Unwatched, a job could outrun its CPU and memory limits: a watchdog that
        # fails ends its run.
        try:
            await self.supervise()
        except Exception:
            log.exception("run %s: its limits could not be watched; it is stopped", self.req.ref)
            self.stop(JobFailed("The hub could not watch the job's limits"))

    async def execute(self) -> RunResult:
        """The run to its result. Whatever raises, the caller (``Engine.run``) gives
        the place back or ends the run: see ``handed``."""
        self.worker.places[self.req.job_id] = self
        try:
            self._hand_over()
        except LimitExceeded as exc:
            return self._failed(exc)
        # Only a run alone on its worker is watched from here (a shared one by its worker).
        first_look = (asyncio.get_running_loop().call_later(_FIRST_LOOK_S, self._start_watch)
                      if self.alone else None)
        try:
            async with asyncio.timeout(self.req.limits.runtime_ms / 1000) as deadline:
                self.deadline = deadline
                outcome = await asyncio.shield(self.finished)
        except TimeoutError:
            self.stop(_limit_error("runtime", self.req))
            return self._failed(self.kill_reason)
        except asyncio.CancelledError:
            self.stop(JobFailed("The caller went away"))
            raise
        finally:
            if first_look is not None:
                first_look.cancel()
            if self.watchdog is not None:
                self.watchdog.cancel()
            for call in list(self.host_calls):  # a query or request never outlives its run
                call.cancel()
        if isinstance(outcome, JobError):
            return self._failed(outcome)
        return self._completed(*outcome)

    def _hand_over(self) -> None:
        message = protocol.encode({
            "op": "run", "run": self.req.job_id, "source": self.req.source, "spec": self._spec(),
            "memoryMb": self.req.limits.memory_mb, "modules": self.req.modules,
            "isolation": self.req.isolation,
            # the CPU limit the worker watches in its isolate, for a run that shares it
            "cpuMs": None if self.alone else self.req.limits.cpu_ms,
            "live": self.req.on_log is not None})
        if len(message) > self.worker.line_limit:
            raise LimitExceeded(
                f"The job's source, parameters and request ({len(message) / protocol.MB:.0f} MB)"
                f" are more than a worker can take; see {protocol.SETTINGS['payload']}",
                limit="payload")
        self.worker.write(message)
        self.handed = True

    def _spec(self) -> dict[str, Any]:
        params = self.req.params
        return {"params": params.as_fragment() if isinstance(params, JsonParams) else params,
                "request": self.req.request,
                "limits": self.req.limits.as_job_view(), "pretty": self.req.pretty,
                "live": self.req.on_log is not None, "approved": self.req.approved_modules,
                "named": [m["name"] for m in self.req.modules],
                "signKey": self.req.sign_key, "debug": self.req.debugger is not None,
                # 32 bytes from the OS seed the job's crypto.getRandomValues/randomUUID.
                "entropy": base64.b64encode(os.urandom(32)).decode(),
                "secrets": {"names": list(self.req.secret_names),
                            "values": dict(self.req.secrets)},
                "caps": self.caps.as_message(), "clockOrigin": self.clock_origin_ms}

    def _console_ms(self) -> int:
        return max(0, int(time.time() * 1000 - self.clock_origin_ms))

    def _elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    def _failed(self, error: JobError | None) -> RunResult:
        err = error or JobFailed("The job failed")
        return RunResult(self.req.job_id, False, {}, b"", err, self._elapsed_ms(), 0, self.logs,
                         redactor=self.req.redactor, calls=self.state.calls)

    def _completed(self, meta: dict[str, Any], body: bytes, cpu_ms: int) -> RunResult:
        for level, message, t in meta.pop("logs", []):
            self._log(LogLine(str(level), str(message), int(t)))
        if self.console_over:
            return self._failed(self._over("console"))
        redactor = self.req.redactor
        if meta.get("ok"):
            return RunResult(self.req.job_id, True, meta, body, None, self._elapsed_ms(), cpu_ms,
                             self.logs, redactor=redactor, calls=self.state.calls)
        cls = error_class_for(str(meta.get("code", "JOB-001")))
        # The error message reaches the caller, history and the hub's log: masked.
        message = redactor.text(str(meta.get("message", "The job failed")))
        meta["message"] = message
        if meta.get("line") and not meta.get("reported"):
            message = f"{message} (line {meta['line']})"
        err = cls(message, limit=meta.get("limit"), line=meta.get("line"),
                  column=meta.get("column"))
        if not isinstance(err, JobError):
            err = JobFailed(message)
        return RunResult(self.req.job_id, False, meta, b"", err, self._elapsed_ms(), cpu_ms,
                         self.logs, redactor=redactor, calls=self.state.calls)


def _limit_error(limit: str, req: RunRequest) -> LimitExceeded:
    limits = req.limits
    text = {"cpu": f"The job used more than its CPU limit of {limits.cpu_ms} ms",
            "runtime": f"The job ran longer than its runtime limit of {limits.runtime_ms} ms",
            "memory": f"The job used more than its memory limit of {limits.memory_mb} MB"}
    return LimitExceeded(text.get(limit, f"The job broke its {limit} limit"),
                         limit=limit if limit in text else "cpu")
