"""The sandbox's JavaScript as plain code (hub/engine/scripts.py lists it): every file
is code an editor, a linter and these tests see (none kept as text in a comment, none
compiled from text), every API works after the one evaluation production does, and
the package ships every file."""

from __future__ import annotations

import glob
import hashlib
import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from py_mini_racer import MiniRacer

from hub.engine import scripts
from hub.engine.instrument import ACORN_BUILD
from tests.engine.conftest import EngineHarness, body_json

# One use of each API and hidden helper; the expected answers are below.
USES_EVERY_API = """[new URL('https://example.org/a?b=1#c').searchParams.get('b'),
  new URLSearchParams('x=1&x=2').getAll('x'), Buffer.from('hé').toString('hex'),
  Buffer.from('aOk', 'base64').toString('hex'),
  new TextDecoder().decode(new TextEncoder().encode('ünï')), atob(btoa('ok')),
  structuredClone(new Map([[1, {d: 2}]])).get(1).d,
  (() => { const c = new AbortController(); c.abort('why'); return c.signal.reason; })(),
  new DOMException('m', 'AbortError').code, typeof new EventTarget().addEventListener,
  crypto.hash('sha1', 'abc'), crypto.randomUUID().length]"""
EVERY_API_GIVES = ["1", ["1", "2"], "68c3a9", "68e9", "ünï", "ok", 2, "why", 20, "function",
                   "a9993e364706816aba3e25717850c26c9cd0d89d", 36]
HIDDEN = ["__webjob_web", "__webjob_bytes", "__webjob_responses", "__webjob_crypto",
          "__webjob_library", "__webjob_library_text"]


def test_every_api_and_helper_works_after_one_eval_of_the_web_apis() -> None:
    with MiniRacer() as mr:
        mr.eval(scripts.web_apis_source())
        mr.eval("globalThis.crypto = __webjob_crypto.crypto")
        assert json.loads(str(mr.eval(f"JSON.stringify({USES_EVERY_API})"))) == EVERY_API_GIVES
        helpers = json.loads(str(mr.eval("""(() => {
            const b = __webjob_bytes, r = __webjob_responses, u = b.utf8Encode('hé ✓');
            const file = r.response.file(u, 'x.bin');
            return JSON.stringify([b.base64url(u), b.base64(u),
                Array.from(b.base64Decode('aMOpIOKckw')),
                b.utf8Decode(b.base64Decode('aMOpIOKckw==')), b.base64Decode('not base64!'),
                Array.from(b.sha256(u).slice(0, 4)), b.hmacSha256(u, u).length,
                r.isResponse(file), file.body, file.encoding, typeof __webjob_web]);
        })()""")))
    data = "hé ✓".encode()
    assert helpers == ["aMOpIOKckw", "aMOpIOKckw==", list(data), "hé ✓", None,
                       list(hashlib.sha256(data).digest()[:4]), 32, True, "aMOpIOKckw",
                       "base64url", "undefined"]


@pytest.mark.parametrize("isolation", ["warm", "fresh"])
def test_every_api_works_in_a_run_and_no_hand_over_global_is_left(
        engine: EngineHarness, isolation: str) -> None:
    source = f"return [{USES_EVERY_API}, {json.dumps(HIDDEN)}.map((k) => typeof globalThis[k])]"
    for _ in range(2):  # the second run on a warm worker, too
        uses, hidden = body_json(engine.run(source, isolation=isolation))
        assert uses == EVERY_API_GIVES
        assert hidden == ["undefined"] * len(HIDDEN)


# ---- what the files are made of ----------------------------------------------------------

