"""Properties of the strict-mode check: it never fails on any text, finds nothing in
code that runs in strict mode, and finds an undeclared assignment wherever it is put.

Programs are drawn from a small grammar of the constructs that declare names
(let/const/var, functions, arrows, params, classes, catch, loop heads, blocks,
switch, labels, destructuring); every name read or assigned is one the grammar has
declared. V8 then runs each program in strict mode, so "runs in strict mode" is
V8's verdict, not the generator's."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from py_mini_racer import MiniRacer

from hub.engine.strictness import check, strict_findings

JOB_GLOBALS = ("params", "request", "limits", "console", "response", "db", "secrets")
INJECTED = "injected_name"


@dataclass
class Scope:
    assignable: list[str]
    readable: list[str]


@dataclass
class Gen:
    """Draws a program line by line; ``inject_at`` is the statement, counted in the
    order they are drawn, before which ``injected_name = 1`` goes (-1: nowhere)."""

    draw: st.DrawFn
    inject_at: int = -1
    lines: list[str] = field(default_factory=list)
    injected_line: int | None = None
    _names: itertools.count[int] = field(default_factory=itertools.count)
    _statements: int = 0

    def name(self) -> str:
        return f"v{next(self._names)}"

    def expr(self, scope: Scope) -> str:
        kinds = ["1", "'t\\x41\\0'", "0.5", "0o7", "[1, 2]", "({k: 1})"]
        choice = self.draw(st.sampled_from(kinds + scope.readable * 2))
        return choice if self.draw(st.booleans()) else f"({choice}, 2)"

    def emit(self, text: str, depth: int, slot: bool = True) -> None:
        """``slot``: a statement could go before this line (not before a ``catch``,
        a ``case`` or a class member)."""
        if slot and self._statements == self.inject_at:
            self.lines.append("  " * depth + f"{INJECTED} = 1;")
            self.injected_line = len(self.lines)
        self._statements += slot
        self.lines.append("  " * depth + text)

    def block(self, scope: Scope, depth: int) -> None:
        inner = Scope(list(scope.assignable), list(scope.readable))
        for _ in range(self.draw(st.integers(0 if depth else 1, 4 if depth < 3 else 1))):
            self.statement(inner, depth)

    def declare(self, scope: Scope, name: str, assignable: bool = True) -> None:
        scope.readable.append(name)
        if assignable:
            scope.assignable.append(name)

    def statement(self, scope: Scope, depth: int) -> None:
        kinds = ["let", "const", "var", "assign"]
        if depth < 3:
            kinds += ["block", "if", "for", "forof", "function", "arrow", "try", "label",
                      "switch", "class", "hoisted", "called_early"]
        kind = self.draw(st.sampled_from(kinds))
        getattr(self, f"_{kind}")(scope, depth)

    def _let(self, scope: Scope, depth: int) -> None:
        name = self.name()
        self.emit(f"let {name} = {self.expr(scope)};", depth)
        self.declare(scope, name)

    def _const(self, scope: Scope, depth: int) -> None:
        a, b = self.name(), self.name()
        self.emit(f"const [{a}, {{k: {b} = 1}} = {{}}] = [{self.expr(scope)}];", depth)
        self.declare(scope, a, assignable=False)
        self.declare(scope, b, assignable=False)

    def _var(self, scope: Scope, depth: int) -> None:
        name = self.name()
        self.emit(f"var {name} = {self.expr(scope)};", depth)
        self.declare(scope, name)

    def _assign(self, scope: Scope, depth: int) -> None:
        target = self.draw(st.sampled_from(scope.assignable))
        other = self.draw(st.sampled_from(scope.assignable))
        forms = [f"{target} = {self.expr(scope)};", f"{target} += 1;", f"{target}++;",
                 f"[{target}, {other}] = [1, 2];", f"({{k: {target}}} = {{k: 3}});"]
        self.emit(self.draw(st.sampled_from(forms)), depth)

    def _nested(self, head: str, scope: Scope, depth: int, *names: str,
                fixed: tuple[str, ...] = (), slot: bool = True) -> None:
        """A braced body after ``head``, where ``names`` are assignable and ``fixed``
        only readable."""
        self.emit(head + " {", depth, slot)
        inner = Scope(list(scope.assignable), list(scope.readable))
        for name in names:
            self.declare(inner, name)
        for name in fixed:
            self.declare(inner, name, assignable=False)
        self.block(inner, depth + 1)
        self.emit("}", depth)

    def _block(self, scope: Scope, depth: int) -> None:
        self._nested("", scope, depth)

    def _if(self, scope: Scope, depth: int) -> None:
        self._nested(f"if ({self.expr(scope)})", scope, depth)

    def _for(self, scope: Scope, depth: int) -> None:
        i = self.name()
        # The counter is only read in the body: assigning it could loop for ever.
        self._nested(f"for (let {i} = 0; {i} < 2; {i}++)", scope, depth, fixed=(i,))

    def _forof(self, scope: Scope, depth: int) -> None:
        k = self.name()
        self._nested(f"for (const {k} of [1, 2])", scope, depth, fixed=(k,))

    def _function(self, scope: Scope, depth: int) -> None:
        name, p, q = self.name(), self.name(), self.name()
        # Readable in its own body; never assigned, so that the call below calls it.
        self.declare(scope, name, assignable=False)
        self._nested(f"function {name}({p}, {{{q}}} = {{}})", scope, depth, p, q)
        self.emit(f"{name}(1);", depth)

    def _hoisted(self, scope: Scope, depth: int) -> None:
        """A ``var`` assigned before (and outside) the block that declares it."""
        name = self.name()
        self.emit(f"{name} = {self.expr(scope)};", depth)
        self.emit("if (1) {", depth)
        self.emit(f"var {name} = 1;", depth + 1)
        self.emit("}", depth)
        self.declare(scope, name)

    def _called_early(self, scope: Scope, depth: int) -> None:
        """A function called before its declaration, further down the same block."""
        name, p = self.name(), self.name()
        self.emit(f"{name}(2);", depth)
        self._nested(f"function {name}({p})", scope, depth, p)
        self.declare(scope, name, assignable=False)

    def _arrow(self, scope: Scope, depth: int) -> None:
        name, p = self.name(), self.name()
        self._nested(f"const {name} = ({p} = {self.expr(scope)}) =>", scope, depth, p)
        self.emit(f"{name}();", depth)
        self.declare(scope, name, assignable=False)

    def _try(self, scope: Scope, depth: int) -> None:
        e = self.name()
        self._nested("try", scope, depth)
        self._nested(f"catch ({e})", scope, depth, e, slot=False)

    def _label(self, scope: Scope, depth: int) -> None:
        label = self.name()
        self._nested(f"{label}:", scope, depth)
        self.emit(f"{label}: for (;;) {{ break {label}; }}", depth)

    def _switch(self, scope: Scope, depth: int) -> None:
        self.emit(f"switch ({self.expr(scope)}) {{", depth)
        self._nested("case 1:", scope, depth + 1, slot=False)
        self.emit("default:", depth + 1, slot=False)
        self.block(scope, depth + 2)
        self.emit("}", depth)

    def _class(self, scope: Scope, depth: int) -> None:
        name, m = self.name(), self.name()
        self.emit(f"class {name} {{", depth)
        self._nested(f"static m({m})", scope, depth + 1, m, slot=False)
        self._nested("static", scope, depth + 1, slot=False)
        self.emit("}", depth, slot=False)
        self.emit(f"{name}.m(1);", depth)
        self.declare(scope, name, assignable=False)


@st.composite
def programs(draw: st.DrawFn, inject: bool = False) -> Gen:
    gen = Gen(draw, inject_at=draw(st.integers(0, 30)) if inject else -1)
    gen.block(Scope(list(JOB_GLOBALS), list(JOB_GLOBALS)), 0)
    return gen


_racer: MiniRacer | None = None


def runs_strict(body: str) -> str | None:
    """None when ``body`` runs in strict mode with the job globals defined; else the error."""
    global _racer
    if _racer is None:
        _racer = MiniRacer()
    wrapped = (f"(function ({', '.join(JOB_GLOBALS)}) {{ 'use strict';\n{body}\n}})"
               f"({', '.join('{}' for _ in JOB_GLOBALS)}); 'ran'")
    try:
        _racer.eval(wrapped)
    except Exception as exc:  # a test helper: any failure is the answer
        return str(exc)
    return None


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_is_checked_without_raising(text: str) -> None:
    for source in (text, f"x = 1\n{text}", f"let a = `{text}`"):
        answer = check(source)
        assert answer["ok"] in (True, False)
        if answer["ok"]:
            for f in answer["findings"]:
                assert f["line"] >= 1 and f["column"] >= 1 and f["message"]
        assert isinstance(strict_findings(source), tuple)


@settings(max_examples=200, deadline=None)
@given(programs())
def test_code_that_runs_in_strict_mode_has_no_findings(gen: Gen) -> None:
    body = "\n".join(gen.lines)
    assert runs_strict(body) is None, body
    assert check(body) == {"ok": True, "findings": [], "more": 0}, body


@settings(max_examples=200, deadline=None)
@given(programs(inject=True))
def test_an_undeclared_assignment_is_found_wherever_it_is(gen: Gen) -> None:
    assume(gen.injected_line is not None)
    body = "\n".join(gen.lines)
    findings = strict_findings(body)
    assert [(f.line, f.kind) for f in findings] == [(gen.injected_line, "undeclared")], body
    assert INJECTED in findings[0].message
