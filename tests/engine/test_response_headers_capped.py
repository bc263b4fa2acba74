"""A job's response headers are capped where they cross from the worker: 100 headers,
64 KB in all. Past it the run fails with JOB-001 saying so (a million headers held the
hub's event loop for seconds in Starlette and uvicorn)."""

from __future__ import annotations

from tests.engine.conftest import EngineHarness

MANY = ("const h = {}; for (let i = 0; i < Number(params.n); i++) h['x-h' + i] = 'v'\n"
        "return response.raw('ok', h, 200)")


def test_a_hundred_headers_pass(engine: EngineHarness) -> None:
    result = engine.run(MANY, params={"n": "100"})
    assert result.error is None and result.body == b"ok"


def test_more_fail_the_run_saying_so(engine: EngineHarness) -> None:
    result = engine.run(MANY, params={"n": "101"})
    assert result.error is not None and result.error.code == "JOB-001"
    assert "at most 100" in result.error.message


def test_64_kb_of_headers_at_most(engine: EngineHarness) -> None:
    result = engine.run("return response.raw('ok', { 'x-big': 'v'.repeat(70000) }, 200)")
    assert result.error is not None and "64 KB" in result.error.message