# For each file: the lines of block comments whose text parses as code with a
# declaration, a function or a return (prose does not parse; `/* */` has none), and of
# names that compile text (Function and eval, other than `Function.prototype`).
CHECKER = r"""
globalThis.checkPlain = (text) => {
  const CODE = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression',
    'ClassDeclaration', 'ClassExpression', 'VariableDeclaration', 'ReturnStatement']);
  const walk = (node, visit, parent = null, key = null) => {
    if (Array.isArray(node)) { for (const n of node) walk(n, visit, parent, key); return; }
    if (!node || typeof node.type !== 'string') return;
    visit(node, parent, key);
    for (const k of Object.keys(node)) if (k !== 'loc') walk(node[k], visit, node, k);
  };
  const comments = [];
  const ast = acorn.parse(text, { ecmaVersion: 'latest', sourceType: 'script', locations: true,
    onComment: comments });
  const codeInComments = [];
  for (const c of comments) {
    if (c.type !== 'Block') continue;
    let inner;
    const options = { ecmaVersion: 'latest', allowReturnOutsideFunction: true };
    try { inner = acorn.parse(c.value, options); } catch { continue; }
    let code = false;
    walk(inner, (n) => { code = code || CODE.has(n.type); });
    if (code) codeInComments.push(c.loc.start.line);
  }
  const compilers = [];
  walk(ast, (n, parent, key) => {
    if (n.type !== 'Identifier' || (n.name !== 'Function' && n.name !== 'eval')) return;
    const member = parent && parent.type === 'MemberExpression' && !parent.computed;
    if (member && key === 'property') return;  // x.eval is a property, not the global
    if (parent && parent.type === 'Property' && key === 'key' && !parent.computed) return;
    if (member && key === 'object' && parent.property.name === 'prototype') return;
    compilers.push(n.loc.start.line);
  });
  return JSON.stringify({ codeInComments, compilers });
};
"""


@pytest.fixture(scope="module")
def acorn() -> Iterator[MiniRacer]:
    mr = MiniRacer()
    mr.eval(ACORN_BUILD.read_text(encoding="utf-8"))  # missing: run make setup
    mr.eval(CHECKER)
    yield mr
    mr.close()


def check_plain(acorn: MiniRacer, text: str) -> dict[str, Any]:
    acorn.eval(f"globalThis.text = {json.dumps(text)}")
    got: dict[str, Any] = json.loads(str(acorn.eval("checkPlain(globalThis.text)")))
    return got


def test_the_checks_catch_code_in_a_comment_and_text_compiled(acorn: MiniRacer) -> None:
    # The shapes the sandbox files used to have (a chunk kept as text, compiled on use).
    old = """(() => {
  /* a comment in prose, and an empty one: */ /* */
  const SRC = {};
  SRC.base = () => {/*'use strict';
  const { a } = env;
  return { a };
  */};
  const Fn = Function;
  const chunk = (k) => Fn('env', k)({});
  const again = (t) => eval(t), proto = Function.prototype, o = { eval: 1, Function: 2 };
})();"""
    assert check_plain(acorn, old) == {"codeInComments": [4], "compilers": [8, 10]}


@pytest.mark.parametrize("name", scripts.SANDBOX_FILES)
def test_no_sandbox_file_keeps_code_in_a_comment_or_compiles_text(acorn: MiniRacer,
                                                                  name: str) -> None:
    assert check_plain(acorn, scripts.file_text(name)) == {"codeInComments": [], "compilers": []}


def test_the_package_ships_every_sandbox_file() -> None:
    root = Path(__file__).parents[2]
    pyproject = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))
    shipped = {path for pattern in pyproject["tool"]["setuptools"]["package-data"]["hub.engine"]
               for path in glob.glob(pattern, root_dir=root / "hub/engine")}  # as setuptools does
    assert {f"js/{name}" for name in scripts.SANDBOX_FILES} - shipped == set()


def test_the_sandbox_is_the_files_in_order() -> None:
    fresh = scripts.sandbox_source(scripts.FRESH_HOST)
    texts = [scripts.file_text(name) for name in (*scripts.WEB_APIS, *scripts.MACHINERY)]
    assert fresh == scripts.JOIN.join([*texts, scripts.file_text(scripts.FRESH_HOST)])
    assert scripts.web_apis_source() == scripts.JOIN.join(texts[:len(scripts.WEB_APIS)])
    with pytest.raises(ValueError, match="not a sandbox host"):
        scripts.sandbox_source("prelude.js")
