"""The README's error table is the one written from shared/errors.py, and every code a
class carries is listed once, with its status and a meaning."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.doc_tables import replace_between
from shared.error_doc import BEGIN, END, error_table, main
from shared.errors import WebJobsError, known_error_classes

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_lists_the_codes_of_the_classes() -> None:
    readme = README.read_text(encoding="utf-8")
    assert replace_between(readme, BEGIN, END, error_table()) == readme, \
        "run: python -m shared.error_doc --write README.md"


def test_every_code_is_listed_once_with_a_meaning_of_its_own() -> None:
    classes = known_error_classes()
    codes = [cls.code for cls in classes]
    assert len(codes) == len(set(codes))
    for cls in classes:
        assert cls.meaning and cls.meaning != WebJobsError.meaning, cls
        assert f"| `{cls.code}` | {cls.http_status} |" in error_table()


def test_the_markers_must_be_there() -> None:
    with pytest.raises(ValueError, match="markers"):
        replace_between("no table here", BEGIN, END, "x")


def test_the_table_is_printed_or_written(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert capsys.readouterr().out.strip() == error_table()
    target = tmp_path / "README.md"
    target.write_text(f"before\n{BEGIN}\nold\n{END}\nafter\n", encoding="utf-8")
    assert main(["--write", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == f"before\n{BEGIN}\n{error_table()}\n{END}\nafter\n"
