"""The hidden protocol between the worker (Python) and the sandbox (JavaScript),
defined once, here: the layout of the shared memory both sides read and write, and
every hidden global that crosses between them.

The sandbox gets the layout as its first script (``protocol_script``), which
prelude.js takes and deletes before any other code; ``channel.py`` reads the same
numbers. tests/engine/test_hidden_protocol.py checks that every ``__webjob_*`` name
in the sandbox's files is one of these and that none is left where a job could look.

The channel memory (one SharedArrayBuffer per context): a header, then one slot per
run the context can hold at once (a warm isolate serves up to WEBJOB_RUNS_PER_WORKER
runs, a fresh context one), each slot a run's own:
  header [0:4]  int32 LE  the slot whose code the isolate runs now, or ran last (-1:
                none): every entry into the isolate (a run's start, a bridge reply, a
                timer) writes it first, so the worker's CPU monitor can charge each run
  header [4:8]  int32 LE  the worker's number (seq) of the last run after whose settling
                the isolate ran a task of its own: nothing that run did still runs
  slot at SLOTS_AT + n * SLOT_BYTES:
  [0:4]   int32 LE  bytes written into the ring (the sandbox)
  [4:8]   int32 LE  bytes read from the ring (the worker)
  [RING_AT:+RING_BYTES]  the console ring: frames [length u32 LE][UTF-8 JSON line]
  [OUTCOME_AT:+4]     int32 LE  the outcome's length in bytes, -1 while there is none
  [OUTCOME_AT+8:+OUTCOME_BYTES]  the outcome, "meta JSON\\nbody", when it fits
  then the inbox, at inbox_at(slots), INBOX_BYTES: a large payload for a run (its
                spec, a bridge answer), a piece at a time, each taken by a small eval
                that names the run first (see inbox.py)
"""

from __future__ import annotations

import json

CURRENT_AT = 0
IDLE_AT = 4
SLOTS_AT = 16
RING_AT = 16                       # within a slot
RING_BYTES = 64 * 1024
OUTCOME_AT = RING_AT + RING_BYTES  # within a slot
OUTCOME_BYTES = 8 * 1024
SLOT_BYTES = OUTCOME_AT + 8 + OUTCOME_BYTES
INBOX_BYTES = 1024 * 1024


def inbox_at(slots: int) -> int:
    return SLOTS_AT + slots * SLOT_BYTES


def memory_bytes(slots: int) -> int:
    """The channel memory of a context that holds ``slots`` runs at once."""
    return inbox_at(slots) + INBOX_BYTES


def slot_at(slot: int) -> int:
    return SLOTS_AT + slot * SLOT_BYTES


# Host functions the worker installs before the sandbox runs (the prelude takes them).
NOTE = "__webjob_note"      # a console batch ("L<slot>:…") or a bridge call ("C<slot>:…")
WAKE = "__webjob_wake"      # a live run's console has lines (no argument)
DONE = "__webjob_done"      # a run that did not settle within its eval has (no argument:
                            # the worker looks at every slot it has given out)
# The one hidden global left once the sandbox is set up: what the worker's evals call.
HOST = "__webjob_host"
# Handed from one sandbox script to the next, each deleted by the script that takes it.
HANDOVERS = ("__webjob_protocol", "__webjob_web", "__webjob_bytes", "__webjob_responses",
             "__webjob_crypto", "__webjob_debug_runtime", "__webjob_kit", "__webjob_sandbox",
             "__webjob_channel")
# The hub's own acorn context (instrument.py), never a job's.
ACORN_TOOLS = ("__webjob_ast", "__webjob_instrument", "__webjob_strict_check")
ALL = (NOTE, WAKE, DONE, HOST, *HANDOVERS, *ACORN_TOOLS)


def protocol_script(slots: int = 1) -> str:
    """The first script of every sandbox: the layout, for prelude.js."""
    layout = {"currentAt": CURRENT_AT, "idleAt": IDLE_AT, "slotsAt": SLOTS_AT, "slots": slots,
              "slotBytes": SLOT_BYTES, "ringAt": RING_AT, "ringBytes": RING_BYTES,
              "outcomeAt": OUTCOME_AT, "outcomeBytes": OUTCOME_BYTES,
              "inboxAt": inbox_at(slots), "inboxBytes": INBOX_BYTES,
              "memoryBytes": memory_bytes(slots)}
    return f"globalThis.__webjob_protocol = {json.dumps(layout)};"
