"""The jobs folder the hub under test serves: the reference's four jobs, unchanged, plus
the hub-only module jobs (date-fns, a one-page pdf-lib document), each twice: as written,
and the same text with ``Isolation: fresh`` in its header (a fresh isolate per run).

The reference cannot run them (it has no ``require``), so they are measured on the hub only,
warm against fresh.
"""

import shutil
from pathlib import Path

FRESH_SUFFIX = "_fresh"
FRESH_LINE = "Isolation: fresh"

DATE_FNS_JOB = """/*
Name: date-fns bench
Description: Parses, shifts, formats and counts dates with date-fns
*/
const { addDays, differenceInCalendarDays, format, parseISO } = require("date-fns")
const start = parseISO(String(params.from || "2026-01-01"))
const end = addDays(start, 30)
return {
  from: format(start, "yyyy-MM-dd"),
  to: format(end, "EEEE d MMMM yyyy"),
  days: differenceInCalendarDays(end, start),
}
"""

PDF_PAGE_JOB = """/*
Name: pdf-lib bench
Description: A one-page PDF built with pdf-lib: a title and twenty lines of text
*/
const { PDFDocument, StandardFonts, rgb } = require("pdf-lib")
const pdf = await PDFDocument.create()
const font = await pdf.embedFont(StandardFonts.Helvetica)
const page = pdf.addPage([595, 842])
const grey = rgb(0.2, 0.2, 0.2)
page.drawText(`Bench report for ${params.who || "bench"}`, { x: 50, y: 780, size: 18, font })
for (let i = 0; i < 20; i++) {
  page.drawText(`line ${i + 1}`, { x: 50, y: 740 - i * 18, size: 11, font, color: grey })
}
return response.pdf(await pdf.save({ useObjectStreams: false }), "bench.pdf")
"""

# Job name -> source; each also runs as <name>_fresh.
MODULE_JOBS: dict[str, str] = {"date_fns": DATE_FNS_JOB, "pdf_page": PDF_PAGE_JOB}


def fresh_variant(source: str) -> str:
    """The same job with ``Isolation: fresh`` as the header's last line: nothing else
    changes, so warm against fresh compares the engines, not the jobs."""
    head, end, rest = source.partition("*/")
    if not end:
        raise ValueError("a bench job needs a /* ... */ header")
    return f"{head}{FRESH_LINE}\n{end}{rest}"


def module_job_files() -> dict[str, str]:
    """File name -> text of every hub-only job, warm and fresh."""
    files = {}
    for name, source in MODULE_JOBS.items():
        files[f"{name}.job.js"] = source
        files[f"{name}{FRESH_SUFFIX}.job.js"] = fresh_variant(source)
    return files


def fill_jobs_dir(dest: Path, reference_jobs: Path) -> Path:
    """Copy the reference's jobs into dest and add the module jobs; returns dest."""
    dest.mkdir(parents=True, exist_ok=True)
    for path in sorted(reference_jobs.glob("*.job.js")):
        shutil.copyfile(path, dest / path.name)
    for file_name, text in module_job_files().items():
        (dest / file_name).write_text(text, encoding="utf-8")
    return dest
