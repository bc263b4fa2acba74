"""A worker process: runs one job at a time, each in a fresh V8 context.

Started by the pool as ``python -m hub.engine.worker``; speaks JSON lines on
stdin/stdout (see ``protocol``). After every run it builds the next context
before saying ``ready``, so a request never waits for context set-up. The parent
kills it to enforce runtime and CPU limits; it dies with its parent.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import signal
import sys
import time
from collections import deque
from typing import Any

from hub.engine import crossing, protocol, sandbox, v8

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
        self.prepared: sandbox.PreparedContext | None = None  # warm, waiting for a job
        self.current: sandbox.PreparedContext | None = None   # running a job
        self.run_id: str | None = None                         # the run it belongs to
        self.tasks: set[asyncio.Task[None]] = set()
        self.recent_modules: deque[list[dict[str, str]]] = deque(maxlen=20)
        # A bare context that only ever parses. It is made at once and kept for the
        # worker's life for a second reason: V8 tears down its process-wide state
        # (the read-only heap built from the snapshot) whenever the last isolate
        # goes, and a run's isolate, closed before the next is made, then had to
        # rebuild it. With this one alive a run costs ~8% fewer instructions.
        self.checker = v8.Racer()

    async def warm(self) -> None:
        context = await sandbox.prepare_context()
        for build in self.wanted_modules():  # what recent jobs needed, loaded while idle
            sandbox.load_module(context, build)
        self.prepared = context
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
        context, self.prepared = self.prepared, None
        assert context is not None, "a run arrived before the worker was ready"
        self.current, self.run_id = context, str(msg.get("run"))
        context.on_log, context.on_call = self.on_log, self.on_call
        wanted = [m for m in msg.get("modules", []) if isinstance(m, dict)]
        for build in wanted:
            sandbox.load_module(context, build)
        self.recent_modules.append(wanted)
        caps = protocol.Caps.from_message(msg["spec"].get("caps"))
        cpu0 = time.process_time()
        try:
            outcome = await sandbox.run_in_context(
                context, msg["source"], msg["spec"], int(msg["memoryMb"]), bool(msg.get("live")))
        except Exception as exc:  # the hub must hear of every run's end
            outcome = sandbox.RawOutcome({"ok": False, "code": "JOB-001", "logs": [],
                                          "message": f"The worker could not run the job: {exc}"})
        cpu_ms = int((time.process_time() - cpu0) * 1000)
        self.current = self.run_id = None
        meta, body = _answer(outcome, caps)
        _send({"t": "done", "meta": meta, "len": len(body), "cpuMs": cpu_ms}, body)
        context.close()  # ~1 ms: after the answer, not before it
        if len(body) >= _TRIM_AFTER:
            _give_back_memory()
        await self.warm()

    def check(self, msg: dict[str, Any]) -> None:
        _send({"t": "checked", **sandbox.check_syntax(self.checker, str(msg["source"]))})

    async def reply(self, msg: dict[str, Any]) -> None:
        # Only the run that asked gets the answer: call ids restart in every context.
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
        msg = json.loads(line)
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
