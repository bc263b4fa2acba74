"""hub.passwords: Argon2id at OWASP's parameters, scrypt hashes from before it still
verify, out-of-date hashes are flagged for re-hashing, and no stored string, however
made, can make verify_password raise, run long or eat memory."""

from __future__ import annotations

import base64
import hashlib

import argon2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub import passwords

# Made by the scrypt code the hub had before Argon2id (hub/passwords.py at 5341d2e).
LEGACY_PASSWORD = "legacy pass 2026"
LEGACY_SCRYPT = ("scrypt$16384$8$1$50MDZBev6HRyVzW+YHNEGw==$"
                 "nC6ZOqP5MFm51jesaABdfTYuMSFw0WURUck4E5MCJWU=")


def test_new_hashes_are_argon2id_phc_strings_at_owasp_parameters() -> None:
    encoded = passwords.hash_password("correct horse")
    params = argon2.extract_parameters(encoded)
    assert encoded.startswith("$argon2id$v=19$m=47104,t=1,p=1$")
    assert (params.type, params.memory_cost, params.time_cost, params.parallelism) == (
        argon2.Type.ID, 47104, 1, 1)
    assert (params.salt_len, params.hash_len) == (16, 32)
    assert passwords.verify_password("correct horse", encoded)
    assert not passwords.verify_password("correct horsE", encoded)
    assert passwords.hash_password("correct horse") != encoded  # fresh salt
    assert not passwords.needs_rehash(encoded)


# OWASP's Argon2id configurations, each as strong as the others: (m KiB, t), p=1.
OWASP_ARGON2ID = [(47104, 1), (19456, 2), (12288, 3), (9216, 4), (7168, 5)]


def test_owasp_minimum_is_met() -> None:
    ours = (passwords.ARGON2_MEMORY_KIB, passwords.ARGON2_TIME_COST)
    assert any(ours[0] >= m and ours[1] >= t for m, t in OWASP_ARGON2ID), ours
    assert passwords.ARGON2_PARALLELISM >= 1


def test_a_hash_from_the_scrypt_days_verifies_and_needs_rehash() -> None:
    assert passwords.verify_password(LEGACY_PASSWORD, LEGACY_SCRYPT)
    assert not passwords.verify_password(LEGACY_PASSWORD + "x", LEGACY_SCRYPT)
    assert passwords.needs_rehash(LEGACY_SCRYPT)


def test_weaker_argon2id_verifies_and_needs_rehash() -> None:
    weaker = argon2.PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)
    encoded = weaker.hash("pw of old")
    assert passwords.verify_password("pw of old", encoded)
    assert passwords.needs_rehash(encoded)


@pytest.mark.parametrize("kind", [argon2.Type.I, argon2.Type.D])
def test_other_argon2_variants_are_refused(kind: argon2.Type) -> None:
    encoded = argon2.PasswordHasher(time_cost=1, memory_cost=8192, type=kind).hash("pw")
    assert passwords.verify_password("pw", encoded) is False
    assert passwords.needs_rehash(encoded)


def test_dummy_hash_is_current_argon2id() -> None:
    """An unknown user is checked against the dummy: it must cost what a real hash does."""
    assert (argon2.extract_parameters(passwords.DUMMY_HASH)
            == argon2.extract_parameters(passwords.hash_password("any")))
    assert not passwords.needs_rehash(passwords.DUMMY_HASH)
    assert passwords.verify_password("x", passwords.DUMMY_HASH) is False


def _with_costs(m: int, t: int, p: int) -> str:
    current = passwords.hash_password("pw")
    salt_and_hash = current.split("$", 4)[4]
    return f"$argon2id$v=19$m={m},t={t},p={p}${salt_and_hash}"


@pytest.mark.parametrize(("m", "t", "p"), [
    (4 * 1024 * 1024, 1, 1),      # 4 GiB of memory
    (131072 * 2, 1, 1),           # over the memory cap
    (47104, 1000, 1),             # a thousand passes
    (65536, 4, 1),                # each in bounds, their product not
    (47104, 1, 64),               # too many lanes
    (8, 1, 2),                    # less memory than the lanes need
])
def test_tampered_argon2_costs_are_refused_before_hashing(
        m: int, t: int, p: int, monkeypatch: pytest.MonkeyPatch) -> None:
    tampered = _with_costs(m, t, p)
    hashed: list[bytes] = []

    def spy(encoded: bytes, secret: bytes, kind: argon2.Type) -> bool:
        hashed.append(encoded)
        return True

    monkeypatch.setattr(passwords, "verify_secret", spy)
    assert passwords.verify_password("pw", tampered) is False
    assert hashed == []
    # the spy works, and the costs OWASP lists are all in bounds:
    for m_ok, t_ok in OWASP_ARGON2ID:
        assert passwords.verify_password("pw", _with_costs(m_ok, t_ok, 1)) is True
    assert len(hashed) == len(OWASP_ARGON2ID)


