"""Jobs as ``<name>.job.js`` files in one folder (``WEBJOB_JOBS_DIR``)."""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from pathlib import Path

from hub.store.base import JOB_NAME_RE, StoredJob

log = logging.getLogger("webhub.store")
SUFFIX = ".job.js"


class FileJobStore:
    kind = "file"

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, name: str) -> Path:
        return self.folder / f"{name}{SUFFIX}"

    def get(self, name: str) -> StoredJob | None:
        path = self._path(name)
        try:
            # Bytes, not text mode: universal newlines would turn CRLF into LF.
            code = path.read_bytes().decode("utf-8", errors="replace")
            return StoredJob(name, code, path.stat().st_mtime)
        except FileNotFoundError:
            return None

    def list_jobs(self) -> list[StoredJob]:
        jobs = []
        for path in sorted(self.folder.glob(f"*{SUFFIX}")):
            name = path.name[: -len(SUFFIX)]
            if JOB_NAME_RE.match(name):
                job = self.get(name)
                if job is not None:
                    jobs.append(job)
        return jobs

    def save(self, name: str, code: str) -> StoredJob:
        # Write beside the target and rename over it: a reader sees the old job
        # or the new one, never half of one.
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=self.folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(code)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self._path(name))
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        stored = self.get(name)
        assert stored is not None
        return stored

    def delete(self, name: str) -> bool:
        try:
            self._path(name).unlink()
            return True
        except FileNotFoundError:
            return False

    def report_non_jobs(self) -> list[str]:
        """Plain ``.js`` files in the folder are not jobs: say so once, at start-up."""
        strays = sorted(p.name for p in self.folder.glob("*.js") if not p.name.endswith(SUFFIX))
        for name in strays:
            log.info("%s in the jobs folder is not a job (jobs end in %s); ignored", name, SUFFIX)
        return strays
