"""The debugger's plain state and its thin Qt models, without views or a hub."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt
from pytestqt.modeltest import ModelTester

from console_app.debugger.requests import RequestRole, RequestsModel
from console_app.debugger.state import DebugState, Phase, VarNode, value_text
from console_app.debugger.variables import VariablesModel, VarRole
from shared.ndjson import DebugAnswer, DebugRequest, Failure, MetaData
from shared.wire import decode
from shared.wire.debug import DebugValue


def values(described: dict[str, Any]) -> dict[str, DebugValue]:
    """Descriptions as the console reads them off the wire (strictly: no key unknown)."""
    return {name: decode(DebugValue, value, strict=True) for name, value in described.items()}


# As the hub's debug runtime describes a scope (hub/engine/js/debug_runtime.js).
SCOPE = values({
    "later": {"type": "tdz", "value": "<tdz>"},
    "n": {"type": "number", "value": 3},
    "long": {"type": "string", "value": "x" * 200, "truncated": 1000},
    "obj": {"type": "object", "className": "Object", "size": 2, "handle": 1},
    "list": {"type": "array", "length": 3, "handle": 2},
    "empty": {"type": "array", "length": 0, "handle": 3},
    "nothing": {"type": "undefined"},
    "none": {"type": "null", "value": None},
    "boom": {"type": "object", "className": "RangeError", "size": 0, "handle": 5,
             "value": "too big"},
})
LEVEL = values({"a": {"type": "object", "className": "Thing", "size": 1, "handle": 4},
                "b": {"type": "boolean", "value": True}})


def test_value_text_says_tdz_truncated_and_sizes() -> None:
    assert value_text(SCOPE["later"]) == "<not initialised yet>"
    assert value_text(SCOPE["long"]).endswith('…" (truncated, 1000 chars)')
    assert value_text(SCOPE["obj"]) == "Object {2}"
    assert value_text(SCOPE["list"]) == "Array(3)"
    assert value_text(SCOPE["nothing"]) == "undefined"
    assert value_text(SCOPE["none"]) == "null"
    assert value_text(SCOPE["boom"]) == "RangeError: too big"
    assert value_text(DebugValue("boolean", False)) == "false"
    assert value_text(DebugValue("string", "hi")) == '"hi"'


def test_variables_model_expands_on_demand(qtmodeltester: ModelTester) -> None:
    asked: list[tuple[VarNode, int]] = []
    model = VariablesModel(lambda node, gen: asked.append((node, gen)))
    model.set_scope(SCOPE)
    assert [model.index(r, 0).data() for r in range(model.rowCount())] == list(SCOPE)
    later, obj, empty = model.index(0, 0), model.index(3, 0), model.index(5, 0)
    assert later.siblingAtColumn(1).data() == "<not initialised yet>"
    assert later.data(VarRole.TDZ) is True
    assert model.index(2, 0).data(VarRole.TRUNCATED) == 1000
    assert model.index(2, 1).data(Qt.ItemDataRole.FontRole).italic()
    assert model.hasChildren(obj) and not model.hasChildren(empty)
    assert model.canFetchMore(obj) and model.rowCount(obj) == 0
    model.fetchMore(obj)
    assert asked[-1][0].name == "obj" and obj.siblingAtColumn(1).data() == "loading…"
    assert not model.canFetchMore(obj)  # asked once, not again while it is on its way
    node, gen = asked[-1]
    assert model.expanded(node, gen, LEVEL, 3, None)
    assert model.rowCount(obj) == 3  # two entries and "… 3 more"
    assert model.index(0, 1, obj).data() == "Thing {1}"
    assert model.index(2, 0, obj).data() == "… 3 more"
    assert model.parent(model.index(0, 0, obj)) == obj
    qtmodeltester.check(model)


def test_answers_from_an_older_pause_are_dropped() -> None:
    asked: list[tuple[VarNode, int]] = []
    model = VariablesModel(lambda node, gen: asked.append((node, gen)))
    model.set_scope(SCOPE)
    model.fetchMore(model.index(3, 0))
    node, gen = asked[-1]
    model.set_scope(values({"n": {"type": "number", "value": 4}}))  # the run stepped on
    assert not model.expanded(node, gen, LEVEL, 0, None)
    assert model.rowCount() == 1


def test_nothing_expands_while_running_and_failures_show(qtmodeltester: ModelTester) -> None:
    asked: list[tuple[VarNode, int]] = []
    model = VariablesModel(lambda node, gen: asked.append((node, gen)))
    model.set_scope(SCOPE)
    model.set_paused(False)
    assert not model.canFetchMore(model.index(3, 0))
    model.set_paused(True)
    model.fetchMore(model.index(4, 0))
    model.expand_failed(*asked[-1], "HUB-009 not paused")
    list_index = model.index(4, 0)
    assert list_index.siblingAtColumn(1).data() == "<HUB-009 not paused>"
    qtmodeltester.check(model)


def test_the_model_fills_itself_when_the_tester_fetches(qtmodeltester: ModelTester) -> None:
    """A model whose expansion answers at once, as fetchMore-driven views expect."""
    model: VariablesModel

    def answer(node: VarNode, gen: int) -> None:
        model.expanded(node, gen, values({"x": {"type": "number", "value": 1}}), 0, None)

    model = VariablesModel(answer)
    model.set_scope(SCOPE)
    qtmodeltester.check(model, force_py=True)
    obj = model.index(3, 0)
    model.fetchMore(obj)
    assert model.index(0, 0, obj).data() == "x"
    qtmodeltester.check(model, force_py=True)


def test_requests_model_and_state(qtmodeltester: ModelTester) -> None:
    state = DebugState(live=True)
    model = RequestsModel(state.requests)
    model.append(state.request(DebugRequest("j1", "GET", "/api/webjobs/p")))
    assert state.phase == Phase.RUNNING
    model.append(state.request(DebugRequest("j2", "POST", "/api/webjobs/p")))
    assert model.index(1, 2).data() == "waiting…" and model.index(1, 0).data(
        RequestRole.STATUS) is None
    model.row_changed(state.answered(DebugAnswer("j1", 200, True)) or 0)
    row = state.answered(DebugAnswer("j2", 500, False, "JOB-001"))
    assert row == 1 and state.phase == Phase.WAITING
    assert model.index(0, 2).data() == "200" and model.index(1, 2).data() == "500 JOB-001"
    assert model.index(1, 0).data(RequestRole.SUCCESS) is False
    assert model.rowCount(QModelIndex()) == 2
    qtmodeltester.check(model)


def test_outcome_and_result_text() -> None:
    state = DebugState()
    state.meta, state.result = MetaData(type="json", runtime=5), b'{"a":1}'
    assert state.outcome_text() == "Finished: json result, HTTP 200, 5 ms"
    assert state.result_text() == '{\n  "a": 1\n}'
    state.failure = Failure(error="Stopped by the debugger at line 2", code="JOB-001", line=2)
    assert state.outcome_text().startswith("Failed JOB-001: Stopped by the debugger")
    assert state.toggle_breakpoint(4) == {4} and state.toggle_breakpoint(4) == set()
