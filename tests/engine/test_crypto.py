"""The job's ``crypto`` global (hub/engine/js/crypto.js), run through the engine:
digests and HMACs against published vectors (FIPS 180 examples, RFC 4231, RFC 2202),
encodings, bytes inputs, the constant-time compare and the randomness."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.engine.conftest import EngineHarness, body_json

ABC_448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
ABC_896 = ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
           "klmnopqrlmnopqrsmnopqrstnopqrstu")

# FIPS 180-2 appendix examples (and the empty message).
DIGESTS = [
    ("sha1", "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
    ("sha1", "", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
    ("sha1", ABC_448, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
    ("sha256", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    ("sha256", "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("sha256", ABC_448, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ("sha512", "abc", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                      "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
    ("sha512", "", "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
                   "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"),
    ("sha512", ABC_448, "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c335"
                        "96fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445"),
    ("sha512", ABC_896, "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
                        "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"),
]

LONG_KEY = "aa" * 131
CASE6 = b"Test Using Larger Than Block-Size Key - Hash Key First"
CASE7 = (b"This is a test using a larger than block-size key and a larger than block-size data."
         b" The key needs to be hashed before being used by the HMAC algorithm.")
# (case, key hex, data hex, HMAC-SHA-256, HMAC-SHA-512) from RFC 4231 section 4.
RFC4231 = [
    (1, "0b" * 20, b"Hi There".hex(),
     "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
     "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cde"
     "daa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"),
    (2, b"Jefe".hex(), b"what do ya want for nothing?".hex(),
     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
     "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
     "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"),
    (3, "aa" * 20, "dd" * 50,
     "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
     "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39"
     "bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb"),
    (4, bytes(range(1, 26)).hex(), "cd" * 50,
     "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
     "b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3db"
     "a91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd"),
    (6, LONG_KEY, CASE6.hex(),
     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
     "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f352"
     "6b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"),
    (7, LONG_KEY, CASE7.hex(),
     "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
     "e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944"
     "b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58"),
]


def run(engine: EngineHarness, source: str) -> Any:
    return body_json(engine.run(source))


def error_of(engine: EngineHarness, source: str) -> str:
    result = engine.run(source)
    assert not result.ok and result.error is not None
    return result.error.message


def test_digests_match_fips_180_examples(engine: EngineHarness) -> None:
    cases = [[alg, text] for alg, text, _ in DIGESTS]
    got = run(engine, f"return {cases!r}.map(([a, t]) => crypto.hash(a, t))")
    assert got == [digest for _, _, digest in DIGESTS]


def test_hmac_matches_rfc_4231(engine: EngineHarness) -> None:
    cases = [[key, data] for _, key, data, _, _ in RFC4231]
    got = run(engine, f"""const hex = (h) => Buffer.from(h, 'hex')
return {cases!r}.map(([k, d]) => [crypto.hmac('sha256', hex(k), hex(d)),
  crypto.hmac('sha512', hex(k), hex(d))])""")
    assert got == [[s256, s512] for _, _, _, s256, s512 in RFC4231]


def test_hmac_sha256_truncated_rfc_4231_case_5(engine: EngineHarness) -> None:
    got = run(engine, "return crypto.hmac('sha256', Buffer.alloc(20, 0x0c), "
                      "'Test With Truncation').slice(0, 32)")
    assert got == "a3b6167473100ee06e0c796c2955552b"


def test_hmac_sha1_matches_rfc_2202(engine: EngineHarness) -> None:
    got = run(engine, """return [crypto.hmac('sha1', Buffer.alloc(20, 0x0b), 'Hi There'),
  crypto.hmac('sha1', 'Jefe', 'what do ya want for nothing?')]""")
    assert got == ["b617318655057264e28bc0b6fb378c8ef146be00",
                   "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"]


def test_base64_output_and_algorithm_names(engine: EngineHarness) -> None:
    got = run(engine, """return [crypto.hash('sha256', 'abc', 'base64'),
  crypto.hmac('sha1', 'Jefe', 'what do ya want for nothing?', 'base64'),
  crypto.hash('SHA256', 'abc', 'hex'), crypto.hash('sha1', '', 'base64')]""")
    assert got == ["ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=", "7/zfauXrL6LSdBbV8YTfnCWafHk=",
                   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                   "2jmj7l5rSw0yVb/vlWAYkK/YBwk="]


def test_bytes_and_text_inputs_agree(engine: EngineHarness) -> None:
    got = run(engine, """const text = 'héllo wörld ✓ 😀'
