"""require() of approved npm modules, loaded from their browser builds."""

from __future__ import annotations

import base64
import zlib

import pytest

from hub.engine.modules import installed_builds, mentioned
from tests.engine.conftest import EngineHarness, body_json

APPROVED = ["date-fns", "pdf-lib"]
BUILDS = installed_builds(APPROVED)


def run(engine: EngineHarness, source: str) -> object:
    return engine.run(source, approved_modules=APPROVED,
                      modules=[b.as_message() for b in mentioned(source, BUILDS)])


def test_the_approved_builds_are_installed() -> None:
    assert sorted(BUILDS) == APPROVED, "run `make setup` (npm ci in hub/engine/js/modules)"


def test_date_fns(engine: EngineHarness) -> None:
    source = """
const { format, addDays } = require("date-fns")
return format(addDays(new Date(2026, 0, 30), 3), "yyyy-MM-dd")"""
    assert body_json(run(engine, source)) == "2026-02-02"


def test_await_require_still_works(engine: EngineHarness) -> None:
    source = "const dfns = await require('date-fns'); return typeof dfns.format"
    assert body_json(run(engine, source)) == "function"


def test_a_module_leaves_no_global_behind(engine: EngineHarness) -> None:
    source = "require('date-fns'); return [typeof dateFns, typeof window, typeof PDFLib]"
    assert body_json(run(engine, source)) == ["undefined", "undefined", "undefined"]


def test_pdf_lib_builds_a_report(engine: EngineHarness) -> None:
    source = """
const { PDFDocument, StandardFonts } = require("pdf-lib")
const pdf = await PDFDocument.create()
const font = await pdf.embedFont(StandardFonts.Helvetica)
const page = pdf.addPage([595, 842])
page.drawText("Vacancies report", { x: 50, y: 780, size: 18, font })
pdf.addPage()
return response.pdf(await pdf.save({ useObjectStreams: false }), "report.pdf")"""
    result = run(engine, source)
    assert result.ok, result.error and result.error.message  # type: ignore[attr-defined]
    data: bytes = result.body  # type: ignore[attr-defined]
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    assert data.count(b"/Type /Page") >= 3  # two pages plus the /Pages node
    streams = [zlib.decompress(chunk.split(b"stream\n", 1)[1].split(b"\nendstream")[0])
               for chunk in data.split(b"endobj") if b"/FlateDecode" in chunk
               and b"stream\n" in chunk]
    # pdf-lib writes text as a hex string in the page's content stream
    assert any(base64.b16encode(b"Vacancies report") in s for s in streams)


@pytest.mark.parametrize(("name", "fragment"), [
    ("left-pad", "is not approved"),
])
def test_unapproved_modules_are_job_002(engine: EngineHarness, name: str, fragment: str) -> None:
    result = run(engine, f"require('{name}'); return 1")
    assert result.error is not None and result.error.code == "JOB-002"  # type: ignore[attr-defined]
    assert fragment in result.error.message  # type: ignore[attr-defined]


def test_approved_but_not_loaded_says_so(engine: EngineHarness) -> None:
    name = "date-" + "fns"
    result = engine.run(f"const n = '{name[:5]}' + '{name[5:]}'; require(n); return 1",
                        approved_modules=APPROVED, modules=[])
    assert result.error is not None and result.error.code == "JOB-002"
    assert "approved but not installed" in result.error.message
