"""What the editor knows about a job's world: the globals the hub gives a job, their
members and signatures, and the JavaScript words to highlight.

Plain data, no Qt, so the completion rules can be tested on their own. Kept in step
with the README's globals table and ``hub/engine/js`` (prelude, responses, crypto)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "GLOBALS",
    "GLOBAL_CLASSES",
    "JS_KEYWORDS",
    "MEMBERS",
    "SIGNATURES",
    "Entry",
]


@dataclass(frozen=True)
class Entry:
    """One completion: ``signature`` is shown as a call tip (``None``: not callable)."""

    name: str
    doc: str
    signature: str | None = None


def _fn(name: str, signature: str, doc: str) -> Entry:
    return Entry(name, doc, signature)


def _val(name: str, doc: str) -> Entry:
    return Entry(name, doc)


GLOBALS: tuple[Entry, ...] = (
    _val("params", "query parameters (GET) or the parsed JSON/form body (POST)"),
    _val("request", "the incoming request: method, url, path, query, headers, ip, caller, "
                    "rawBody, rawBytes()"),
    _val("response", "builders for non-JSON answers"),
    _val("console", "log lines, timed from the start of the run"),
    _val("db", "the business database"),
    _fn("http", "http(url, options?) → Promise<{ status, ok, statusText, headers, text, bytes, "
                "json() }>\noptions: { method, headers, body, username, password, timeoutMs, "
                "followRedirects }", "outbound HTTP to public addresses"),
    _fn("sign", "sign(payload, ttlSeconds = 900) → token", "a signed, expiring token"),
    _fn("verify", "verify(token) → payload | null", "the payload of a token from sign()"),
    _val("limits", "the resolved limits: runtimeMs, memoryMb, cpuMs"),
    _val("crypto", "hashes, HMAC and randomness (synchronous)"),
    _val("secrets", "the secrets this job's header declares"),
    _fn("require", "require(name) → module", "an approved npm module, named as text"),
    _val("userID", "the caller's id"),
    _val("isAuthenticated", "whether there is a caller"),
    _fn("breakpoint", "breakpoint()", "pause here in the debugger (a no-op otherwise)"),
    _val("Buffer", "Node's Buffer"),
    _val("URL", "the WHATWG URL class"),
    _val("URLSearchParams", "query-string helper"),
    _val("TextEncoder", "text → UTF-8 bytes"),
    _val("TextDecoder", "bytes → text"),
    _fn("atob", "atob(base64) → string", "decode base64"),
    _fn("btoa", "btoa(string) → base64", "encode base64"),
    _fn("structuredClone", "structuredClone(value) → copy", "a deep copy"),
    _val("AbortController", "abort signals"),
    _fn("setTimeout", "setTimeout(callback, ms, ...args) → id", "run later"),
    _fn("clearTimeout", "clearTimeout(id)", "cancel a setTimeout"),
    _fn("setInterval", "setInterval(callback, ms, ...args) → id", "run repeatedly"),
    _fn("clearInterval", "clearInterval(id)", "cancel a setInterval"),
    _fn("queueMicrotask", "queueMicrotask(callback)", "run after the current task"),
)

_CONSOLE_SIG = "console.{0}(...values)"

MEMBERS: dict[str, tuple[Entry, ...]] = {
    "db": (
        _fn("exec", "db.exec(sql, params?) → Promise<rows[] | { affectedRows }>\n"
                    "params: an array bound to the ? placeholders", "run SQL"),
    ),
    "response": (
        _fn("json", "response.json(body, status = 200, headers?)", "JSON with a status"),
        _fn("html", "response.html(text, status = 200)", "an HTML page"),
        _fn("text", "response.text(text, status = 200)", "plain text"),
        _fn("csv", 'response.csv(text, filename = "export.csv")', "a CSV download"),
        _fn("pdf", 'response.pdf(bytes, filename = "document.pdf")',
            "a PDF (bytes or base64 text)"),
        _fn("file", 'response.file(bytes, filename = "download", type?)', "any file"),
        _fn("redirect", "response.redirect(url, status = 302)", "a redirect"),
        _fn("raw", "response.raw(body, headers?, status = 200)", "a body with your own headers"),
    ),
    "console": tuple(
        _fn(level, _CONSOLE_SIG.format(level), f"a {level} line")
        for level in ("log", "info", "debug", "warn", "error")
    ),
    "request": (
        _val("method", "GET, POST, …"),
        _val("url", "the full URL"),
        _val("path", "the path"),
        _val("query", "the query parameters"),
        _val("headers", "request headers (credentials withheld), lower-case names"),
        _val("ip", "the caller's address"),
        _val("caller", "{ kind, id, name, userClass }"),
        _val("rawBody", "the body exactly as received, as text"),
        _fn("rawBytes", "request.rawBytes() → Buffer", "the body's exact bytes"),
    ),
    "request.caller": (
        _val("kind", "what called"),
        _val("id", "the caller's id"),
        _val("name", "the caller's name"),
        _val("userClass", "the caller's class"),
    ),
    "limits": (
        _val("runtimeMs", "wall-clock limit (ms)"),
        _val("memoryMb", "heap limit (MB)"),
        _val("cpuMs", "CPU limit (ms)"),
    ),
    "crypto": (
        _fn("hash", 'crypto.hash(algorithm, data, encoding = "hex") → string\n'
                    'algorithm: "sha1" | "sha256" | "sha512"; encoding: "hex" | "base64"',
            "a digest"),
        _fn("hmac", 'crypto.hmac(algorithm, key, data, encoding = "hex") → string\n'
                    'algorithm: "sha1" | "sha256" | "sha512"; encoding: "hex" | "base64"',
            "an HMAC"),
        _fn("timingSafeEqual", "crypto.timingSafeEqual(a, b) → boolean",
            "compare without leaking timing"),
        _fn("randomUUID", "crypto.randomUUID() → string", "a random UUID v4"),
        _fn("getRandomValues", "crypto.getRandomValues(typedArray) → typedArray",
            "fill with random values"),
    ),
    "secrets": (
        _fn("get", "secrets.get(name) → string\nonly names declared on the header's "
                   "Secrets: line", "a declared secret"),
    ),
}


def _signatures() -> dict[str, str]:
    found = {e.name: e.signature for e in GLOBALS if e.signature}
    for owner, entries in MEMBERS.items():
        found.update({f"{owner}.{e.name}": e.signature for e in entries if e.signature})
    return found


# Dotted callable name → its signature, for call tips after "(".
SIGNATURES: dict[str, str] = _signatures()

JS_KEYWORDS: tuple[str, ...] = (
    "async", "await", "break", "case", "catch", "class", "const", "continue", "debugger",
    "default", "delete", "do", "else", "export", "extends", "false", "finally", "for",
    "function", "if", "import", "in", "instanceof", "let", "new", "null", "of", "return",
    "static", "super", "switch", "this", "throw", "true", "try", "typeof", "undefined", "var",
    "void", "while", "with", "yield",
)

# Highlighted as classes (the lexer's "global class" set): built-ins a job uses often.
GLOBAL_CLASSES: tuple[str, ...] = (
    "Array", "ArrayBuffer", "BigInt", "Boolean", "Date", "Error", "JSON", "Map", "Math",
    "Number", "Object", "Promise", "RangeError", "RegExp", "Set", "String", "Symbol",
    "TypeError", "Uint8Array", "WeakMap", "WeakSet",
)
