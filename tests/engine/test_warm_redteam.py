"""Red-team findings against the warm engine (issue 18): each test is an attack that
worked when it was written, as a minimal reproducer. Run A, then run B, on a worker
that serves both (one worker, no spare): B must not see or feel anything of A.

Each failed on the warm engine when it was written (at 986d81a); a test passes only
when B is unaffected. The three PDFName tests pass since 38201e8 (PDFName.of freezes
what it hands out) and stay as its regression tests; the rest still fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hub.engine.engine import RunResult
from hub.engine.modules import installed_builds, mentioned
from shared.header import Limits
from tests.engine.conftest import EngineHarness, body_json, workers

APPROVED = ["date-fns", "pdf-lib"]
BUILDS = installed_builds(APPROVED)
LIMITS = Limits(runtime_ms=5_000, memory_mb=64, cpu_ms=3_000)


@pytest.fixture()
def solo() -> Iterator[EngineHarness]:
    # A new one-worker engine per test: what one attack leaves never meets the next.
    with workers(1, queue_timeout_ms=20_000) as harness:
        yield harness


def run(engine: EngineHarness, source: str, **kw: Any) -> RunResult:
    kw.setdefault("limits", LIMITS)
    return engine.run(source, approved_modules=APPROVED,
                      modules=[b.as_message() for b in mentioned(source, BUILDS)], **kw)


needs_modules = pytest.mark.skipif(sorted(BUILDS) != APPROVED, reason="run make setup")

# ---- module state harden() cannot see ------------------------------------------------
# pdf-lib interns every PDFName in a module-level Map (PDFName.of); the names its
# module creates while it loads are hardened with the export, those made later
# (e.g. 'Helvetica', 'Type1', 'Encoding', 'Pages', 'Catalog') are plain objects
# shared by every later run of the isolate.


def attack(engine: EngineHarness, source: str) -> RunResult:
    """Run A. Its outcome is not asserted: a fixed engine may refuse the attack."""
    return run(engine, source)


@needs_modules
def test_a_pdf_name_made_in_one_run_is_not_the_next_runs(solo: EngineHarness) -> None:
    """A property A puts on PDFName.of('X') is read by B: pdf-lib's name pool leaks."""
    attack(solo, "const { PDFName } = require('pdf-lib');"
                 " PDFName.of('RedTeamLeak').marker = 'from A'; return 'A'")
    b = run(solo, "const { PDFName } = require('pdf-lib');"
                  " return PDFName.of('RedTeamLeak').marker ?? 'clean'")
    assert body_json(b) == "clean"


PDF_WITH_HELVETICA = """
const { PDFDocument, StandardFonts } = require('pdf-lib')
const doc = await PDFDocument.create()
const font = await doc.embedFont(StandardFonts.Helvetica)
doc.addPage().drawText('TEXT', { font })
return response.pdf(await doc.save({ useObjectStreams: false }))
"""


@needs_modules
def test_a_run_cannot_rewrite_the_pdfs_another_run_makes(solo: EngineHarness) -> None:
    """A renames the interned /Helvetica PDFName: B's PDF then names a font B never chose."""
    attack(solo, "const { PDFName } = require('pdf-lib');"
                 " PDFName.of('Helvetica').encodedName = '/Courier'; return 'A'")
    b = run(solo, PDF_WITH_HELVETICA)
    assert b.ok, b.error and b.error.message
    assert b"/Helvetica" in b.body and b"/Courier" not in b.body


@needs_modules
def test_a_run_cannot_read_the_pdf_bytes_of_a_later_run(solo: EngineHarness) -> None:
    """A wraps copyBytesInto of an interned PDFName: A's next run reads B's PDF text."""
    attack(solo, """
const { PDFName } = require('pdf-lib')
const name = PDFName.of('Helvetica'), copy = name.copyBytesInto, seen = []
Object.defineProperty(name, 'copyBytesInto', {
  value(buffer, offset) { seen.push(buffer); return copy.call(this, buffer, offset) } })
name.seen = seen
return 'A'""")
    b = run(solo, PDF_WITH_HELVETICA.replace("'TEXT'", "'B secret 4711'"))
    assert b.ok, b.error and b.error.message
    again = run(solo, """
const { PDFName } = require('pdf-lib')
const seen = PDFName.of('Helvetica').seen || []
const text = seen.map((b) => Buffer.from(b).toString('latin1')).join('')
return text.includes('B secret 4711') ? 'leaked' : 'clean'""")
    assert body_json(again) == "clean"


