"""The sandbox's own machinery keeps working when a job rewrites typed-array
intrinsics: a redefined ``Uint8Array.prototype.length`` (or %TypedArray%'s) must not
make the outcome or console unreadable (it once hung the run to its runtime limit),
and a replaced ``Uint8Array[Symbol.species]`` must not reach UTF-8 encoding, the
console channel, sign/verify or crypto's random bytes. Under ``Isolation: fresh`` the
rewrite takes effect; under the warm engine it is refused (built-ins are frozen) and
the job goes on, and both must give the same answer."""

from __future__ import annotations

import pytest

from tests.engine.battery import ISOLATIONS
from tests.engine.conftest import EngineHarness, body_json

LENGTH_TRICKS = [
    "Object.defineProperty(Uint8Array.prototype, 'length', { get() { return 1e9 } })",
    "Object.defineProperty(Uint8Array.prototype, 'length', { value: -1 })",
    "Object.defineProperty(Object.getPrototypeOf(Uint8Array.prototype), 'length', "
    "{ get() { throw new Error('no length for you') } })",
]
SPECIES_TRICKS = [
    "Object.defineProperty(Uint8Array, Symbol.species, { get() { throw new Error('species') } })",
    "Object.defineProperty(Uint8Array, Symbol.species, { value: function () { return [] } })",
    "class Evil extends Uint8Array { constructor(...a) { super(...a); globalThis.caught = "
    "(globalThis.caught || 0) + 1 } }\n"
    "Object.defineProperty(Uint8Array, Symbol.species, { value: Evil })",
]
# Array literals spread through the array iterator: host code must never build from one.
ITERATOR_TRICKS = ["Array.prototype[Symbol.iterator] = function* () { yield 'bent' }"]
WORK = """console.log('logged ✓ after the trick')
const token = sign({ n: 1 })
const mac = crypto.hmac('sha256', 'key', 'The quick brown fox jumps over the lazy dog')
const few = crypto.getRandomValues(new Uint8Array(5))
return { ok: verify(token).n === 1, mac, uuid: crypto.randomUUID().length, few: few.byteLength,
         caught: globalThis.caught || 0, text: 'ünïcödé ✓', refused }"""
MAC = "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
REFUSED = {"fresh": None, "warm": "TypeError"}  # what the try around the trick caught


def tried(trick: str) -> str:
    return f"let refused = null\ntry {{\n{trick}\n}} catch (e) {{ refused = e.name }}\n"


@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("live", [False, True])
@pytest.mark.parametrize("trick", LENGTH_TRICKS + SPECIES_TRICKS + ITERATOR_TRICKS)
def test_rewritten_typed_arrays_break_only_the_job(engine: EngineHarness, trick: str,
                                                   live: bool, isolation: str) -> None:
    result = engine.run(tried(trick) + WORK, live=live, isolation=isolation)
    got = body_json(result)  # a run hung to its runtime limit fails here with JOB-003
    assert got == {"ok": True, "mac": MAC, "uuid": 36, "few": 5, "caught": 0,
                   "text": "ünïcödé ✓", "refused": REFUSED[isolation]}
    assert [line.message for line in result.logs] == ["logged ✓ after the trick"]
    if live:
        assert [line.message for line in result.streamed] == [  # type: ignore[attr-defined]
            "logged ✓ after the trick"]


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_large_outcome_is_read_whatever_length_says(engine: EngineHarness,
                                                      isolation: str) -> None:
    source = tried(LENGTH_TRICKS[0]) + "return [refused, 'x'.repeat(100000)]"
    result = engine.run(source, isolation=isolation)
    assert result.runtime_ms < 3000
    assert body_json(result) == [REFUSED[isolation], "x" * 100000]
