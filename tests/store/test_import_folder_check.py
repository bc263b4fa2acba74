"""The import of the jobs folder into the database store looks for the folder itself
(Catalog.import_files, the settings' side): the store is handed a folder that is there,
or not asked at all."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import cast

import pytest

from hub.engine.engine import Engine
from hub.services.catalog import Catalog
from hub.services.runs import JobRunner
from hub.store.base import JobStore
from shared.errors import BadRequest


class RecordingStore:
    """Only the part of a store the import reaches: what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[Path, bool, str | None]] = []

    def import_folder(self, folder: Path, *, overwrite: bool,
                      by: str | None) -> dict[str, list[str]]:
        self.asked.append((folder, overwrite, by))
        return {"copied": ["a"], "skipped": [], "replaced": []}


def _catalog(store: RecordingStore, files_dir: Path | None) -> Catalog:
    # The import uses neither runner nor engine.
    return Catalog(cast(JobStore, store), cast(JobRunner, None), cast(Engine, None),
                   files_dir=files_dir)


@pytest.mark.parametrize("where", ["missing", None])
def test_no_folder_is_refused_before_the_store_is_asked(tmp_path: Path,
                                                        where: str | None) -> None:
    store = RecordingStore()
    folder = tmp_path / "missing" if where else None
    with pytest.raises(BadRequest) as refused:
        asyncio.run(_catalog(store, folder).import_files(False, "owner"))
    assert refused.value.message == (f"There is no jobs folder to import from "
                                     f"({folder or 'not set'}; see WEBJOB_JOBS_DIR)")
    assert store.asked == []


def test_the_store_is_handed_the_folder(tmp_path: Path) -> None:
    store = RecordingStore()
    report = asyncio.run(_catalog(store, tmp_path).import_files(True, "owner"))
    assert report == {"copied": ["a"], "skipped": [], "replaced": []}
    assert store.asked == [(tmp_path, True, "owner")]
