"""The jobs folders the servers under test serve.

Every server that runs job files gets the plain jobs: the reference's four, unchanged, and
the bench's own waits (``slow_api``, ``hold_io``), written in sleep_io's style. The hub also
gets the module jobs (date-fns, a one-page pdf-lib document), each twice: as written, and
the same text with ``Isolation: fresh`` in its header (a fresh isolate per run). The
reference and workerd cannot run those (no ``require``), so they are measured on the hub
only, warm against fresh.
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

# sleep_io's text with a longer timer: slow_api is what many runs waiting on a slow outside
# call at once look like (rows at concurrency 128); hold_io keeps 128 runs waiting long
# enough to read the hub's memory in the middle (bench/memory_bench.py).
SLOW_API_JOB = "await new Promise(r => setTimeout(r, 500)); return {ok:true}\n"
HOLD_IO_JOB = "await new Promise(r => setTimeout(r, 3000)); return {ok:true}\n"
PLAIN_JOBS: dict[str, str] = {"slow_api": SLOW_API_JOB, "hold_io": HOLD_IO_JOB}

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


def fill_plain_jobs_dir(dest: Path, reference_jobs: Path) -> Path:
    """Copy the reference's jobs into dest and add the bench's plain jobs; returns dest."""
    dest.mkdir(parents=True, exist_ok=True)
    for path in sorted(reference_jobs.glob("*.job.js")):
        shutil.copyfile(path, dest / path.name)
    for name, text in PLAIN_JOBS.items():
        (dest / f"{name}.job.js").write_text(text, encoding="utf-8")
    return dest


def fill_jobs_dir(dest: Path, reference_jobs: Path) -> Path:
    """The hub's jobs: the plain jobs and the module jobs, warm and fresh; returns dest."""
    fill_plain_jobs_dir(dest, reference_jobs)
    for file_name, text in module_job_files().items():
        (dest / file_name).write_text(text, encoding="utf-8")
    return dest
