"""The shipped demo jobs run out of the box on the seeded embedded database."""

from __future__ import annotations

import csv
import io
import zlib

import httpx

from tests.hub.conftest import AUTH, HubProcess

PLAIN = {**AUTH, "Accept": "application/json"}


def test_vacancies_by_department(client: httpx.Client) -> None:
    out = client.get("/api/webjobs/vacancies", params={"department": "1"}, headers=PLAIN).json()
    assert out["success"] is True and out["department"] == "1"
    assert out["count"] == len(out["vacancies"]) > 0
    first = out["vacancies"][0]
    assert set(first) == {"VacancyID", "Position", "Town", "Salary", "WhenCreated"}
    dates = [v["WhenCreated"] for v in out["vacancies"]]
    assert dates == sorted(dates, reverse=True)  # newest first
    missing = client.get("/api/webjobs/vacancies", headers=PLAIN)
    assert missing.status_code == 400 and missing.json() == {"error": "department is required"}


def test_vacancies_csv_export(client: httpx.Client) -> None:
    resp = client.get("/api/webjobs/vacancies_csv", headers=PLAIN)
    assert resp.headers["content-type"].startswith("text/csv")
    assert 'filename="vacancies.csv"' in resp.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(resp.text)))
    assert rows and set(rows[0]) == {"VacancyID", "Department", "Position", "Town", "Salary",
                                     "WhenCreated"}


def test_vacancies_pdf_report(client: httpx.Client, hub: HubProcess) -> None:
    resp = client.get("/api/webjobs/vacancies_pdf", headers=PLAIN)
    assert resp.status_code == 200 and resp.headers["content-type"] == "application/pdf"
    data = resp.content
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    assert data.count(b"/Type /Page") >= 5  # four departments, a page each, plus /Pages
    text = b"".join(zlib.decompress(part.split(b"stream\n", 1)[1].split(b"\nendstream")[0])
                    for part in data.split(b"endobj")
                    if b"/FlateDecode" in part and b"stream\n" in part)
    assert b"Live vacancies: Nursing".hex().upper().encode() in text
