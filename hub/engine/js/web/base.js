// The shared part of the web APIs a bare V8 context lacks (the files in web/): the
// intrinsics they use, captured before any job code runs, and the helpers more than
// one of them needs (ToString, DOMException, bytes and strings, UTF-8, base64, hex).
// The web files are evaluated once, in the order hub/engine/scripts.py lists, and hand
// each other these through __webjob_web, which the last of them (events.js) deletes.
//
// Capturing is the hardening: a job that overwrites String.prototype.charCodeAt,
// Array.prototype.push, globalThis.Map... breaks only its own code, never these APIs.
// So code that runs when a job calls an API uses only what was captured here or at the
// top of its own file, and no array destructuring or spread of our own arrays (those
// go through the array iterator, which a job can replace).
//
// Per-run globals (setTimeout, console, reportError) are never captured: they are read
// from globalThis at call time, where the host defines them for the current run.
(() => {
  'use strict';
  const G = globalThis;
  const { defineProperty, getPrototypeOf, getOwnPropertyDescriptor, keys, hasOwn, freeze } = Object;
  const { apply, ownKeys } = Reflect;
  const FP = Function.prototype, uncurry = FP.bind.bind(FP.call);
  const SP = String.prototype, AP = Array.prototype, U8 = Uint8Array, TAP = getPrototypeOf(U8.prototype);
  const getter = (o, k) => uncurry(getOwnPropertyDescriptor(o, k).get);
  const def = (o, k, value) => defineProperty(o, k, { value, writable: true, configurable: true });
  const Str = String, Err = Error, TypeErr = TypeError, RangeErr = RangeError;
  const U16 = Uint16Array, I8 = Int8Array, fromCharCode = String.fromCharCode, min = Math.min;
  const cca = uncurry(SP.charCodeAt), sl = uncurry(SP.slice), sIdx = uncurry(SP.indexOf);
  const wellFormed = uncurry(SP.toWellFormed), ssplit = uncurry(SP.split), aIdx = uncurry(AP.indexOf);
  const sub = uncurry(TAP.subarray), taSet = uncurry(TAP.set), taFill = uncurry(TAP.fill);
  const taBuf = getter(TAP, 'buffer'), taOff = getter(TAP, 'byteOffset'), taLen = getter(TAP, 'length');
  const taTag = getter(TAP, Symbol.toStringTag), abLen = getter(ArrayBuffer.prototype, 'byteLength');
  const dvBuf = getter(DataView.prototype, 'buffer'), dvOff = getter(DataView.prototype, 'byteOffset');
  const dvLen = getter(DataView.prototype, 'byteLength'), isView = ArrayBuffer.isView;

  // V8's own base64 and hex (V8 >= 14): far less CPU per MB than a JavaScript loop.
  // Their options objects have no prototype, so Object.prototype cannot add an option.
  if (typeof U8.fromBase64 !== 'function') throw new Err('This V8 lacks Uint8Array.fromBase64 (V8 >= 14 needed)');
  const toB64 = uncurry(U8.prototype.toBase64), toHex = uncurry(U8.prototype.toHex);
  const fromB64 = U8.fromBase64, fromHex = U8.fromHex;
  const STD = freeze({ __proto__: null, alphabet: 'base64', lastChunkHandling: 'loose', omitPadding: false });
  const URL_SAFE = freeze({ __proto__: null, alphabet: 'base64url', lastChunkHandling: 'loose', omitPadding: true });

  const brand = (f, v) => { try { f(v); return true; } catch { return false; } };
  const isAB = (v) => brand(abLen, v);
  const toStr = (v) => { // ToString: a Symbol throws
    if (typeof v === 'symbol') throw new TypeErr('Cannot convert a Symbol value to a string');
    return Str(v);
  };
  const usv = (v) => wellFormed(toStr(v));
  const range = (what, v, lo, hi) => new RangeErr('The value of "' + what + '" is out of range. It must be >= ' +
    lo + ' and <= ' + hi + '. Received ' + v);

  const DOMX = ssplit(',IndexSizeError,,HierarchyRequestError,WrongDocumentError,InvalidCharacterError,,' +
    'NoModificationAllowedError,NotFoundError,NotSupportedError,InUseAttributeError,InvalidStateError,' +
    'SyntaxError,InvalidModificationError,NamespaceError,InvalidAccessError,,TypeMismatchError,' +
    'SecurityError,NetworkError,AbortError,URLMismatchError,QuotaExceededError,TimeoutError,' +
    'InvalidNodeTypeError,DataCloneError', ',');
  class DOMException extends Err {
    #name;
    constructor(message = '', options = 'Error') {
      const o = typeof options === 'object' && options !== null;
      super(toStr(message), o && 'cause' in options ? { cause: options.cause } : undefined);
      this.#name = o ? (options.name === undefined ? 'Error' : toStr(options.name)) : toStr(options);
    }
    get name() { return #name in this ? this.#name : 'Error'; }
    get code() { const i = #name in this && this.#name ? aIdx(DOMX, this.#name) : -1; return i > 0 ? i : 0; }
  }
  defineProperty(DOMException.prototype, Symbol.toStringTag, { value: 'DOMException', configurable: true });
  const domErr = (msg, name) => new DOMException(msg, name);

  // ---- bytes and strings
  const io = { rd: 0, rest: 0 }; // code units read by utf8Write; bytes left by a streaming decode
  function bytesOf(x) {
    if (isView(x)) {
      return taTag(x) !== undefined ? new U8(taBuf(x), taOff(x), taLen(x) * (x.BYTES_PER_ELEMENT || 1))
        : new U8(dvBuf(x), dvOff(x), dvLen(x));
    }
    if (isAB(x)) return new U8(x);
    throw new TypeErr('The argument must be an ArrayBuffer or an ArrayBufferView');
  }
  // a string from code units, in chunks small enough for apply()
  function codes(a, s = 0, e = taLen(a)) {
    let out = '';
    for (let i = s; i < e; i += 8192) out += apply(fromCharCode, null, sub(a, i, min(e, i + 8192)));
    return out;
  }
  function utf8Len(s) {
    const n = s.length;
    let len = n;
    for (let i = 0; i < n; i++) {
      const c = cca(s, i);
      if (c < 0x80) continue;
      if (c < 0x800) len++;
      else if ((c & 0xFC00) === 0xD800 && (cca(s, i + 1) & 0xFC00) === 0xDC00) { len += 2; i++; }
      else len += 2;
    }
    return len;
  }
  // writes whole characters only; lone surrogates become U+FFFD
  function utf8Write(s, d, o, end) {
    const n = s.length, o0 = o;
    let i = 0;
    for (; i < n; i++) {
      let c = cca(s, i);
      if (c < 0x80) { if (o >= end) break; d[o++] = c; continue; }
      if (c < 0x800) { if (o + 2 > end) break; d[o++] = 0xC0 | c >> 6; d[o++] = 0x80 | c & 63; continue; }
      if ((c & 0xFC00) === 0xD800 && (cca(s, i + 1) & 0xFC00) === 0xDC00) {
        if (o + 4 > end) break;
        c = 0x10000 + ((c & 0x3FF) << 10) + (cca(s, ++i) & 0x3FF);
        d[o++] = 0xF0 | c >> 18; d[o++] = 0x80 | c >> 12 & 63; d[o++] = 0x80 | c >> 6 & 63; d[o++] = 0x80 | c & 63;
        continue;
      }
      if ((c & 0xF800) === 0xD800) c = 0xFFFD;
      if (o + 3 > end) break;
      d[o++] = 0xE0 | c >> 12; d[o++] = 0x80 | c >> 6 & 63; d[o++] = 0x80 | c & 63;
    }
    io.rd = i;
    return o - o0;
  }
  function utf8(s) { const d = new U8(utf8Len(s)); utf8Write(s, d, 0, d.length); return d; }
  const badData = (e) => new TypeErr('The encoded data was not valid for encoding ' + e);
  // WHATWG UTF-8 decoder: one U+FFFD per maximal invalid subpart
  function dec8(u, fatal, flush) {
    const n = u.length, o = new U16(n + 1);
    let j = 0, need = 0, seen = 0, cp = 0, lo = 0x80, hi = 0xBF, st = 0;
    for (let i = 0; i < n; i++) {
      const b = u[i];
      if (!need) {
        if (b < 0x80) { o[j++] = b; continue; }
        st = i;
        if (b >= 0xC2 && b <= 0xDF) { need = 1; cp = b & 0x1F; }
        else if (b >= 0xE0 && b <= 0xEF) { if (b === 0xE0) lo = 0xA0; else if (b === 0xED) hi = 0x9F; need = 2; cp = b & 0xF; }
        else if (b >= 0xF0 && b <= 0xF4) { if (b === 0xF0) lo = 0x90; else if (b === 0xF4) hi = 0x8F; need = 3; cp = b & 7; }
        else { if (fatal) throw badData('utf-8'); o[j++] = 0xFFFD; }
        continue;
      }
      if (b < lo || b > hi) {
        cp = need = seen = 0; lo = 0x80; hi = 0xBF;
        if (fatal) throw badData('utf-8');
        o[j++] = 0xFFFD; i--;
        continue;
      }
      lo = 0x80; hi = 0xBF; cp = cp << 6 | b & 0x3F;
      if (++seen === need) {
        if (cp > 0xFFFF) { cp -= 0x10000; o[j++] = 0xD800 | cp >> 10; o[j++] = 0xDC00 | cp & 0x3FF; }
        else o[j++] = cp;
        cp = need = seen = 0;
      }
    }
    io.rest = 0;
    if (need) {
      if (!flush) io.rest = n - st;
      else { if (fatal) throw badData('utf-8'); o[j++] = 0xFFFD; }
    }
    return codes(o, 0, j);
  }

  // ---- base64 and hex, as Node's Buffer reads them: either alphabet, anything else
  // skipped, the first '=' ends the data; hex up to the first pair that is not hex.
  // V8 decodes the common case (one alphabet, whitespace at most, no dangling last
  // character; even-length clean hex); the rest takes the loops below.
  const D64 = taFill(new I8(128), -1);
  for (let i = 0; i < 64; i++) {
    D64[cca('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', i)] = i;
  }
  D64[45] = 62; D64[95] = 63;  // '-' and '_'
  function b64count(s) {
    let cnt = 0;
    for (let i = 0, n = s.length; i < n; i++) {
      const c = cca(s, i);
      if (c === 61) break;
      if (c < 128 && D64[c] >= 0) cnt++;
    }
    return cnt;
  }
  // the bits of the first cnt base64 characters of s (others skipped), as cnt*3/4 bytes
  function b64bits(s, cnt) {
    const o = new U8(cnt * 3 >> 2);
    for (let i = 0, j = 0, acc = 0, bits = 0; j < o.length; i++) {
      const c = cca(s, i), v = c < 128 ? D64[c] : -1;
      if (v < 0) continue;
      acc = (acc << 6 | v) & 0xFFFFFF;
      if ((bits += 6) >= 8) { bits -= 8; o[j++] = acc >> bits; }
    }
    return o;
  }
  function b64dec(s) {
    const eq = sIdx(s, '=');
    const t = eq < 0 ? s : sl(s, 0, eq);
    const url = sIdx(t, '-') >= 0 || sIdx(t, '_') >= 0;
    if (!url || (sIdx(t, '+') < 0 && sIdx(t, '/') < 0)) {
      try { return fromB64(t, url ? URL_SAFE : STD); } catch { /* not V8's case: the loop below */ }
    }
    return b64bits(t, b64count(t));
  }
  const b64enc = (u, url) => toB64(u, url ? URL_SAFE : STD);
  const hexVal = (c) => c >= 48 && c <= 57 ? c - 48 : (c |= 32) >= 97 && c <= 102 ? c - 87 : -1;
  function hexDec(s) {
    const t = s.length & 1 ? sl(s, 0, -1) : s;
    try { return fromHex(t); } catch { /* a digit that is not hex: the loop below */ }
    const n = t.length >> 1, o = new U8(n);
    let i = 0;
    for (; i < n; i++) {
      const a = hexVal(cca(t, 2 * i)), b = hexVal(cca(t, 2 * i + 1));
      if (a < 0 || b < 0) break;
      o[i] = a << 4 | b;
    }
    return new U8(taBuf(o), 0, i);
  }

  const W = {
    __proto__: null, G, def, apply, defineProperty, getPrototypeOf, getOwnPropertyDescriptor, keys, hasOwn,
    ownKeys, uncurry, getter, Str, Err, TypeErr, RangeErr, U8, U16, fromCharCode, min, cca, sl, sIdx, aIdx,
    ssplit, sub, taSet, taFill, taBuf, taOff, taLen, taTag, abLen, isView, toB64, fromB64, STD,
    brand, isAB, toStr, usv, range, DOMException, domErr, io, bytesOf, codes, utf8Len, utf8Write, utf8, badData,
    dec8, b64count, b64dec, b64enc, toHex, hexVal, hexDec,
  };
  defineProperty(G, '__webjob_web', { value: W, configurable: true });  // events.js deletes it
  def(G, 'DOMException', DOMException);
})();
//# sourceURL=webjobs:web/base