def _scrypt_hash(pw: str, n: int, r: int, p: int) -> str:
    salt = b"sixteen byte slt"
    digest = hashlib.scrypt(pw.encode(), salt=salt, n=n, r=r, p=p, dklen=32,
                            maxmem=256 * 1024 * 1024)
    return "$".join(["scrypt", str(n), str(r), str(p), base64.b64encode(salt).decode(),
                     base64.b64encode(digest).decode()])


# Up to 4x the work and memory of the hub's own N=2^14, r=8, p=1.
SCRYPT_IN_BOUNDS = [(2**16, 8, 1), (2**15, 8, 2), (2**14, 8, 4), (2**14, 32, 1)]


@pytest.mark.parametrize(("n", "r", "p"), [
    (2**20, 7, 16),               # ~33 s and 896 MiB per sign-in
    (2**20, 8, 1),                # 1 GiB
    (2**17, 8, 1),                # 8x the work and memory
    (2**15, 32, 1),               # 128 MiB
    (2**13, 8, 16),               # little memory, 8x the work
    (2**14, 64, 1),               # r over its own bound
])
def test_tampered_scrypt_costs_are_refused_before_hashing(
        n: int, r: int, p: int, monkeypatch: pytest.MonkeyPatch) -> None:
    real_scrypt = passwords._scrypt
    hashed: list[tuple[int, int, int]] = []

    def spy(pw: str, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
        hashed.append((n, r, p))
        return real_scrypt(pw, salt, n, r, p, dklen)

    tampered = LEGACY_SCRYPT.replace("scrypt$16384$8$1$", f"scrypt${n}${r}${p}$")
    monkeypatch.setattr(passwords, "_scrypt", spy)
    assert passwords.verify_password(LEGACY_PASSWORD, tampered) is False
    assert hashed == []
    # the spy works, and the hub's own hashes and a little more still verify:
    assert passwords.verify_password(LEGACY_PASSWORD, LEGACY_SCRYPT) is True
    for costs in SCRYPT_IN_BOUNDS:
        assert passwords.verify_password("pw", _scrypt_hash("pw", *costs)) is True
    assert hashed == [(2**14, 8, 1), *SCRYPT_IN_BOUNDS]


@pytest.mark.parametrize("encoded", [
    "", "scrypt", "bcrypt$16384$8$1$AAAA$AAAA", "scrypt$x$8$1$AAAA$AAAA",
    "scrypt$16384$8$1$!!!$AAAA", "scrypt$1000$8$1$AAAAAAAAAAAAAAAAAAAAAA==$" + "A" * 44,
    "scrypt$1073741824$8$1$AAAAAAAAAAAAAAAAAAAAAA==$" + "A" * 44,
    "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAA", "scrypt$16384$8$1$$" + "A" * 44,
    "$argon2id$", "$argon2id$v=19$m=47104,t=1,p=1$", "$argon2id$v=16$m=47104,t=1,p=1$"
    "AAAAAAAAAAAAAAAAAAAAAA$" + "A" * 43, "$argon2id$v=19$m=47104,t=0,p=1$"
    "AAAAAAAAAAAAAAAAAAAAAA$" + "A" * 43, "$argon2id$v=19$m=47104,t=1,p=1$!!!$" + "A" * 43,
    "$argon2id$v=19$m=47104,t=1,p=1$AAAAA$" + "A" * 43,
    "$argon2id$v=19$m=47104,t=1,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAA",
])
def test_malformed_hash_is_false_not_an_error(encoded: str) -> None:
    assert passwords.verify_password("whatever1", encoded) is False
    assert passwords.needs_rehash(encoded)


def test_a_password_no_one_could_set_is_false() -> None:
    assert passwords.verify_password("\ud800", passwords.DUMMY_HASH) is False
    assert passwords.verify_password("\ud800", LEGACY_SCRYPT) is False


_PHC_TEXT = st.text(alphabet="$argon2idv=19mtp,0123456789ABCabc+/=", max_size=120)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), _PHC_TEXT,
                 _PHC_TEXT.map(lambda tail: "$argon2id$v=19$" + tail),
                 _PHC_TEXT.map(lambda tail: "scrypt$" + tail)),
       st.text(max_size=40))
def test_verify_never_raises_on_any_string(encoded: str, pw: str) -> None:
    assert passwords.verify_password(pw, encoded) is False
    assert isinstance(passwords.needs_rehash(encoded), bool)


@settings(max_examples=25, deadline=None)
@given(st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=64))
def test_any_password_round_trips(pw: str) -> None:
    encoded = passwords.hash_password(pw)
    assert passwords.verify_password(pw, encoded)
    assert not passwords.verify_password(pw + "x", encoded)
