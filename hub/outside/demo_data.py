"""The embedded business database's demo schema and data, seeded on first start so
the shipped demo jobs (vacancies, CSV export, PDF report) run out of the box."""

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
            return False
        db.executescript(_SCHEMA)
        db.executemany("INSERT INTO Department VALUES (?, ?)", _DEPARTMENTS)
        db.executemany("INSERT INTO Person VALUES (?, ?, ?, ?, ?)", _PEOPLE)
        db.executemany("INSERT INTO Vacancy VALUES (?, ?, ?, ?, ?, ?, ?)", _vacancies())
        db.executemany("INSERT INTO WebJobTemplate VALUES (?, ?)", _TEMPLATES)
    log.info("seeded the demo business database %s", path.name)
    return True
