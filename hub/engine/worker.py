"""A worker process: runs one job at a time, in its warm isolate (see ``warm``),
or in a fresh V8 context for a job with ``Isolation: fresh``.

Started by the pool as ``python -m hub.engine.worker``; speaks JSON lines on
stdin/stdout (see ``protocol``). After every run it checks its isolate (and
builds a fresh context when recent jobs wanted one) before saying ``ready``, so a
request never waits for set-up. An isolate that a run left spinning or too full
is not repaired: the worker exits and the pool starts another. The parent kills
it to enforce runtime and CPU limits; it dies with its parent.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
import time
from collections import deque
from typing import Any

from hub.engine import crossing, protocol, sandbox, v8, warm

_PR_SET_PDEATHSIG = 1
_TRIM_AFTER = 4 * 1024 * 1024  # a body this big is worth handing memory back after


def _die_with_parent() -> None:
    # A worker spinning in JavaScript never reads its stdin, so EOF alone would
    # not stop it if the hub died: ask the kernel to kill it instead.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _send(obj: dict[str, Any], payload: bytes = b"") -> None:
    data = protocol.encode(obj) + payload
    view = memoryview(data)
    while view:
        written = os.write(1, view)
        view = view[written:]


class Worker:
    def __init__(self) -> None:
        self.isolate: warm.WarmIsolate | None = None          # the warm isolate
        self.fresh: sandbox.PreparedContext | None = None     # a fresh context, when wanted
        self.spent: sandbox.PreparedContext | None = None     # the fresh context just used
        self.current: sandbox.PreparedContext | None = None   # running a job
        self.run_id: str | None = None                         # the run it belongs to
        self.tasks: set[asyncio.Task[None]] = set()
        self.recent_modules: deque[list[dict[str, str]]] = deque(maxlen=20)
        self.recent_fresh: deque[bool] = deque(maxlen=20)
        # A bare context that only ever parses. It is kept for the worker's life for
        # a second reason: V8 tears down its process-wide state (the read-only heap
        # built from the snapshot) whenever the last isolate goes, and a fresh
        # context, closed before the next is made, then had to rebuild it.
        self.checker = v8.Racer()

    async def warm(self) -> None:
        """Get ready for the next run, off the request path."""
        if self.isolate is None:
            self.isolate = warm.build(self.checker)
        wanted = self.wanted_modules()  # what recent jobs needed, loaded while idle
        for build in wanted:
            warm.load_module(self.isolate, build)
        if self.fresh is None and any(self.recent_fresh):
            self.fresh = await sandbox.prepare_context()
            for build in wanted:
                sandbox.load_module(self.fresh, build)
        _send({"t": "ready", "pid": os.getpid()})

    def wanted_modules(self) -> list[dict[str, str]]:
        seen: dict[str, dict[str, str]] = {}
        for builds in self.recent_modules:
            for build in builds:
                seen.setdefault(build["name"], build)
        return list(seen.values())

    def on_log(self, lines: list[list[Any]]) -> None:
        _send({"t": "log", "lines": lines})

    def on_call(self, call: dict[str, Any]) -> None:
        _send({"t": "call", "run": self.run_id, **call})

    def start(self, msg: dict[str, Any]) -> None:
        task = asyncio.ensure_future(self.run(msg))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def run(self, msg: dict[str, Any]) -> None:
        fresh = msg.get("isolation") == "fresh"
        wanted = [m for m in msg.get("modules", []) if isinstance(m, dict)]
        self.recent_modules.append(wanted)
        self.recent_fresh.append(fresh)
        caps = protocol.Caps.from_message(msg["spec"].get("caps"))
        cpu0, began = time.process_time(), time.monotonic()
        try:
            outcome = await self._run_job(msg, fresh, wanted)
        except Exception as exc:  # the hub must hear of every run's end
            outcome = sandbox.RawOutcome({"ok": False, "code": "JOB-001", "logs": [],
                                          "message": f"The worker could not run the job: {exc}"})
        cpu_ms = int((time.process_time() - cpu0) * 1000)
        self.current = self.run_id = None
        meta, body = _answer(outcome, caps)
        _send({"t": "done", "meta": meta, "len": len(body), "cpuMs": cpu_ms}, body)
        await self._after_run(fresh, time.monotonic() - began)
        if len(body) >= _TRIM_AFTER:
            _give_back_memory()
        await self.warm()

    async def _run_job(self, msg: dict[str, Any], fresh: bool,
                       wanted: list[dict[str, str]]) -> sandbox.RawOutcome:
        source, spec, memory_mb = msg["source"], msg["spec"], int(msg["memoryMb"])
        live = bool(msg.get("live"))
        if fresh:
            context = self.fresh or await sandbox.prepare_context()
            self.fresh, self.spent = None, context
            for build in wanted:
                sandbox.load_module(context, build)
            self._own(context, msg)
            return await sandbox.run_in_context(context, source, spec, memory_mb, live)
        isolate = self.isolate or warm.build(self.checker)
        self.isolate = isolate
        for build in wanted:
            warm.load_module(isolate, build)
        self._own(isolate, msg)
        return await warm.run(isolate, source, spec, memory_mb, live)

    def _own(self, context: sandbox.PreparedContext, msg: dict[str, Any]) -> None:
        self.current, self.run_id = context, str(msg.get("run"))
        context.on_log, context.on_call = self.on_log, self.on_call

    async def _after_run(self, fresh: bool, took_s: float) -> None:
        """A fresh context serves one run; the warm isolate serves the next one
        unless the run left it spinning or too full: then the worker ends, and the
        pool starts another (a spinning isolate cannot be stopped from here)."""
        if self.spent is not None:
            self.spent.close()  # after the answer, not before it: closing is not free
            self.spent = None
        if fresh:
            return
        isolate = self.isolate
        if isolate is None:
            return
        fitness = await warm.settle(isolate, took_s)
        if fitness is warm.Fitness.EXIT:
            os._exit(0)
        if fitness is warm.Fitness.REPLACE:
            self.isolate = None
            isolate.close()  # after the answer; the next isolate is built while idle

    def check(self, msg: dict[str, Any]) -> None:
        _send({"t": "checked", **sandbox.check_syntax(self.checker, str(msg["source"]))})

    async def reply(self, msg: dict[str, Any]) -> None:
        # Only the run that asked gets the answer: call ids restart in every run.
        ours = msg.get("run") == self.run_id and type(msg.get("id")) is int
        if self.current is not None and ours:
            await sandbox.reply_to_call(self.current, msg["id"], bool(msg.get("ok")),
                                        msg.get("value"))


def _answer(outcome: sandbox.RawOutcome, caps: protocol.Caps) -> tuple[dict[str, Any], bytes]:
    """The done message's meta and the body bytes, within the run's result cap."""
    meta, logs = outcome.meta, outcome.meta.get("logs", [])
    body = crossing.body_bytes(meta, outcome.body)
    if body is None:
        return {"ok": False, "code": "JOB-001", "logs": logs,
                "message": "The job's file body is not valid base64"}, b""
    if len(body) > caps.result_bytes:
        return {"ok": False, "code": "JOB-003", "limit": "result", "logs": logs,
                "message": protocol.over_cap("result", caps.result_bytes)}, b""
    if meta.get("ok"):
        if meta.get("type") == "json":  # JSON.stringify escapes a lone surrogate
            body = protocol.clean_json_text(body)
        meta["encoding"] = "binary"  # decoded here; raw bytes follow the line
    return meta, body


def _give_back_memory() -> None:
    # glibc keeps a large freed buffer in its heap (its mmap threshold grows with
    # the sizes freed), so after a big answer the worker would stay that big.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def _line_limit() -> int:
    # The pool passes the line limit its caps allow (``--line-limit N``).
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--line-limit" and args[1].isdigit():
        return int(args[1])
    return protocol.Caps().line_limit


async def _serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_line_limit())
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    worker = Worker()
    await worker.warm()
    while line := await reader.readline():
        msg = protocol.decode(line)
        op = msg.get("op")
        if op == "run":
            worker.start(msg)
        elif op == "check":
            worker.check(msg)
        elif op == "reply":
            await worker.reply(msg)
        elif op == "exit":
            return


def main() -> None:
    _die_with_parent()
    asyncio.run(_serve())


if __name__ == "__main__":
    main()