const enc = new TextEncoder().encode(text)
return [crypto.hash('sha256', text), crypto.hash('sha256', enc),
  crypto.hash('sha256', Buffer.from(text)), crypto.hash('sha256', enc.buffer),
  crypto.hash('sha256', new DataView(enc.buffer)),
  crypto.hmac('sha512', Buffer.from('key'), text), crypto.hmac('sha512', 'key', enc),
  crypto.hash('sha1', new Uint8Array([0, 1, 2, 255]).subarray(1, 3))]""")
    import hashlib
    import hmac

    text = "héllo wörld ✓ 😀".encode()
    assert got[:5] == [hashlib.sha256(text).hexdigest()] * 5
    assert got[5:7] == [hmac.new(b"key", text, "sha512").hexdigest()] * 2
    assert got[7] == hashlib.sha1(bytes([1, 2])).hexdigest()


@pytest.mark.parametrize(("call", "needle"), [
    ("crypto.hash('md5', 'x')", "crypto.hash: algorithm must be 'sha1', 'sha256' or 'sha512'"),
    ("crypto.hmac(256, 'k', 'x')", "crypto.hmac: algorithm"),
    ("crypto.hash('sha256', 42)", "crypto.hash: data must be"),
    ("crypto.hmac('sha256', null, 'x')", "crypto.hmac: key must be"),
    ("crypto.hmac('sha256', 'k', {})", "crypto.hmac: data must be"),
    ("crypto.hash('sha256', 'x', 'utf8')", "crypto.hash: encoding must be 'hex' or 'base64'"),
    ("crypto.timingSafeEqual('a', 1)", "crypto.timingSafeEqual: b must be"),
    ("crypto.getRandomValues(new Float64Array(2))", "crypto.getRandomValues: array must be"),
    ("crypto.getRandomValues([1, 2])", "crypto.getRandomValues: array must be"),
])
def test_bad_arguments_throw_type_errors(engine: EngineHarness, call: str, needle: str) -> None:
    message = error_of(engine, f"return {call}")
    assert message.startswith("TypeError: ") and needle in message


def test_getrandomvalues_refuses_more_than_64_kb(engine: EngineHarness) -> None:
    assert "RangeError" in error_of(engine, "return crypto.getRandomValues(new Uint8Array(65537))")


def test_timing_safe_equal(engine: EngineHarness) -> None:
    got = run(engine, """const t = crypto.timingSafeEqual
return [t('abc', 'abc'), t('abc', 'abd'), t('abc', 'ab'), t('', ''),
  t(Buffer.from('sha256=00ff'), 'sha256=00ff'), t(new Uint8Array([1, 2]), new Uint8Array([1, 3])),
  t(new Uint8Array(3), new Uint8Array(4)), t('é', 'e')]""")
    assert got == [True, False, False, True, True, False, False, False]


def test_random_uuid_is_version_4_and_unique(engine: EngineHarness) -> None:
    got = run(engine, "return Array.from({ length: 500 }, () => crypto.randomUUID())")
    pattern = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
    assert all(pattern.match(u) for u in got)
    assert len(set(got)) == 500
    other = run(engine, "return crypto.randomUUID()")  # a new run
    assert other not in got


def test_get_random_values_fills_and_returns_the_array(engine: EngineHarness) -> None:
    got = run(engine, """const a = new Uint8Array(4096)
const same = crypto.getRandomValues(a) === a
const b = crypto.getRandomValues(new Uint32Array(8))
const big = crypto.getRandomValues(new BigUint64Array(2))
const counts = new Array(256).fill(0)
for (const x of a) counts[x]++
return { same, zeros: a.filter((x) => x === 0).length, distinct: counts.filter((c) => c).length,
  words: Array.from(b), big: big[0] !== big[1] }""")
    assert got["same"] is True and got["big"] is True
    assert got["zeros"] < 64 and got["distinct"] > 240  # 4096 bytes: ~16 zeros, all 256 seen
    assert len(set(got["words"])) == 8


def test_crypto_is_frozen_and_cannot_be_bent_by_the_job(engine: EngineHarness) -> None:
    # Only a fresh context's job can rewrite built-ins (a warm run's are frozen): crypto
    # captured what it uses before any job code, so the rewrite cannot reach it.
    got = body_json(engine.run("""Uint8Array.prototype.set = () => { throw new Error('bent') }