# @pdf-lib/standard-fonts decompresses each standard font's metrics once (Font.load's
# cache) and hands every later embedder the same Font object: unfrozen, shared by
# every run of the isolate, and called with each run's text.
MEASURE = """
const { PDFDocument, StandardFonts } = require('pdf-lib')
const doc = await PDFDocument.create()
const font = await doc.embedFont(StandardFonts.Helvetica)
const metrics = font.embedder.font
%s
return font.widthOfTextAtSize('Hello', 12)"""


@needs_modules
def test_a_run_cannot_change_the_standard_font_metrics_of_the_next(solo: EngineHarness) -> None:
    """A patches the cached Helvetica metrics (Font.load's cache): B's text widths change."""
    before = body_json(run(solo, MEASURE % ""))
    a = attack(solo, MEASURE % "metrics.getWidthOfGlyph = () => 5000")
    assert not a.ok or body_json(a) != before  # the probe sees the patch where it holds
    assert body_json(run(solo, MEASURE % "")) == before


@needs_modules
def test_a_run_cannot_read_the_text_a_later_run_draws(solo: EngineHarness) -> None:
    """A wraps the cached metrics' getWidthOfGlyph: A's next run reads the glyphs B drew."""
    attack(solo, MEASURE % """
const width = metrics.getWidthOfGlyph, seen = []
metrics.getWidthOfGlyph = (glyph) => { seen.push(glyph); return width(glyph) }
metrics.seen = seen""")
    b = run(solo, MEASURE.replace("'Hello'", "'secret'") % "")
    assert b.ok, b.error and b.error.message
    again = run(solo, MEASURE % "return (metrics.seen || []).join(' ')")
    assert "s e c r e t" not in body_json(again)


# What a PDF job reaches that is shared by every run of the isolate (found by tagging
# every extensible object one run reaches and searching for the tags in the next).
SHARED_PDF_OBJECTS = [
    pytest.param("Object.getPrototypeOf(doc.context.rng)", id="SimpleRNG-prototype"),
    pytest.param("font.embedder.font", id="standard-font-metrics"),
    pytest.param("font.embedder.encoding", id="standard-font-encoding"),
]


@needs_modules
@pytest.mark.parametrize("target", SHARED_PDF_OBJECTS)
def test_what_a_pdf_job_reaches_is_not_shared_between_runs(solo: EngineHarness,
                                                           target: str) -> None:
    """A puts a property on an object pdf-lib made after it loaded (never hardened): B reads it."""
    reach = ("const { PDFDocument, StandardFonts } = require('pdf-lib');"
             " const doc = await PDFDocument.create();"
             " const font = await doc.embedFont(StandardFonts.Helvetica);"
             f" const target = {target};")
    a = attack(solo, reach + " target.redTeam = 'from A'; return target.redTeam")
    assert not a.ok or body_json(a) == "from A"  # the probe sees the tag where it holds
    b = run(solo, reach + " return target.redTeam ?? 'clean'")
    assert body_json(b) == "clean"


# ---- memory: what one run keeps counts against the next ------------------------------


def test_memory_an_earlier_run_kept_does_not_count_against_a_run(solo: EngineHarness) -> None:
    """A keeps 40 MB in Symbol.for keys (within its 64 MB): B, needing 30 MB, then gets JOB-003."""
    b_source = ("const keep = [];"
                " for (let i = 0; i < 30; i++) keep.push(new Array(1 << 17).fill(i));"
                " return keep.length")
    assert body_json(run(solo, "return 1")) == 1
    a = run(solo, "const base = 'x'.repeat(1 << 20);"
                  " for (let i = 0; i < 40; i++) Symbol.for(base + i); return 'A'")
    assert body_json(a) == "A"
    b = run(solo, b_source)
    assert b.ok, b.error and (b.error.code, b.error.message)
    assert body_json(run(solo, b_source)) == 30  # and B alone fits its limit



@needs_modules
def test_a_run_cannot_write_into_the_console_of_a_later_run(solo: EngineHarness) -> None:
    """A's function left in the shared font metrics runs in B: what it reports is B's console."""
    attack(solo, MEASURE % """
const width = metrics.getWidthOfGlyph
metrics.getWidthOfGlyph = (glyph) => {
  const t = new EventTarget()
  t.addEventListener('x', () => { throw new Error('INJECTED by A') })
  t.dispatchEvent(new Event('x'))
  return width(glyph)
}""")
    b = run(solo, MEASURE % "")
    assert b.ok, b.error and b.error.message
    assert not any("INJECTED" in line.message for line in b.logs)
