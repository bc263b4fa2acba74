"""Approved npm modules a job may ``require()``, each loaded from its single-file
browser build (installed by ``make setup`` into js/modules): once into a worker's
warm isolate (hardened there, see warm_host.js), or into a fresh context.

A module is loaded only for a job whose source names it. Workers remember what
their recent jobs needed and load it while idle, so a job that requires a module
does not usually wait for its parse (bench/README.md: the first and the tenth
``require("date-fns")`` run).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

MODULES_ROOT = Path(__file__).resolve().parent / "js" / "modules" / "node_modules"

# name -> (browser build inside the package, the global that build defines)
BUILDS = {
    "date-fns": ("date-fns/cdn.min.js", "dateFns"),
    "pdf-lib": ("pdf-lib/dist/pdf-lib.min.js", "PDFLib"),
}


@dataclass(frozen=True)
class ModuleBuild:
    name: str
    path: str
    global_name: str

    def as_message(self) -> dict[str, str]:
        return {"name": self.name, "path": self.path, "global": self.global_name}


def installed_builds(approved: list[str], root: Path = MODULES_ROOT) -> dict[str, ModuleBuild]:
    """The approved modules whose browser build is on disk."""
    found = {}
    for name in approved:
        if name in BUILDS and (root / BUILDS[name][0]).is_file():
            found[name] = ModuleBuild(name, str(root / BUILDS[name][0]), BUILDS[name][1])
    return found


def mentioned(source: str, builds: dict[str, ModuleBuild]) -> list[ModuleBuild]:
    """The builds a job names as a string literal (``require("date-fns")``)."""
    return [b for name, b in builds.items()
            if any(f"{q}{name}{q}" in source for q in ('"', "'", "`"))]


def loader_script(build: dict[str, str], source: str) -> str:
    """Evaluates a browser build and hands its export to the prelude's registry,
    leaving no global behind."""
    name, glob = json.dumps(build["name"]), json.dumps(build["global"])
    return ("__webjob_host.provide(" + name + ", (function () { var window = globalThis, "
            "self = globalThis;\n" + source + "\n;const m = globalThis[" + glob + "]; "
            "delete globalThis[" + glob + "]; return m; }).call(globalThis));")


def warm_loader_script(build: dict[str, str], source: str) -> str:
    """The same for a warm isolate, whose global is frozen: ``window``, ``self``,
    ``this`` and ``globalThis`` are a scratch object for the build, and the warm
    host hardens the export (see warm_host.js's ``provide``)."""
    name, glob = json.dumps(build["name"]), json.dumps(build["global"])
    return ("__webjob_host.provide(" + name + ", (function () { const scratch = {}; "
            "(function (window, self, globalThis) {\n" + source + "\n}).call(scratch, scratch, "
            "scratch, scratch); return scratch[" + glob + "]; })());")
