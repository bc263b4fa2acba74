"""``secrets.get`` in a run and the masking of a run's secret values by the engine:
only declared names are readable, a missing or undeclared one throws an Error naming
it (never a value), and every value is ``***`` in console lines (live and kept),
error messages and a debugger's variable views. The job's own answer is not masked."""

from __future__ import annotations

import json
from typing import Any

from hub.engine.redaction import Redactor
from tests.engine.conftest import EngineHarness, body_json

VALUE = "whsec_Zx9-very-secret"
OTHER = 'q"uote\\d-value'


def run(engine: EngineHarness, source: str, **kw: Any) -> Any:
    kw.setdefault("secret_names", ("hook", "crm"))
    kw.setdefault("secrets", {"hook": VALUE})
    return engine.run(source, **kw)


def test_get_returns_a_declared_value(engine: EngineHarness) -> None:
    result = run(engine, "return { value: secrets.get('hook'), frozen: Object.isFrozen(secrets) }")
    # The answer is the job's own business: what it returns is not masked.
    assert body_json(result) == {"value": VALUE, "frozen": True}


def test_undeclared_and_missing_names_throw_naming_the_secret(engine: EngineHarness) -> None:
    undeclared = run(engine, "return secrets.get('stripe')")
    assert not undeclared.ok and undeclared.error is not None
    assert undeclared.error.code == "JOB-001"
    assert "Secret 'stripe' is not declared" in undeclared.error.message
    missing = run(engine, "return secrets.get('crm')")
    assert missing.error is not None and "Secret 'crm' is not set" in missing.error.message
    caught = run(engine, "try { secrets.get('nope') } catch (e) { return e.message }")
    assert "'nope'" in body_json(caught)


def test_a_job_without_a_declaration_reads_nothing(engine: EngineHarness) -> None:
    result = engine.run("return secrets.get('hook')")
    assert result.error is not None and "not declared" in result.error.message


def test_the_spec_and_values_are_not_reachable_otherwise(engine: EngineHarness) -> None:
    source = """const seen = JSON.stringify([Object.keys(globalThis), request, params, limits])
return { leaked: seen.includes(secrets.get('hook')), keys: Object.keys(secrets) }"""
    assert body_json(run(engine, source)) == {"leaked": False, "keys": ["get"]}


def test_console_lines_are_masked_live_and_kept(engine: EngineHarness) -> None:
    source = """const v = secrets.get('hook')
console.log('the value is', v)
console.warn(JSON.stringify({ v }))
console.log('x'.repeat(16384 - 5) + v)
return 1"""
    result = run(engine, source, live=True)
    assert result.ok
    for lines in (result.logs, result.streamed):  # type: ignore[attr-defined]
        text = json.dumps([line.message for line in lines])
        assert "whsec" not in text and "Zx9" not in text
        assert lines[0].message == "the value is ***"
        assert lines[1].message == '{"v":"***"}'
        assert lines[2].message == "x" * 16379 + "*** … [16400 chars]"


def test_error_messages_are_masked(engine: EngineHarness) -> None:
    result = run(engine, "throw new Error('bad key ' + secrets.get('hook'))")
    assert result.error is not None
    assert "whsec" not in result.error.message and "bad key ***" in result.error.message
    reported = run(engine, "return { success: false, error: 'no: ' + secrets.get('hook') }")
    assert reported.error is not None and reported.error.message == "no: ***"


def test_json_escaped_forms_are_masked_too() -> None:
    mask = Redactor([OTHER])
    assert mask.text(json.dumps({"k": OTHER})) == '{"k": "***"}'
    assert mask.text(f"plain {OTHER}!") == "plain ***!"
    assert mask.cut("cut here: q\"uo") == "cut here: ***"
    assert mask.deep({"a": [OTHER, 1, {OTHER: None}]}) == {"a": ["***", 1, {"***": None}]}
    assert not Redactor([""]) and Redactor([""]).text("x") == "x"


def test_the_header_declares_names() -> None:
    from shared.header import parse_header

    header = parse_header("/*\nSecrets: stripe_signing, crm.api  x-y\nsecrets: crm.api, _z\n"
                          "Secrets: 9bad, bad name!\n*/\nreturn 1")
    assert header.secrets == ("stripe_signing", "crm.api", "x-y", "_z", "bad")
    assert [w.split("'")[1] for w in header.warnings] == ["9bad", "name!"]
    assert parse_header("return 1").secrets == ()
