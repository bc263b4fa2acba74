"""The hub's OpenAPI spec is made without a warning (warnings are errors here) and gives
every operation an id of its own: clients generated from it get one function each."""

from __future__ import annotations

import collections
from pathlib import Path

from hub.api.app import create_app
from hub.settings import load_settings
from tests.hub.conftest import TEST_SECRET


def test_every_operation_has_an_id_of_its_own(tmp_path: Path) -> None:
    app = create_app(load_settings({"WEBHUB_HOME": str(tmp_path), "WEBHUB_SECRET": TEST_SECRET}))
    spec = app.openapi()
    ids = collections.Counter(operation["operationId"] for path in spec["paths"].values()
                              for operation in path.values() if isinstance(operation, dict))
    assert [name for name, count in ids.items() if count > 1] == []
    run = spec["paths"]["/api/webjobs/{name}"]
    assert {run["get"]["operationId"], run["post"]["operationId"]} == {"run_job", "run_job_post"}