Math.random = () => 0
Array.prototype[Symbol.iterator] = function* () { yield 'bent' }
let frozen = false
try { crypto.hash = null } catch (e) { frozen = true }
return [Object.isFrozen(crypto), crypto.hash('sha256', 'abc'), crypto.randomUUID().length]""",
                               isolation="fresh"))
    assert got == [True, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 36]


def test_a_warm_run_cannot_change_crypto_for_the_next(engine: EngineHarness) -> None:
    bend = """const tries = [() => { crypto.hash = null }, () => { Math.random = () => 0 },
  () => { Object.getPrototypeOf(crypto).hash = () => 'bent' },
  () => { Uint8Array.prototype.toHex = () => 'bent' }]
return tries.map((f) => { try { f(); return 'changed' } catch (e) { return e.name } })"""
    for _ in range(3):
        assert run(engine, bend) == ["TypeError"] * 4
        assert run(engine, "return crypto.hash('sha1', 'abc')") == (
            "a9993e364706816aba3e25717850c26c9cd0d89d")


def test_sign_and_verify_survive_the_job_bending_the_intrinsics(engine: EngineHarness) -> None:
    # bytes.js captured what sign/verify and SHA-256 use before the job's first line.
    got = body_json(engine.run("""Uint8Array.prototype.set = () => { throw new Error('bent') }
Array.prototype[Symbol.iterator] = function* () { yield 'bent' }
String.prototype.slice = () => 'bent'
JSON.parse = () => 'bent'
const token = sign({ uid: 7 }, 60)
return [verify(token), verify(token.slice(0, -1) + 'x'), token.split('.').length]""",
                               isolation="fresh"))
    assert got == [{"uid": 7}, None, 2]


def test_request_raw_body_defaults_when_no_body_crossed(engine: EngineHarness) -> None:
    got = run(engine, "return [request.rawBody, request.rawBytes().length, "
                      "Object.keys(request).includes('rawBase64')]")
    assert got == ["", 0, False]


def test_request_raw_bytes_from_base64(engine: EngineHarness) -> None:
    import base64

    body = bytes(range(256)) * 3
    view = {"method": "POST", "caller": {"kind": "anonymous"},
            "rawBase64": base64.b64encode(body).decode()}
    got = body_json(engine.run("""const b = request.rawBytes()
b[0] = 99
return [Buffer.isBuffer(b), b.length, request.rawBytes()[0], request.rawBytes().toString('hex'),
  'rawBase64' in request, Object.isFrozen(request), request.rawBody, request.rawBody.length]""",
                               request=view))
    text = body.decode("utf-8", errors="replace")
    assert got == [True, 768, 0, body.hex(), False, True, text, len(text)]


def test_host_entropy_in_the_spec_is_taken_and_hidden() -> None:
    """A spec carrying ``entropy`` (base64 of host random bytes) seeds the generator;
    the job never sees it."""
    import asyncio
    import base64
    import os

    from hub.engine import sandbox

    async def one(entropy: str | None) -> Any:
        prepared = await sandbox.prepare_context()
        try:
            spec: dict[str, Any] = {"params": {}, "request": {"method": "GET"},
                                    "limits": {}, "approved": [], "named": []}
            if entropy is not None:
                spec["entropy"] = entropy
            outcome = await sandbox.run_in_context(
                prepared, "return [crypto.randomUUID(), typeof entropy, 'entropy' in request]",
                spec, 64)
            return outcome
        finally:
            prepared.close()

    import json

    for entropy in (base64.b64encode(os.urandom(32)).decode(), None, "not base64 !"):
        outcome = asyncio.run(one(entropy))
        assert outcome.meta["ok"], outcome.meta
        uuid, kind, seen = json.loads(outcome.body)
        assert len(uuid) == 36 and kind == "undefined" and seen is False
