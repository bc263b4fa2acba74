"""What the editor checks and completes against that only the hub knows: the approved
``require()`` modules (``WEBJOB_MODULES``) and the limit maxima (``WEBJOB_MAX_*``).

``GET /api/webjobs/available`` sends both next to the jobs (``modules``, ``maxima``,
decoded into ``shared.wire.jobs.JobList``); this reads them from that shape. Plain
data, no Qt. A hub too old to send them gives ``None`` for each, and a maximum that is
no usable limit (zero or less) ``None`` for the maxima; the editor goes on without."""

from __future__ import annotations

from dataclasses import dataclass

from shared.header import Limits
from shared.wire.jobs import JobLimits, JobList

__all__ = ["HubContext", "context_from_available"]


@dataclass(frozen=True)
class HubContext:
    modules: list[str] | None
    maxima: Limits | None


def _maxima(value: JobLimits | None) -> Limits | None:
    if value is None:
        return None
    numbers = (value.runtimeMs, value.memoryMb, value.cpuMs)
    if any(number <= 0 for number in numbers):
        return None
    runtime, memory, cpu = numbers
    return Limits(runtime_ms=runtime, memory_mb=memory, cpu_ms=cpu)


def context_from_available(data: JobList) -> HubContext:
    """The modules and maxima of a ``/available`` answer (``None`` where not sent)."""
    modules = None if data.modules is None else [m.strip() for m in data.modules if m.strip()]
    return HubContext(modules, _maxima(data.maxima))
