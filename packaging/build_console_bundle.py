"""Build the Owner console as a desktop program: ``dist/webjobs-console/`` (``make
console-bundle``).

    .venv/bin/python packaging/build_console_bundle.py [--force]

PyInstaller runs packaging/console.spec with its work folder under ``build/``. The
build is skipped when nothing that goes into the bundle changed since the last one:
a stamp beside the work folder holds a hash of console_app/, shared/, the spec, the
desktop entry, this script, the Python version and the versions of the packages
bundled. After a build the output is checked (the Qt platform plugins, the Scintilla
binaries, every page module in, nothing of the hub) before the stamp is written, so a
bundle that failed the check is rebuilt next time. A lock lets the tests and ``make``
run this at the same time."""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import importlib.metadata
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "packaging" / "console.spec"
DESKTOP_ENTRY = REPO / "packaging" / "webjobs-console.desktop"
NAME = "webjobs-console"
DIST = REPO / "dist"
BUNDLE = DIST / NAME
PROGRAM = BUNDLE / NAME
WORK = REPO / "build" / "console-bundle"
STAMP = REPO / "build" / "console-bundle.stamp"
LOCK = REPO / "build" / "console-bundle.lock"

SOURCE_FOLDERS = (REPO / "console_app", REPO / "shared")
SOURCE_FILES = (SPEC, DESKTOP_ENTRY, Path(__file__).resolve())
# What the bundle is made of besides our sources: another version of one is another bundle.
BUNDLED_DISTRIBUTIONS = ("pyinstaller", "pyinstaller-hooks-contrib", "PySide6-Essentials",
                         "shiboken6", "pyside6-scintilla", "lexilla", "keyring", "httpx")

# The Qt plugins the console cannot start without (X11 desktops, headless use).
REQUIRED_FILES = ("_internal/PySide6/Qt/plugins/platforms/libqxcb.so",
                  "_internal/PySide6/Qt/plugins/platforms/libqoffscreen.so",
                  "_internal/scintilla_qt.so",
                  "_internal/share/applications/webjobs-console.desktop")
REQUIRED_GLOBS = ("_internal/pyside6_scintilla/_pyside6_scintilla*.so",
                  "_internal/lexilla/_lexilla*.so")
# Top-level packages that must never be bundled: the console reaches a hub over HTTP.
FORBIDDEN_PACKAGES = frozenset({"hub", "fastapi", "starlette", "uvicorn", "py_mini_racer",
                                "pyodbc", "console_app.screenshots", "console_app.screenshot_demo"})


class BundleCheckFailed(Exception):
    """The built folder lacks something the console needs, or holds the hub."""


def source_files() -> Iterator[Path]:
    for folder in SOURCE_FOLDERS:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                yield path
    yield from SOURCE_FILES


def source_hash() -> str:
    digest = hashlib.sha256()
    digest.update(sys.version.encode())
    for dist in BUNDLED_DISTRIBUTIONS:
        digest.update(f"\0{dist}={importlib.metadata.version(dist)}".encode())
    for path in source_files():
        digest.update(f"\0{path.relative_to(REPO)}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def is_up_to_date(wanted: str) -> bool:
    """The stamp matches and the folder still passes its check (a damaged or partly
    deleted bundle is rebuilt)."""
    stamp = STAMP.read_text().strip() if STAMP.exists() else ""
    if stamp != wanted or not PROGRAM.is_file():
        return False
    try:
        check_bundle()
    except (BundleCheckFailed, OSError, ValueError):
        return False
    return True


def bundled_modules(program: Path = PROGRAM) -> set[str]:
    """The Python modules frozen into ``program``'s archive."""
    from PyInstaller.archive.readers import pkg_archive_contents  # type: ignore[import-untyped]

    return set(pkg_archive_contents(str(program)))


def forbidden_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules
                  if any(m == bad or m.startswith(f"{bad}.") for bad in FORBIDDEN_PACKAGES))


def page_modules() -> list[str]:
    """The page modules the main window imports by name (console_app/shell/pages.py)."""
    sys.path.insert(0, str(REPO))
    from console_app.shell.pages import PAGE_SPECS

    return [spec.module for spec in PAGE_SPECS]


def check_bundle(bundle: Path = BUNDLE) -> None:
    missing = [f for f in REQUIRED_FILES if not (bundle / f).is_file()]
    missing += [g for g in REQUIRED_GLOBS if not any(bundle.glob(g))]
    modules = bundled_modules(bundle / NAME)
    missing += [m for m in page_modules() if m not in modules]
    if missing:
        raise BundleCheckFailed(f"missing from {bundle}: {', '.join(missing)}")
    extra = forbidden_in(modules)
    if extra:
        raise BundleCheckFailed(f"must not be in {bundle}: {', '.join(extra)}")


def run_pyinstaller() -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    log = WORK / "pyinstaller.log"
    with open(log, "w") as out:
        done = subprocess.run(
            [sys.executable, "-m", "PyInstaller", "--noconfirm",
             "--log-level", "WARN", "--distpath", str(DIST), "--workpath", str(WORK),
             str(SPEC)],
            cwd=REPO, stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        tail = "\n".join(log.read_text().splitlines()[-30:])
        raise BundleCheckFailed(f"PyInstaller failed ({done.returncode}); {log}:\n{tail}")


@contextmanager
def build_lock() -> Iterator[None]:
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build(force: bool = False) -> bool:
    """Build unless up to date; True if it built. The stamp is written only after the
    output passed its check, and removed before a build starts."""
    with build_lock():
        wanted = source_hash()
        if not force and is_up_to_date(wanted):
            return False
        STAMP.unlink(missing_ok=True)
        run_pyinstaller()
        check_bundle()
        STAMP.write_text(wanted + "\n")
        return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="build even if up to date")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        built = build(force=args.force)
    except BundleCheckFailed as err:
        print(f"console bundle: {err}", file=sys.stderr)
        return 1
    took = time.monotonic() - started
    state = "built" if built else "up to date"
    print(f"console bundle {state} in {took:.1f} s: {PROGRAM.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
