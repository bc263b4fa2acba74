"""The embedded business database's demo schema and data, seeded on first start so
the shipped demo jobs (vacancies, CSV export, PDF report, the deep-link page) run out
of the box."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

log = logging.getLogger("webhub.demo")

_SCHEMA = """
CREATE TABLE Department (DepartmentID INTEGER PRIMARY KEY, Name TEXT NOT NULL);
CREATE TABLE Person (PersonID INTEGER PRIMARY KEY, Name TEXT NOT NULL, Email TEXT,
    DepartmentID INTEGER REFERENCES Department (DepartmentID), DateOfBirth TEXT);
CREATE TABLE Vacancy (VacancyID INTEGER PRIMARY KEY,
    DepartmentID INTEGER NOT NULL REFERENCES Department (DepartmentID),
    Position TEXT NOT NULL, Town TEXT NOT NULL, Status TEXT NOT NULL DEFAULT 'L',
    Salary NUMERIC, WhenCreated TEXT NOT NULL);
CREATE TABLE WebJobTemplate (Name TEXT PRIMARY KEY, Html TEXT NOT NULL);
"""
# Added after the first demo schema: created in older demo databases too (_top_up).
_INTEREST = """
CREATE TABLE IF NOT EXISTS VacancyInterest (InterestID INTEGER PRIMARY KEY,
    PersonID INTEGER NOT NULL REFERENCES Person (PersonID),
    VacancyID INTEGER NOT NULL REFERENCES Vacancy (VacancyID),
    WhenRecorded TEXT NOT NULL, UNIQUE (PersonID, VacancyID));
"""
_DEPARTMENTS = [(1, "Nursing"), (2, "Care homes"), (3, "Office & admin"), (4, "Warehouse")]
_PEOPLE = [
    (1, "Ann Lee", "ann@example.org", 1, "1990-04-12"),
    (2, "Bo Nakamura", "bo@example.org", 2, "1985-11-30"),
    (3, "Cara O'Neill", "cara@example.org", 3, "1998-02-03"),
]
_TOWNS = ["Leeds", "York", "Hull", "Bradford", "Harrogate"]
_POSITIONS = {1: ["Staff nurse", "Night nurse", "Ward sister"],
              2: ["Care assistant", "Senior carer", "Activities lead"],
              3: ["Receptionist", "Payroll clerk", "Office manager"],
              4: ["Picker", "Forklift driver", "Shift supervisor"]}
_TEMPLATES = [
    ("page", "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{{title}}"
             "</title></head><body><h1>{{title}}</h1>{{{body}}}</body></html>"),
]
# The public_deeplink job's pages: {{x}} is filled HTML-escaped, {{{x}}} as it is.
# The countdown script reads its deadline from a data- attribute, so no value is
# ever written into script text.
_DEEPLINK_TEMPLATES = [
    ("deeplink.layout", """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{{title}}</title>
  <style>
    body { font: 16px/1.5 system-ui, sans-serif; max-width: 36rem; margin: 3rem auto;
           padding: 0 1rem; color: #1d2430; }
    label { display: block; margin: .75rem 0 .25rem; }
    input[type=email], input[type=date] { width: 100%; padding: .5rem; box-sizing: border-box;
           border: 1px solid #b8c0cc; border-radius: 6px; }
    .choice { display: flex; gap: .5rem; align-items: baseline; }
    button { margin-top: 1rem; padding: .5rem 1rem; border: 0; border-radius: 6px;
             background: #2459d6; color: #fff; }
    .notice { padding: .5rem .75rem; border-radius: 6px; background: #fdecea; color: #8a1c12; }
    small { color: #5b6473; }
  </style>
</head>
<body>
  <h1>{{title}}</h1>
  {{{body}}}
  <script>
    (() => {
      const el = document.getElementById("expiry")
      if (!el) return
      const end = Number(el.dataset.expires) * 1000
      const tick = () => {
        const left = Math.max(0, Math.round((end - Date.now()) / 1000))
        el.textContent = left > 0
          ? `Time left to choose: ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`
          : "This page has expired: send the form to start again."
        if (left === 0) clearInterval(timer)
      }
      const timer = setInterval(tick, 1000)
      tick()
    })()
  </script>
</body>
</html>"""),
    ("deeplink.notice", '<p class="notice" id="notice" role="alert">{{text}}</p>'),
    ("deeplink.dob", """{{{notice}}}
<p>To see the vacancies we have for you, confirm who you are.</p>
<form method="post" id="dob-form">
  <input type="hidden" name="step" value="dob">
  <label for="email">Email address</label>
  <input type="email" id="email" name="email" value="{{email}}" required autocomplete="email">
  <label for="dob">Date of birth</label>
  <input type="date" id="dob" name="dob" required>
  <button type="submit">Continue</button>
</form>"""),
    ("deeplink.choose", """<p id="hello">Hello {{name}}. These vacancies are open in your
department.</p>
<form method="post" id="choose-form">
  <input type="hidden" name="step" value="choose">
  <input type="hidden" name="token" value="{{token}}">
  {{{choices}}}
  <button type="submit">I am interested</button>
</form>
<p><small id="expiry" data-expires="{{expires}}">This page is valid for {{minutes}}
minutes.</small></p>"""),
    ("deeplink.choice", """<label class="choice"><input type="radio" name="vacancy" value="{{id}}"
  required> {{position}}, {{town}} <small>&pound;{{salary}} a year</small></label>"""),
    ("deeplink.done", """<p id="done">Thank you, {{name}}. Your interest in
<strong>{{position}}</strong> in {{town}} is recorded{{again}}.</p>
<p><a href="?">Start again</a></p>"""),
    ("deeplink.nothing", """<p id="done">Thank you, {{name}}. There are no open vacancies in your
department just now.</p>"""),
]


def _vacancies() -> list[tuple[int, int, str, str, str, int, str]]:
    rows, number = [], 1
    for dept, positions in _POSITIONS.items():
        for i in range(12):
            status = "L" if i % 5 else "F"  # some are filled
            rows.append((number, dept, positions[i % 3], _TOWNS[(i + dept) % 5], status,
                         21000 + 750 * ((i * 7 + dept) % 11),
                         f"2026-{1 + i % 11:02d}-{1 + (i * 3) % 27:02d}T09:{i:02d}:00"))
            number += 1
    return rows


def seed_if_new(path: Path) -> bool:
    """Create and fill the demo tables in a business database that has none yet."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'Department'").fetchone():
            _top_up(db)
            return False
        db.executescript(_SCHEMA)
        db.executemany("INSERT INTO Department VALUES (?, ?)", _DEPARTMENTS)
        db.executemany("INSERT INTO Person VALUES (?, ?, ?, ?, ?)", _PEOPLE)
        db.executemany("INSERT INTO Vacancy VALUES (?, ?, ?, ?, ?, ?, ?)", _vacancies())
        db.executemany("INSERT INTO WebJobTemplate VALUES (?, ?)", _TEMPLATES)
        _top_up(db)
    log.info("seeded the demo business database %s", path.name)
    return True


def _top_up(db: sqlite3.Connection) -> None:
    """What later demo jobs need, added to a demo database seeded before they shipped.
    Only ever adds: a table or template already there is left as the owner has it."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'WebJobTemplate'").fetchone():
        return  # not a demo database after all
    db.executescript(_INTEREST)
    db.executemany("INSERT OR IGNORE INTO WebJobTemplate VALUES (?, ?)", _DEEPLINK_TEMPLATES)
