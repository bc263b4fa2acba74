"""Settings are declared once: the README's table is written from the declarations, every
Settings field and every variable the hub reads is declared, and any setting can come
from a file (``<NAME>_FILE``)."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.setting_list import DECLARED
from hub.settings import Settings, load_settings
from hub.settings_doc import settings_table, with_table
from shared.errors import BadRequest

ROOT = Path(__file__).resolve().parents[2]
# Fields filled from several settings (maxima: the three WEBJOB_MAX_* caps).
COMPOSED = {"maxima": {"max_runtime_ms", "max_memory_mb", "max_cpu_ms"}}


def test_the_readme_table_is_the_generated_one() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert with_table(readme) == readme, "run: python -m hub.settings_doc --write README.md"
    assert settings_table() in readme


def test_every_settings_field_is_declared_once() -> None:
    declared = [d.field for d in DECLARED if d.field]
    assert len(declared) == len(set(declared))
    expected = set()
    for field in dataclasses.fields(Settings):
        expected |= COMPOSED.get(field.name, {field.name})
    assert set(declared) == expected


def test_every_variable_the_hub_reads_is_declared() -> None:
    names = {d.name for d in DECLARED}
    pattern = re.compile(r"[\"'](WEB(?:HUB|JOB)_[A-Z0-9_]+)[\"']")
    read: set[str] = set()
    for source in (ROOT / "hub").rglob("*.py"):
        read |= set(pattern.findall(source.read_text(encoding="utf-8")))
    read = {name.removesuffix("_FILE") for name in read}
    assert read - names == set()


def test_a_setting_comes_from_its_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("from-a-file\n")
    token = tmp_path / "token"
    token.write_text("  token-in-a-file  ")
    settings_ = load_settings({"WEBHUB_HOME": str(tmp_path / "home"),
                               "WEBHUB_SECRET_FILE": str(secret),
                               "WEBHUB_SYSTEM_TOKEN_FILE": str(token),
                               "WEBJOB_MAX_CONCURRENT_FILE": str(_file(tmp_path, "3"))})
    assert settings_.secret == "from-a-file"
    assert settings_.system_token == "token-in-a-file"
    assert settings_.max_concurrent == 3
    assert not (tmp_path / "home" / "secret").exists()


def _file(folder: Path, text: str) -> Path:
    path = folder / "value"
    path.write_text(text)
    return path


def test_both_a_setting_and_its_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(BadRequest, match="WEBHUB_SECRET and WEBHUB_SECRET_FILE"):
        load_settings({"WEBHUB_HOME": str(tmp_path), "WEBHUB_SECRET": "a",
                       "WEBHUB_SECRET_FILE": str(_file(tmp_path, "b"))})


def test_an_unreadable_file_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(BadRequest, match="WEBJOB_DB_FILE: cannot read"):
        load_settings({"WEBHUB_HOME": str(tmp_path), "WEBJOB_DB_FILE": str(tmp_path / "no")})
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(BadRequest, match="not UTF-8"):
        load_settings({"WEBHUB_HOME": str(tmp_path), "WEBHUB_SECRET_FILE": str(binary)})
    big = tmp_path / "big"
    big.write_bytes(b"x" * 70_000)
    with pytest.raises(BadRequest, match="larger than"):
        load_settings({"WEBHUB_HOME": str(tmp_path), "WEBHUB_SECRET_FILE": str(big)})


@pytest.mark.parametrize("content", [b"", b"\n", b"  \t\r\n ", b"\xef\xbb\xbf",
                                     b"\xef\xbb\xbf \n"])
@pytest.mark.parametrize("name", ["WEBHUB_DB", "WEBHUB_SYSTEM_TOKEN", "WEBJOB_DB"])
def test_an_empty_file_is_refused_not_the_default(tmp_path: Path, name: str,
                                                  content: bytes) -> None:
    empty = tmp_path / "empty"
    empty.write_bytes(content)
    with pytest.raises(BadRequest, match=f"^{name}_FILE: {re.escape(str(empty))} is empty$"):
        load_settings({"WEBHUB_HOME": str(tmp_path / "home"), f"{name}_FILE": str(empty)})


def test_a_leading_byte_order_mark_is_not_part_of_the_value(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes("\ufeffwindows-secret\r\n".encode())
    settings_ = load_settings({"WEBHUB_HOME": str(tmp_path / "home"),
                               "WEBHUB_SECRET_FILE": str(secret)})
    assert settings_.secret == "windows-secret"


def test_a_symlink_to_a_file_is_followed(tmp_path: Path) -> None:
    target = _file(tmp_path, "linked-secret\n")
    link = tmp_path / "link"
    link.symlink_to(target)
    settings_ = load_settings({"WEBHUB_HOME": str(tmp_path / "home"),
                               "WEBHUB_SECRET_FILE": str(link)})
    assert settings_.secret == "linked-secret"


def test_what_is_not_a_regular_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: reading it would block the start for ever
    link_to_device = tmp_path / "zero"
    link_to_device.symlink_to("/dev/zero")
    for path in (fifo, Path("/dev/zero"), link_to_device, tmp_path):
        with pytest.raises(BadRequest,
                           match=f"^WEBHUB_SECRET_FILE: {re.escape(str(path))} is not a "
                                 "regular file$"):
            load_settings({"WEBHUB_HOME": str(tmp_path / "home"),
                           "WEBHUB_SECRET_FILE": str(path)})


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from([d.name for d in DECLARED if d.field and d.field != "home"]),
       value=st.text(max_size=40))
def test_any_text_in_any_setting_reads_or_is_refused_by_name(
        tmp_path_factory: pytest.TempPathFactory, name: str, value: str) -> None:
    home = tmp_path_factory.mktemp("home")
    try:
        load_settings({"WEBHUB_HOME": str(home), name: value})
    except BadRequest as exc:
        assert name in exc.message
