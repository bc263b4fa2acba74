"""Every failure WebJobs reports, as one class tree carried on the wire as a code.

A failure leaves the hub as a small JSON object
``{"success": false, "error": <message>, "code": <code>, "ref": <ref>, ...}`` and
is turned back into the same class on the other side with :func:`error_from_wire`.

Hierarchy::

    WebJobsError
    ├── JobError                       a run ended badly (HTTP 500)
    │   ├── JobFailed          JOB-001 threw, success:false, syntax error, stopped
    │   ├── ModuleNotApproved  JOB-002 require() of a module that is not approved
    │   ├── LimitExceeded      JOB-003 runtime, memory or CPU limit (``limit`` says which)
    │   ├── NoResult           JOB-004 finished without returning anything
    │   └── NeighbourBroke     JOB-005 ended because another run on its worker broke a
    │                                  limit the worker could not stop
    ├── RequestError                   the request itself is wrong (HTTP 4xx)
    │   ├── BadRequest         HUB-001 malformed input to the management API
    │   ├── BadJobName         HUB-007 a job name outside [a-zA-Z0-9_-]+
    │   ├── JobDoesNotParse    HUB-008 a job saved with a syntax error (``line``/``column``)
    │   ├── Conflict           HUB-009 clashes with something already stored (HTTP 409)
    │   │   └── JobChanged     HUB-010 the job changed since the editor opened it
    │   │                              (``currentVersion``; nothing was saved)
    │   ├── NotSignedIn        AUTH-SESSION-001 nobody signed in
    │   ├── Forbidden          SYS-403 signed in, but not allowed
    │   ├── NotFound           SYS-404 no such job (or run, or route)
    │   ├── BodyTooLarge       SYS-413 request body over WEBJOB_MAX_BODY_MB
    │   ├── BodyStalled        SYS-408 the request body stopped arriving
    │   ├── HeadTooLarge       SYS-431 request line and headers over 64 KB
    │   └── TooManyRequests    SYS-429 queue full or rate limited (``retry_after``)
    └── InternalError          SYS-500 a fault in the hub itself; never carries a traceback
        └── StoreUnavailable   SYS-503 a database the hub keeps its data in cannot be reached
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "BadJobName",
    "BadRequest",
    "BodyStalled",
    "BodyTooLarge",
    "Conflict",
    "Forbidden",
    "HeadTooLarge",
    "InternalError",
    "JobChanged",
    "JobDoesNotParse",
    "JobError",
    "JobFailed",
    "LimitExceeded",
    "ModuleNotApproved",
    "NeighbourBroke",
    "NoResult",
    "NotFound",
    "NotSignedIn",
    "RequestError",
    "StoreUnavailable",
    "TooManyRequests",
    "WebJobsError",
    "error_class_for",
    "error_from_wire",
    "known_error_classes",
]

# Extra fields a failure may carry on the wire, beyond message/code/ref.
_EXTRA_FIELDS = ("limit", "line", "column", "retry_after", "runtime", "detail", "sqlstate",
                 "currentVersion")


class WebJobsError(Exception):
    """Root of every WebJobs failure. ``code`` and ``http_status`` are per class."""

    code: ClassVar[str] = "SYS-500"
    http_status: ClassVar[int] = 500
    # The README's error table is written from these (python -m shared.error_doc).
    meaning: ClassVar[str] = "A failure the hub reports under a code this client does not know."

    def __init__(self, message: str, *, ref: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.ref = ref
        self.extra: dict[str, Any] = {k: v for k, v in extra.items() if v is not None}

    def __getattr__(self, name: str) -> Any:
        # Lets callers write ``err.limit`` or ``err.line`` for the optional fields.
        if name in _EXTRA_FIELDS:
            return self.__dict__.get("extra", {}).get(name)
        raise AttributeError(name)

    def to_wire(self) -> dict[str, Any]:
        """The JSON failure object sent to clients."""
        out: dict[str, Any] = {"success": False, "error": self.message, "code": self.code}
        if self.ref is not None:
            out["ref"] = self.ref
        out.update(self.extra)
        return out


class JobError(WebJobsError):
    """A run ended badly."""

    http_status = 500


class JobFailed(JobError):
    code = "JOB-001"
    meaning = ("The job failed: it threw, returned `success: false`, has a syntax error, its "
               "worker died, or it was stopped.")


class ModuleNotApproved(JobError):
    code = "JOB-002"
    meaning = "`require()` of a module that is not approved."


class LimitExceeded(JobError):
    code = "JOB-003"
    meaning = ("A limit was hit; `limit` says which (`runtime`, `cpu`, `memory`, a "
               "`db.exec` answer's `rows`, or a size cap: `result`, `payload`, `console`).")


class NoResult(JobError):
    code = "JOB-004"
    meaning = "The job returned nothing."


class NeighbourBroke(JobError):
    code = "JOB-005"
    meaning = ("The run was ended because another run on its worker broke a limit the worker "
               "could not stop; nothing was wrong with this run: run it again.")


class RequestError(WebJobsError):
    """The request is wrong; nothing ran."""

    http_status = 400


class BadRequest(RequestError):
    code = "HUB-001"
    meaning = ("Malformed input (bytes that are not HTTP/1.1, not JSON, nested deeper than 64"
               " levels, a lone surrogate in job code or a secret's value, an id out of range,"
               " a missing field, a bad upload).")


class BadJobName(RequestError):
    code = "HUB-007"
    meaning = ("A job name outside `[a-zA-Z0-9_-]+` — the whole name: `evil\\n` is refused — (or "
               "a reserved route name, on save).")


class JobDoesNotParse(RequestError):
    code = "HUB-008"
    meaning = "A saved job does not parse; `line` and `column` say where."


class Conflict(RequestError):
    code = "HUB-009"
    meaning = ("The change clashes with something already stored (a name or key taken "
               "meanwhile).")
    http_status = 409


class JobChanged(Conflict):
    """A save based on a version that is no longer the job's: another save (or a
    delete) came in between. ``currentVersion`` is the job's version now, null when
    there is no job of that name any more; it is always on the wire."""

    code = "HUB-010"
    meaning = ("A save from an editor whose job changed since it opened it (`baseVersion` is not"
               " the current version); `currentVersion` says which it is now.")

    def __init__(self, message: str, *, current_version: int | None = None,
                 ref: str | None = None, **extra: Any) -> None:
        # From the wire it comes as ``currentVersion`` (see error_from_wire).
        extra.setdefault("currentVersion", current_version)
        super().__init__(message, ref=ref, **extra)

    @property
    def current_version(self) -> int | None:
        value = self.extra.get("currentVersion")
        return value if isinstance(value, int) else None

    def to_wire(self) -> dict[str, Any]:
        return {**super().to_wire(), "currentVersion": self.current_version}


class NotSignedIn(RequestError):
    code = "AUTH-SESSION-001"
    meaning = ("Nobody signed in and the job is not public, or the credentials sent are not "
               "valid.")
    http_status = 401


class Forbidden(RequestError):
    code = "SYS-403"
    meaning = "Signed in, but not allowed."
    http_status = 403


class NotFound(RequestError):
    code = "SYS-404"
    meaning = "No such job (or route)."
    http_status = 404


class BodyTooLarge(RequestError):
    code = "SYS-413"
    meaning = "The request body is over `WEBJOB_MAX_BODY_MB`."
    http_status = 413


class HeadTooLarge(RequestError):
    code = "SYS-431"
    meaning = ("The request line and headers are over 64 KB together (a URL, a cookie, or "
               "many headers); the connection is closed.")
    http_status = 431


class BodyStalled(RequestError):
    code = "SYS-408"
    meaning = ("The request body stopped arriving: no byte of it came for 30 s (a body shorter "
               "than its `Content-Length`, a client gone quiet).")
    http_status = 408


class TooManyRequests(RequestError):
    code = "SYS-429"
    meaning = ("The node's run queue is full, too many requests from one address, or too many "
               "failed sign-ins (for one name from one address, from one address, or for one "
               "name from many); `Retry-After` says when to retry.")
    http_status = 429


class InternalError(WebJobsError):
    code = "SYS-500"
    meaning = "An internal fault in the hub."
    http_status = 500


class StoreUnavailable(InternalError):
    code = "SYS-503"
    meaning = ("A database the hub keeps its own data in (users, jobs, history) cannot be "
               "reached; try again.")
    http_status = 503


def _all_subclasses(cls: type[WebJobsError]) -> list[type[WebJobsError]]:
    found: list[type[WebJobsError]] = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_all_subclasses(sub))
    return found


_BY_CODE: dict[str, type[WebJobsError]] = {
    cls.code: cls
    for cls in _all_subclasses(WebJobsError)
    if cls not in (JobError, RequestError)
}


def known_error_classes() -> list[type[WebJobsError]]:
    """Every class a wire code names, in the order of the tree above."""
    return list(_BY_CODE.values())


def error_class_for(code: str) -> type[WebJobsError]:
    """The class for a wire code; unknown codes map to the root, never fail."""
    return _BY_CODE.get(code, WebJobsError)


def error_from_wire(obj: dict[str, Any]) -> WebJobsError:
    """Rebuild a failure from its JSON object (tolerates missing fields)."""
    cls = error_class_for(str(obj.get("code", "")))
    extra = {k: obj[k] for k in _EXTRA_FIELDS if k in obj}
    err = cls(str(obj.get("error", "unknown error")), ref=obj.get("ref"), **extra)
    if cls is WebJobsError and obj.get("code"):
        err.code = str(obj["code"])  # type: ignore[misc]  # keep an unknown code visible
    return err
