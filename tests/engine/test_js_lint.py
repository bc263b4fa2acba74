"""eslint over the sandbox JavaScript, as ``make lint`` runs it: the files in the
Makefile's ESLINT_FILES are clean, and the config really catches what it is there
for (a config that matched no file, or declared every name, would pass clean
files too). eslint comes from tools/jslint, installed by ``make setup``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
JSLINT = ROOT / "tools" / "jslint"
ESLINT = JSLINT / "node_modules" / ".bin" / "eslint"

pytestmark = pytest.mark.skipif(shutil.which("node") is None,
                                reason="node is not installed (make setup installs it)")


def eslint(*args: str, text: str | None = None) -> list[dict[str, Any]]:
    """eslint's JSON report: one entry per file, each with its messages."""
    assert ESLINT.exists(), "eslint is not installed: run `make setup`"
    done = subprocess.run([str(ESLINT), "--config", str(JSLINT / "eslint.config.js"),
                           "--format", "json", *args], input=text, cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    # 0: clean, 1: findings; anything else is eslint failing to run at all.
    assert done.returncode in (0, 1), done.stderr
    report: list[dict[str, Any]] = json.loads(done.stdout)
    return report


def lint_text(text: str, name: str = "hub/engine/js/probe.js") -> list[tuple[str, int]]:
    """The (rule, line) of each finding in `text`, linted as if it were file `name`."""
    [result] = eslint("--stdin", "--stdin-filename", name, text=text)
    return [(m["ruleId"], m.get("line", 0)) for m in result["messages"]]


def listed_files() -> list[str]:
    """ESLINT_FILES as make expands it."""
    out = subprocess.run(["make", "-s", "--no-print-directory", "--eval",
                          "print-eslint-files: ; @echo $(ESLINT_FILES)", "print-eslint-files"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.split()


def test_listed_files_are_clean() -> None:
    files = listed_files()
    assert "hub/engine/js/debug_runtime.js" in files
    report = eslint("--max-warnings", "0", *files)
    # Every listed file was linted, none skipped as ignored.
    assert sorted(Path(r["filePath"]) for r in report) == sorted(ROOT / f for f in files)
    findings = [f"{Path(r['filePath']).name}:{m.get('line')}: {m['message']} ({m['ruleId']})"
                for r in report for m in r["messages"]]
    assert findings == []


STRICT = "(() => {\n  'use strict';\n"
END = "})();\n"
# Each text is clean but for one bug: (the rule that must report it, its line, text).
BUGS = {
    "undeclared": ("no-undef", 3, STRICT + "  return missingName;\n" + END),
    # A bare V8 isolate has no console: the sandbox builds the job's own.
    "console": ("no-undef", 3, STRICT + "  console.log(1);\n" + END),
    "global-var": ("no-implicit-globals", 1, "var shared = 1;\nglobalThis.x = shared;\n"),
    "sloppy": ("strict", 1, "(() => {\n  globalThis.x = 1;\n" + END),
    "loose-equal": ("eqeqeq", 3, STRICT + "  globalThis.x = globalThis.y == 1;\n" + END),
    "unused": ("no-unused-vars", 3, STRICT + "  const unused = 1;\n" + END),
    "tdz": ("no-use-before-define", 3,
            STRICT + "  globalThis.x = late;\n  const late = 1;\n" + END),
}


@pytest.mark.parametrize("name", sorted(BUGS))
def test_config_reports_the_bug(name: str) -> None:
    rule, line, text = BUGS[name]
    assert lint_text(text) == [(rule, line)]


def test_idioms_the_sandbox_uses_are_clean() -> None:
    # `== null`, an unused caught error, an unused parameter before a used one,
    # SES's globals and a use in a function that runs after the declaration.
    text = (STRICT + "  const f = (a, b) => {\n"
            "    try { return later(b) == null; } catch (e) { return a; }\n  };\n"
            "  const later = (v) => v;\n"
            "  globalThis.f = f;\n  lockdown();\n  globalThis.h = harden(new Compartment());\n"
            + END)
    assert lint_text(text) == []


@pytest.mark.parametrize("name", ["debug_instrument.js", "strict_check.js"])
def test_acorn_is_the_acorn_context_s_alone(name: str) -> None:
    text = STRICT + "  globalThis.x = acorn.parse('1');\n" + END
    assert lint_text(text, f"hub/engine/js/{name}") == []
    assert lint_text(text) == [("no-undef", 3)]
    ses = STRICT + "  lockdown();\n" + END
    assert lint_text(ses, f"hub/engine/js/{name}") == [("no-undef", 3)]


def test_the_approved_modules_are_not_linted() -> None:
    [result] = eslint("--stdin", "--stdin-filename", "hub/engine/js/modules/x.js",
                      text="var leaked = missingName;\n")
    assert [m["ruleId"] for m in result["messages"]] == [None]
    assert "ignored" in result["messages"][0]["message"]
