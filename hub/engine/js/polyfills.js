// Web APIs that a bare V8 context lacks, evaluated once at the start of every fresh
// context (before prelude.js): TextEncoder/TextDecoder, atob/btoa, Buffer (the
// commonly used part of Node's), URL/URLSearchParams (WHATWG, no IDNA tables),
// structuredClone, Event/EventTarget, AbortController/AbortSignal, DOMException.
//
// Cost design: V8 spends ~5 us per function just to pre-parse it, and scanning text
// costs too, so the implementations are kept as source text inside comments (the
// SRC.* chunks below) and compiled the first time a job uses them. In the hub the
// worker goes one step further: it strips the chunk bodies from the script before
// V8 sees it and writes them into shared memory instead (prelude.js hands that over
// through __webjob_library; LIBRARY below is the worker's index of it; the cold
// chunks of bytes.js, crypto.js and prelude.js are there too, read through
// __webjob_library_text). Evaluated on its own, this file reads each body back from
// its comment. What runs
// eagerly is small: the intrinsics are captured (so a job overwriting
// String.prototype.charCodeAt, Array.prototype.push, globalThis.Map... cannot break
// these APIs for itself), and each global is installed as a thin shell: its
// constructor and static methods load the chunk on first use, and its prototype has a
// proxy as parent until then, so that looking up a member not there yet loads it too.
// Chunk code must not contain a block comment.
(() => {
  'use strict';
  const G = globalThis;
  const { defineProperty, getPrototypeOf, setPrototypeOf, getOwnPropertyDescriptor, keys, hasOwn } = Object;
  const { apply, construct, ownKeys, get: reflectGet, set: reflectSet } = Reflect;
  const FP = Function.prototype, Fn = Function, uncurry = FP.bind.bind(FP.call), fnSrc = uncurry(FP.toString);
  const SP = String.prototype, AP = Array.prototype, U8 = Uint8Array, TAP = getPrototypeOf(U8.prototype);
  const ABP = ArrayBuffer.prototype, DVP = DataView.prototype, MP = Map.prototype, SetP = Set.prototype;
  const sIdx = uncurry(SP.indexOf), sLast = uncurry(SP.lastIndexOf), sl = uncurry(SP.slice);
  const { iterator, toStringTag } = Symbol;
  const def = (o, k, value) => defineProperty(o, k, { value, writable: true, configurable: true });

  // Everything the chunks use, captured now, as [name, value] pairs: an array literal is
  // much cheaper to build than an object literal this size. load() makes the env object.
  const shells = { __proto__: null }, parents = { __proto__: null };
  const ENV = ['G', G, 'defineProperty', defineProperty, 'getPrototypeOf', getPrototypeOf,
    'getOwnPropertyDescriptor', getOwnPropertyDescriptor, 'keys', keys, 'hasOwn', hasOwn, 'apply', apply,
    'ownKeys', ownKeys, 'def', def, 'uncurry', uncurry, 'S', shells, 'load', load, 'iterator', iterator,
    'toStringTag', toStringTag, 'toPrimitive', Symbol.toPrimitive, 'isArray', Array.isArray,
    'fromCharCode', String.fromCharCode, 'floor', Math.floor, 'min', Math.min, 'max', Math.max, 'trunc', Math.trunc,
    'now', Date.now, 'MAX_SAFE', Number.MAX_SAFE_INTEGER, 'Str', String, 'Obj', Object, 'Arr', Array, 'Err', Error,
    'TypeErr', TypeError, 'RangeErr', RangeError,
    'ERRORS', [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError],
    'Map_', Map, 'Set_', Set, 'Date_', Date, 'RegExp_', RegExp, 'U8', U8, 'U16', Uint16Array, 'I8', Int8Array,
    'AB', ArrayBuffer, 'DV', DataView, 'TAS', [Int8Array, U8, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array,
      Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array, G.Float16Array],
    'cca', uncurry(SP.charCodeAt), 'sl', sl, 'sIdx', sIdx, 'sLast', sLast, 'lower', uncurry(SP.toLowerCase),
    'wellFormed', uncurry(SP.toWellFormed), 'normalize', uncurry(SP.normalize), 'strim', uncurry(SP.trim),
    'ssplit', uncurry(SP.split), 'join', uncurry(AP.join), 'splice', uncurry(AP.splice), 'aslice', uncurry(AP.slice),
    'asort', uncurry(AP.sort), 'aIncludes', uncurry(AP.includes), 'aIdx', uncurry(AP.indexOf),
    'objToStr', uncurry(Object.prototype.toString), 'numToStr', uncurry(Number.prototype.toString),
    'sub', uncurry(TAP.subarray), 'taSet', uncurry(TAP.set), 'taFill', uncurry(TAP.fill), 'taIdx', uncurry(TAP.indexOf),
    'taLastIdx', uncurry(TAP.lastIndexOf), 'taSlice', uncurry(TAP.slice), 'taCopyWithin', uncurry(TAP.copyWithin),
    'DVP', DVP, 'abSlice', uncurry(ABP.slice), 'isView', ArrayBuffer.isView, 'mapGet', uncurry(MP.get),
    'mapSet', uncurry(MP.set), 'mapEach', uncurry(MP.forEach), 'setAdd', uncurry(SetP.add),
    'setEach', uncurry(SetP.forEach), 'dateGet', uncurry(Date.prototype.getTime),
    'weakMapHas', uncurry(WeakMap.prototype.has), 'weakSetHas', uncurry(WeakSet.prototype.has),
    'boxes', [uncurry(Number.prototype.valueOf), uncurry(String.prototype.valueOf), uncurry(Boolean.prototype.valueOf),
      uncurry(BigInt.prototype.valueOf)],
    'symVal', uncurry(Symbol.prototype.valueOf), 'isError', Error.isError];
  // accessors (and the newer ArrayBuffer members, if present), uncurried
  for (const [name, o, k] of [['taBuf', TAP, 'buffer'], ['taOff', TAP, 'byteOffset'], ['taLen', TAP, 'length'],
    ['taTag', TAP, toStringTag], ['dvBuf', DVP, 'buffer'], ['dvOff', DVP, 'byteOffset'], ['dvLen', DVP, 'byteLength'],
    ['abLen', ABP, 'byteLength'], ['abTransfer', ABP, 'transfer'], ['abResizable', ABP, 'resizable'],
    ['abMax', ABP, 'maxByteLength'], ['abDetached', ABP, 'detached'], ['mapSize', MP, 'size'], ['setSize', SetP, 'size'],
    ['reSrc', RegExp.prototype, 'source'], ['reFlags', RegExp.prototype, 'flags']]) {
    const d = getOwnPropertyDescriptor(o, k);
    ENV[ENV.length] = name;
    ENV[ENV.length] = d && uncurry(d.get || d.value);
  }
  let env = null;

  const SRC = { __proto__: null };
  // name -> [first code unit, length] in the library; null when evaluated on its own
  const LIBRARY = /*@library-index*/null;
  let library = null, libraryAt = 0;  // its memory and offset, from prelude.js
  const U16 = Uint16Array, fromCC = String.fromCharCode;
  if (LIBRARY !== null) {
    defineProperty(G, '__webjob_library', {  // called (and deleted) before any job code runs
      value: (units) => { library = units.buffer; libraryAt = units.byteOffset; },
      writable: true, configurable: true });
    // bytes.js, crypto.js and prelude.js keep chunks the same way: their text comes through this
    defineProperty(G, '__webjob_library_text', {  // captured by them, deleted by prelude.js
      value: textOf, writable: true, configurable: true });
  }

  // ---- base: shared helpers, DOMException, bytes and strings, TextEncoder/Decoder, atob/btoa
  SRC.base = () => {/*'use strict';
  const { G, def, apply, fromCharCode, min, Str, Err, TypeErr, RangeErr, U8, U16, I8, cca, sl, sIdx, lower,
    wellFormed, strim, ssplit, aIdx, taBuf, taOff, taLen, taTag, sub, taSet, taSlice, dvBuf, dvOff, dvLen, abLen,
    taFill, isView } = env;
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
  const domErr = (msg, name) => new env.S.DOMException(msg, name);

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
  function dec16(u, fatal, flush, be) {
    const n = u.length, o = new U16((n >> 1) + 2);
    let j = 0, lead = 0, i = 0;
    for (; i + 1 < n; i += 2) {
      const c = be ? u[i] << 8 | u[i + 1] : u[i] | u[i + 1] << 8;
      if (lead) {
        if (c >= 0xDC00 && c <= 0xDFFF) { o[j++] = lead; o[j++] = c; lead = 0; continue; }
        if (fatal) throw badData('utf-16');
        o[j++] = 0xFFFD; lead = 0;
      }
      if (c >= 0xD800 && c <= 0xDBFF) lead = c;
      else if (c >= 0xDC00 && c <= 0xDFFF) { if (fatal) throw badData('utf-16'); o[j++] = 0xFFFD; }
      else o[j++] = c;
    }
    io.rest = 0;
    if (lead || i < n) {
      if (!flush) io.rest = (lead ? 2 : 0) + n - i;
      else { if (fatal) throw badData('utf-16'); o[j++] = 0xFFFD; }
    }
    return codes(o, 0, j);
  }
  const W1252 = '\u20ac\x81\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\x8d\u017d\x8f' +
    '\x90\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\x9d\u017e\u0178';
  function dec1252(u) {
    const n = u.length, o = new U16(n);
    for (let i = 0; i < n; i++) { const b = u[i]; o[i] = b < 0x80 || b > 0x9F ? b : cca(W1252, b - 0x80); }
    return codes(o, 0, n);
  }

  // base64 / hex
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const E64 = new U8(64), E64U = new U8(64), HEXC = new U8(16), D64 = taFill(new I8(128), -1);
  for (let i = 0; i < 64; i++) { E64[i] = E64U[i] = cca(B64, i); D64[E64[i]] = i; }
  E64U[62] = 45; E64U[63] = 95; D64[45] = 62; D64[95] = 63;
  for (let i = 0; i < 16; i++) HEXC[i] = cca('0123456789abcdef', i);
  function b64enc(u, url) {
    const n = taLen(u), m = n - n % 3, E = url ? E64U : E64;
    const o = new U8(url ? (n * 4 + 2) / 3 | 0 : ((n + 2) / 3 | 0) * 4);
    let i = 0, j = 0;
    for (; i < m; i += 3) {
      const v = u[i] << 16 | u[i + 1] << 8 | u[i + 2];
      o[j++] = E[v >> 18]; o[j++] = E[v >> 12 & 63]; o[j++] = E[v >> 6 & 63]; o[j++] = E[v & 63];
    }
    if (n - m === 1) {
      o[j++] = E[u[i] >> 2]; o[j++] = E[u[i] << 4 & 63];
      if (!url) { o[j++] = 61; o[j++] = 61; }
    } else if (n - m === 2) {
      const v = u[i] << 8 | u[i + 1];
      o[j++] = E[v >> 10]; o[j++] = E[v >> 4 & 63]; o[j++] = E[v << 2 & 63];
      if (!url) o[j++] = 61;
    }
    return codes(o);
  }
  // the bits of the base64 characters of s (others skipped), as cnt*3/4 bytes
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
  function b64count(s) { // Node is lenient: both alphabets, junk skipped, '=' ends
    let cnt = 0;
    for (let i = 0, n = s.length; i < n; i++) {
      const c = cca(s, i);
      if (c === 61) break;
      if (c < 128 && D64[c] >= 0) cnt++;
    }
    return cnt;
  }
  function hexEnc(u) {
    const n = taLen(u), o = new U8(n * 2);
    for (let i = 0; i < n; i++) { o[2 * i] = HEXC[u[i] >> 4]; o[2 * i + 1] = HEXC[u[i] & 15]; }
    return codes(o);
  }
  const hexVal = (c) => c >= 48 && c <= 57 ? c - 48 : (c |= 32) >= 97 && c <= 102 ? c - 87 : -1;
  function hexDec(s) {
    const n = s.length >> 1, o = new U8(n);
    let i = 0;
    for (; i < n; i++) {
      const a = hexVal(cca(s, 2 * i)), b = hexVal(cca(s, 2 * i + 1));
      if (a < 0 || b < 0) break;
      o[i] = a << 4 | b;
    }
    return i < n ? taSlice(o, 0, i) : o;
  }

  class TextEncoder {
    get encoding() { return 'utf-8'; }
    encode(input = '') { return utf8(toStr(input)); }
    encodeInto(src, dest) {
      if (taTag(dest) !== 'Uint8Array') throw new TypeErr('The "dest" argument must be a Uint8Array');
      const written = utf8Write(toStr(src), dest, 0, taLen(dest));
      return { read: io.rd, written };
    }
  }
  const LABELS = {
    __proto__: null,
    'utf-8': ' unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8 ',
    'utf-16le': ' csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le ',
    'utf-16be': ' unicodefffe utf-16be ',
    'windows-1252': ' ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 ' +
      'iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252 ',
  };
  class TextDecoder {
    #enc; #fatal; #ignoreBOM; #pend = null; #bom = false;
    constructor(label = 'utf-8', options = undefined) {
      const l = lower(strim(toStr(label)));
      for (const k in LABELS) if (sIdx(l, ' ') < 0 && sIdx(LABELS[k], ' ' + l + ' ') >= 0) this.#enc = k;
      if (!this.#enc) throw new RangeErr('The encoding label provided (\'' + label + '\') is invalid.');
      this.#fatal = !!(options && options.fatal);
      this.#ignoreBOM = !!(options && options.ignoreBOM);
    }
    get encoding() { return this.#enc; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    decode(input = undefined, options = undefined) {
      let u = input === undefined ? new U8(0) : bytesOf(input);
      const stream = !!(options && options.stream), e = this.#enc;
      if (this.#pend) { const p = this.#pend, c = new U8(p.length + u.length); taSet(c, p); taSet(c, u, p.length); u = c; }
      let s;
      try {
        if (e === 'utf-8') s = dec8(u, this.#fatal, !stream);
        else if (e === 'windows-1252') { io.rest = 0; s = dec1252(u); }
        else s = dec16(u, this.#fatal, !stream, e === 'utf-16be');
      } catch (err) {
        this.#pend = null; this.#bom = false;
        throw err;
      }
      this.#pend = io.rest ? taSlice(u, u.length - io.rest) : null;
      if (!this.#ignoreBOM && !this.#bom && s.length) { this.#bom = true; if (cca(s, 0) === 0xFEFF) s = sl(s, 1); }
      if (!stream) { this.#bom = false; this.#pend = null; }
      return s;
    }
  }

  function atob(data) {
    if (!arguments.length) throw new TypeErr('Failed to execute \'atob\': 1 argument required');
    const s = toStr(data), n = s.length;
    let cnt = 0, pad = 0;
    for (let i = 0; i < n; i++) {
      const c = cca(s, i);
      if (c === 32 || c === 9 || c === 10 || c === 12 || c === 13) continue;
      if (c === 61) { pad++; continue; }
      if (pad || c > 127 || D64[c] < 0 || c === 45 || c === 95) cnt = -1e9;
      cnt++;
    }
    if (cnt < 0 || cnt % 4 === 1 || (pad && (pad > 2 || (cnt + pad) % 4))) {
      throw domErr('The string to be decoded is not correctly encoded.', 'InvalidCharacterError');
    }
    return codes(b64bits(s, cnt));
  }
  function btoa(data) {
    if (!arguments.length) throw new TypeErr('Failed to execute \'btoa\': 1 argument required');
    const s = toStr(data), n = s.length, u = new U8(n);
    for (let i = 0; i < n; i++) {
      const c = cca(s, i);
      if (c > 255) throw domErr('The string to be encoded contains characters outside of the Latin1 range.', 'InvalidCharacterError');
      u[i] = c;
    }
    return b64enc(u, false);
  }
  return { brand, isAB, toStr, usv, range, domErr, io, bytesOf, codes, utf8Len, utf8Write, utf8, dec8, b64enc,
    b64bits, b64count, hexEnc, hexDec, hexVal, DOMException, TextEncoder, TextDecoder, atob, btoa };
*/};

  // ---- Buffer ----------------------------------------------------------------------
  SRC.buffer = () => {/*'use strict';
  const { def, isArray, floor, min, max, trunc, toPrimitive, iterator, U8, U16, DV, DVP, TypeErr, RangeErr, cca, sl,
    sIdx, lower, uncurry, taBuf, taOff, taLen, taTag, sub, taSet, taFill, taIdx, taLastIdx, taSlice, taCopyWithin,
    abLen, isView, keys } = env;
  const { Buffer } = env.S;
  const { isAB, toStr, range, bytesOf, codes, utf8Len, utf8Write, utf8, dec8, b64enc, b64bits, b64count, hexEnc,
    hexDec } = env.load('base');
  function normEnc(e, soft) {
    if (e === undefined || e === null) return 'utf8';
    switch (lower(toStr(e))) {
      case 'utf8': case 'utf-8': return 'utf8';
      case 'hex': return 'hex';
      case 'base64': return 'base64';
      case 'base64url': return 'base64url';
      case 'ascii': return 'ascii';
      case 'latin1': case 'binary': return 'latin1';
      case 'ucs2': case 'ucs-2': case 'utf16le': case 'utf-16le': return 'utf16le';
    }
    if (soft) return undefined;
    throw new TypeErr('Unknown encoding: ' + toStr(e));
  }
  function encode(s, e) {
    switch (e) {
      case 'utf8': return utf8(s);
      case 'base64': case 'base64url': return b64bits(s, b64count(s));
      case 'hex': return hexDec(s);
    }
    const n = s.length, w = e === 'utf16le', o = new U8(w ? 2 * n : n);
    for (let i = 0; i < n; i++) {
      const c = cca(s, i);
      if (w) { o[2 * i] = c; o[2 * i + 1] = c >> 8; } else o[i] = c;
    }
    return o;
  }
  function decode(u, e) {
    switch (e) {
      case 'utf8': return dec8(u, false, true);
      case 'base64': case 'base64url': return b64enc(u, e === 'base64url');
      case 'hex': return hexEnc(u);
      case 'latin1': return codes(u);
      case 'ascii': { const n = taLen(u), o = new U8(n); for (let i = 0; i < n; i++) o[i] = u[i] & 127; return codes(o); }
    }
    const n = taLen(u) >> 1, o = new U16(n);
    for (let i = 0; i < n; i++) o[i] = u[2 * i] | u[2 * i + 1] << 8;
    return codes(o);
  }
  const isU8 = (v) => isView(v) && taTag(v) === 'Uint8Array';
  const needU8 = (v, name) => {
    if (!isU8(v)) throw new TypeErr('The "' + name + '" argument must be an instance of Buffer or Uint8Array.');
  };
  const int = (v, d) => v === undefined ? d : (v = trunc(+v)) === v ? v : 0;
  function cmp(a, as, ae, b, bs, be) {
    const la = ae - as, lb = be - bs, m = min(la, lb);
    for (let i = 0; i < m; i++) { const x = a[as + i], y = b[bs + i]; if (x !== y) return x < y ? -1 : 1; }
    return la < lb ? -1 : la > lb ? 1 : 0;
  }
  function chkSize(n) {
    if (typeof n !== 'number') throw new TypeErr('The "size" argument must be of type number. Received type ' + typeof n);
    if (!(n >= 0 && n <= 2 ** 32)) throw range('size', n, 0, 2 ** 32);
  }
  function fillB(b, v, off, end, en) {
    if (typeof v === 'number' || typeof v === 'boolean') return taFill(b, +v & 255, off, end);
    const p = typeof v === 'string' ? encode(v, normEnc(en)) : isView(v) ? bytesOf(v) : null;
    if (!p) throw new TypeErr('The "value" argument must be of type number, string or Uint8Array');
    const len = end - off;
    if (!p.length || len <= 0) return len > 0 && taFill(b, 0, off, end);
    let done = min(p.length, len);
    taSet(b, sub(p, 0, done), off);
    while (done < len) { const c = min(done, len - done); taCopyWithin(b, off + done, off, off + c); done += c; }
  }
  function search(b, v, off, en, fwd) {
    const n = taLen(b);
    if (typeof off === 'string') { en = off; off = undefined; }
    off = off === undefined || (off = +off) !== off ? (fwd ? 0 : n) : trunc(off);
    if (off < 0) off += n;
    if (typeof v === 'number') {
      if (fwd) return taIdx(b, v & 255, max(off, 0));
      return off < 0 ? -1 : taLastIdx(b, v & 255, off);
    }
    const p = typeof v === 'string' ? encode(v, normEnc(en)) : isView(v) ? bytesOf(v) : null;
    if (!p) throw new TypeErr('The "value" argument must be of type number, string or Uint8Array');
    const m = p.length;
    if (!m) return fwd ? min(max(off, 0), n) : min(off, n);
    const first = p[0];
    for (let i = fwd ? max(off, 0) : min(off, n - m); fwd ? i <= n - m : i >= 0; fwd ? i++ : i--) {
      i = fwd ? taIdx(b, first, i) : taLastIdx(b, first, i);
      if (i < 0 || i > n - m) return -1;
      let k = 1;
      while (k < m && b[i + k] === p[k]) k++;
      if (k === m) return i;
    }
    return -1;
  }
  const asBuf = (u) => new Buffer(taBuf(u), taOff(u), taLen(u));
  const view = (b) => new DV(taBuf(b), taOff(b), taLen(b));
  function chkOff(b, o, size) {
    if (o === undefined) return 0;
    if (typeof o !== 'number') throw new TypeErr('The "offset" argument must be of type number. Received type ' + typeof o);
    const hi = taLen(b) - size;
    if (hi < 0) throw new RangeErr('Attempt to access memory outside buffer bounds');
    if (o !== trunc(o) || o < 0 || o > hi) throw range('offset', o, 0, hi);
    return o;
  }
  function chkInt(v, bytes, signed) {
    const lim = 2 ** (8 * bytes - (signed ? 1 : 0)), lo = signed ? -lim : 0;
    if (!(v >= lo && v <= lim - 1)) throw range('value', v, lo, lim - 1);
  }
  const chkLen = (n) => { if (n !== (n | 0) || n < 1 || n > 6) throw range('byteLength', n, 1, 6); };

  class BufferImpl {
    static from(v, a, b) {
      if (typeof v === 'string') return asBuf(encode(v, normEnc(a)));
      if (typeof v === 'object' && v !== null) {
        if (isAB(v)) {
          const n = abLen(v), off = int(a, 0), len = int(b, n - off);
          if (off < 0 || off > n) throw new RangeErr('"offset" is outside of buffer bounds');
          if (len < 0 || off + len > n) throw new RangeErr('"length" is outside of buffer bounds');
          return new Buffer(v, off, len);
        }
        if (isView(v)) return taTag(v) === undefined ? asBuf(taSlice(bytesOf(v))) : new Buffer(v);
        const p = v.valueOf();
        if (p !== v && p !== null && p !== undefined) return BufferImpl.from(p, a, b);
        if (v.type === 'Buffer' && isArray(v.data)) return new Buffer(v.data);
        if (v.length !== undefined || typeof v[iterator] === 'function') return new Buffer(v);
        if (typeof v[toPrimitive] === 'function') return BufferImpl.from(v[toPrimitive]('string'), a, b);
      }
      throw new TypeErr('The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object.');
    }
    static alloc(n, fill, en) {
      chkSize(n);
      const b = new Buffer(n);
      if (fill !== undefined && fill !== 0 && n > 0) fillB(b, fill, 0, n, en);
      return b;
    }
    static allocUnsafe(n) { chkSize(n); return new Buffer(n); }
    static allocUnsafeSlow(n) { chkSize(n); return new Buffer(n); }
    static byteLength(s, en) {
      if (typeof s !== 'string') {
        if (isView(s) || isAB(s)) return taLen(bytesOf(s));
        throw new TypeErr('The "string" argument must be of type string or an instance of Buffer or ArrayBuffer.');
      }
      switch (normEnc(en)) {
        case 'utf8': return utf8Len(s);
        case 'utf16le': return s.length * 2;
        case 'hex': return s.length >>> 1;
        case 'base64': case 'base64url': return b64count(s) * 3 >> 2;
      }
      return s.length;
    }
    static concat(list, total) {
      if (!isArray(list)) throw new TypeErr('The "list" argument must be an instance of Array.');
      const n = list.length;
      if (total === undefined) {
        total = 0;
        for (let i = 0; i < n; i++) { needU8(list[i], 'list[' + i + ']'); total += taLen(list[i]); }
      }
      const out = new Buffer(total = max(0, int(total, 0)));
      for (let i = 0, pos = 0; i < n && pos < total; i++) {
        const x = list[i];
        needU8(x, 'list[' + i + ']');
        const len = min(taLen(x), total - pos);
        taSet(out, len < taLen(x) ? sub(x, 0, len) : x, pos);
        pos += len;
      }
      return out;
    }
    static isBuffer(b) { return b instanceof Buffer; }
    static isEncoding(e) { return typeof e === 'string' && normEnc(e, true) !== undefined; }
    static compare(a, b) { needU8(a, 'buf1'); needU8(b, 'buf2'); return cmp(a, 0, taLen(a), b, 0, taLen(b)); }

    toString(en, s, e) {
      const n = taLen(this);
      s = max(0, int(s, 0)); e = min(n, int(e, n));
      if (e <= s) return '';
      return decode(s || e < n ? sub(this, s, e) : this, normEnc(en));
    }
    toJSON() {
      const n = taLen(this), data = new env.Arr(n);
      for (let i = 0; i < n; i++) data[i] = this[i];
      return { type: 'Buffer', data };
    }
    equals(o) { needU8(o, 'otherBuffer'); return this === o || cmp(this, 0, taLen(this), o, 0, taLen(o)) === 0; }
    compare(t, ts, te, ss, se) {
      needU8(t, 'target');
      const tn = taLen(t), n = taLen(this);
      ts = int(ts, 0); te = int(te, tn); ss = int(ss, 0); se = int(se, n);
      if (ts < 0 || te > tn || ss < 0 || se > n) throw new RangeErr('Out of range index');
      return cmp(this, ss, max(ss, se), t, ts, max(ts, te));
    }
    slice(s, e) { return sub(this, s, e); }
    write(str, off, len, en) {
      if (typeof str !== 'string') throw new TypeErr('The "string" argument must be of type string.');
      const n = taLen(this);
      if (typeof off === 'string') { en = off; off = 0; len = n; }
      else {
        off = int(off, 0);
        if (typeof len === 'string') { en = len; len = undefined; }
        if (off < 0 || off > n) throw range('offset', off, 0, n);
        len = min(int(len, n - off), n - off);
      }
      const e = normEnc(en);
      if (e === 'utf8') return utf8Write(str, this, off, off + len);
      const b = encode(str, e);
      let m = min(taLen(b), len);
      if (e === 'utf16le') m -= m & 1;
      taSet(this, sub(b, 0, m), off);
      return m;
    }
    fill(v, off, end, en) {
      const n = taLen(this);
      if (typeof off === 'string') { en = off; off = 0; end = n; }
      else if (typeof end === 'string') { en = end; end = n; }
      off = int(off, 0); end = int(end, n);
      if (off < 0 || off > n) throw range('offset', off, 0, n);
      if (end < 0 || end > n) throw range('end', end, 0, n);
      fillB(this, v, off, end, en);
      return this;
    }
    indexOf(v, off, en) { return search(this, v, off, en, true); }
    lastIndexOf(v, off, en) { return search(this, v, off, en, false); }
    includes(v, off, en) { return search(this, v, off, en, true) !== -1; }
    copy(t, ts, ss, se) {
      needU8(t, 'target');
      const n = taLen(this);
      ts = max(0, int(ts, 0)); ss = max(0, int(ss, 0)); se = min(n, int(se, n));
      const len = min(se - ss, taLen(t) - ts);
      if (len <= 0) return 0;
      taSet(t, sub(this, ss, ss + len), ts);
      return len;
    }
  }
  const P = BufferImpl.prototype;
  def(P, 'toLocaleString', P.toString);
  // the fixed-size readers/writers: [name, bytes, DataView type, signed (ints only)]
  const BUF_TYPES = [['UInt8', 1, 'Uint8', 0], ['UInt16', 2, 'Uint16', 0], ['UInt32', 4, 'Uint32', 0],
    ['Int8', 1, 'Int8', 1], ['Int16', 2, 'Int16', 1], ['Int32', 4, 'Int32', 1], ['Float', 4, 'Float32'],
    ['Double', 8, 'Float64'], ['BigUInt64', 8, 'BigUint64'], ['BigInt64', 8, 'BigInt64']];
  const put = (name, f) => {
    def(P, name, f);
    const i = sIdx(name, 'UInt');
    if (i >= 0) def(P, sl(name, 0, i) + 'Uint' + sl(name, i + 4), f);
  };
  for (let t = 0; t < BUF_TYPES.length; t++) {
    const nm = BUF_TYPES[t][0], size = BUF_TYPES[t][1], signed = BUF_TYPES[t][3], checked = signed !== undefined;
    const get = uncurry(DVP['get' + BUF_TYPES[t][2]]), set = uncurry(DVP['set' + BUF_TYPES[t][2]]);
    for (let k = size > 1 ? 0 : 2; k < 3; k++) {
      const e = k === 0 ? 'LE' : k === 1 ? 'BE' : '', le = k === 0, r = 'read' + nm + e, w = 'write' + nm + e;
      const m = {
        [r](o) { return get(view(this), chkOff(this, o, size), le); },
        [w](v, o) {
          o = chkOff(this, o, size);
          if (checked) chkInt(v = +v, size, signed);
          set(view(this), o, v, le);
          return o + size;
        },
      };
      put(r, m[r]); put(w, m[w]);
    }
  }
  for (let k = 0; k < 2; k++) {
    const le = k === 0, e = le ? 'LE' : 'BE', at = (o, i, n) => o + (le ? i : n - 1 - i);
    const readU = (b, o, n) => {
      chkLen(n); o = chkOff(b, o, n);
      let v = 0;
      for (let i = n - 1; i >= 0; i--) v = v * 256 + b[at(o, i, n)];
      return v;
    };
    const writeU = (b, v, o, n, signed) => {
      chkLen(n); o = chkOff(b, o, n); chkInt(v = +v, n, signed);
      if (v < 0) v += 2 ** (8 * n);
      for (let i = 0; i < n; i++, v = floor(v / 256)) b[at(o, i, n)] = v % 256;
      return o + n;
    };
    const m = {
      ['readUInt' + e](o, n) { return readU(this, o, n); },
      ['readInt' + e](o, n) { const v = readU(this, o, n); return v >= 2 ** (8 * n - 1) ? v - 2 ** (8 * n) : v; },
      ['writeUInt' + e](v, o, n) { return writeU(this, v, o, n, false); },
      ['writeInt' + e](v, o, n) { return writeU(this, v, o, n, true); },
    };
    const ks = keys(m);
    for (let i = 0; i < ks.length; i++) put(ks[i], m[ks[i]]);
  }
  return { Buffer: BufferImpl };
*/};

  // ---- URL and URLSearchParams ---------------------------------------------------
  SRC.url = () => {/*'use strict';
  const { getOwnPropertyDescriptor, ownKeys, def, apply, fromCharCode, floor, min, iterator, TypeErr, U8, U16, cca,
    sl, sIdx, sLast, lower, normalize, ssplit, join, splice, aslice, asort, numToStr, sub } = env;
  const { URL: URLShell, URLSearchParams: USPShell } = env.S;
  const { usv, utf8, dec8, hexVal } = env.load('base');
  // percent-encode sets as bits; the C0 control set (controls, DEL, non-ASCII) is implied
  const FRAG = 1, QUERY = 2, SQUERY = 4, PATH = 8, USER = 16, FORM = 64, FHOST = 128;
  const T = new U16(128);
  {
    const q = ' "#<>', p = q + '?^\x60{}', u = p + '/:;=@[\\]|', c = u + '$%&+,';
    const sets = [' "<>\x60', q, q + '\'', p, u, c, c + '!\'()~', '\0\t\n\r #/:<>?@[\\]^|'];
    for (let b = 0; b < sets.length; b++) for (let i = 0; i < sets[b].length; i++) T[cca(sets[b], i)] |= 1 << b;
  }
  const HEXU = '0123456789ABCDEF';
  const pct = (b) => '%' + HEXU[b >> 4] + HEXU[b & 15];
  function pe(s, m, plus) {
    const n = s.length;
    let out = '', st = 0;
    for (let i = 0; i < n; i++) {
      let c = cca(s, i);
      if (c > 31 && c < 127 && !(T[c] & m) && !(plus && c === 32)) continue;
      out += sl(s, st, i);
      if (c < 128) out += plus && c === 32 ? '+' : pct(c);
      else {
        if ((c & 0xFC00) === 0xD800 && (cca(s, i + 1) & 0xFC00) === 0xDC00) c = 0x10000 + ((c & 0x3FF) << 10) + (cca(s, ++i) & 0x3FF);
        else if ((c & 0xF800) === 0xD800) c = 0xFFFD;
        if (c < 0x800) out += pct(0xC0 | c >> 6);
        else {
          if (c < 0x10000) out += pct(0xE0 | c >> 12);
          else out += pct(0xF0 | c >> 18) + pct(0x80 | c >> 12 & 63);
          out += pct(0x80 | c >> 6 & 63);
        }
        out += pct(0x80 | c & 63);
      }
      st = i + 1;
    }
    return st ? out + sl(s, st) : s;
  }
  function pd(s) { // percent-decode, then UTF-8 decode (lossy)
    if (sIdx(s, '%') < 0) return s;
    const u = utf8(s), n = u.length, o = new U8(n);
    let j = 0;
    for (let i = 0; i < n; i++) {
      const b = u[i];
      if (b === 37 && i + 2 < n && hexVal(u[i + 1]) >= 0 && hexVal(u[i + 2]) >= 0) {
        o[j++] = hexVal(u[i + 1]) << 4 | hexVal(u[i + 2]); i += 2;
      } else o[j++] = b;
    }
    return dec8(sub(o, 0, j), false, true);
  }
  function replaceAll(s, a, b) {
    let i = sIdx(s, a);
    if (i < 0) return s;
    let out = '', st = 0;
    for (; i >= 0; i = sIdx(s, a, st)) { out += sl(s, st, i) + b; st = i + a.length; }
    return out + sl(s, st);
  }
  const stripTNL = (s) => replaceAll(replaceAll(replaceAll(s, '\t', ''), '\n', ''), '\r', '');
  const DP = { __proto__: null, ftp: 21, file: null, http: 80, https: 443, ws: 80, wss: 443 };
  const isAlpha = (c) => (c |= 32) >= 97 && c <= 122;
  const isDigit = (c) => c >= 48 && c <= 57;
  const isSchemeChar = (c) => isAlpha(c) || isDigit(c) || c === 43 || c === 45 || c === 46;
  const isDrive = (s) => s.length === 2 && isAlpha(cca(s, 0)) && (cca(s, 1) === 58 || cca(s, 1) === 124);
  const isNormDrive = (s) => s !== undefined && isDrive(s) && cca(s, 1) === 58;
  const startsDrive = (s) => {
    const c = cca(s, 2);
    return s.length >= 2 && isDrive(sl(s, 0, 2)) && (s.length === 2 || c === 47 || c === 92 || c === 63 || c === 35);
  };
  const isSlash = (c, sp) => c === 47 || (sp && c === 92);

  // hosts
  function ipv4Num(s) {
    if (s === '') return NaN;
    let r = 10;
    if (s.length > 1 && cca(s, 0) === 48) {
      if ((cca(s, 1) | 32) === 120) { r = 16; s = sl(s, 2); } else { r = 8; s = sl(s, 1); }
    }
    let v = 0;
    for (let i = 0; i < s.length; i++) {
      const d = hexVal(cca(s, i));
      if (d < 0 || d >= r) return NaN;
      v = v * r + d;
    }
    return v;
  }
  function endsInNumber(s) {
    const parts = ssplit(s, '.');
    if (parts[parts.length - 1] === '') { if (parts.length === 1) return false; parts.length--; }
    const last = parts[parts.length - 1];
    let i = 0;
    while (i < last.length && isDigit(cca(last, i))) i++;
    return (last !== '' && i === last.length) || ipv4Num(last) === ipv4Num(last);
  }
  function ipv4(s) {
    const parts = ssplit(s, '.');
    if (parts[parts.length - 1] === '' && parts.length > 1) parts.length--;
    const n = parts.length;
    if (n > 4) return null;
    let v = 0;
    for (let i = 0; i < n; i++) {
      const x = ipv4Num(parts[i]);
      if (x !== x) return null;
      if (i < n - 1) { if (x > 255) return null; v += x * 256 ** (3 - i); }
      else { if (x >= 256 ** (5 - n)) return null; v += x; }
    }
    const o = [];
    for (let i = 3; i >= 0; i--) { o[i] = v % 256; v = floor(v / 256); }
    return join(o, '.');
  }
  function ipv6(s) {
    const a = [0, 0, 0, 0, 0, 0, 0, 0], n = s.length, c = (i) => cca(s, i);
    let pi = 0, comp = -1, p = 0;
    if (c(0) === 58) { if (c(1) !== 58) return null; p = 2; comp = ++pi; }
    while (p < n) {
      if (pi === 8) return null;
      if (c(p) === 58) { if (comp >= 0) return null; p++; comp = ++pi; continue; }
      let v = 0, len = 0;
      while (len < 4 && hexVal(c(p)) >= 0) { v = v * 16 + hexVal(c(p)); p++; len++; }
      if (c(p) === 46) {
        if (!len || pi > 6) return null;
        p -= len;
        let seen = 0;
        while (p < n) {
          let v4 = -1;
          if (seen) { if (c(p) === 46 && seen < 4) p++; else return null; }
          if (!isDigit(c(p))) return null;
          while (isDigit(c(p))) {
            const d = c(p) - 48;
            if (v4 < 0) v4 = d; else if (v4 === 0) return null; else v4 = v4 * 10 + d;
            if (v4 > 255) return null;
            p++;
          }
          a[pi] = a[pi] * 256 + v4;
          if (++seen === 2 || seen === 4) pi++;
        }
        if (seen !== 4) return null;
        break;
      } else if (c(p) === 58) { if (++p >= n) return null; }
      else if (p < n) return null;
      a[pi++] = v;
    }
    if (comp >= 0) {
      let sw = pi - comp;
      pi = 7;
      while (pi !== 0 && sw > 0) { const t = a[comp + sw - 1]; a[comp + sw - 1] = a[pi]; a[pi] = t; pi--; sw--; }
    } else if (pi !== 8) return null;
    let best = -1, bl = 1;
    for (let i = 0, cur = -1; i < 8; i++) {
      if (a[i]) { cur = -1; continue; }
      if (cur < 0) cur = i;
      if (i - cur + 1 > bl) { bl = i - cur + 1; best = cur; }
    }
    let out = '';
    for (let i = 0; i < 8; i++) {
      if (i === best) { out += i ? ':' : '::'; i += bl - 1; continue; }
      out += numToStr(a[i], 16) + (i < 7 ? ':' : '');
    }
    return '[' + out + ']';
  }
  function punycode(label) { // RFC 3492 encode of one label
    const cps = [];
    for (let i = 0; i < label.length; i++) {
      let cp = cca(label, i);
      if ((cp & 0xFC00) === 0xD800 && (cca(label, i + 1) & 0xFC00) === 0xDC00) cp = 0x10000 + ((cp & 0x3FF) << 10) + (cca(label, ++i) & 0x3FF);
      cps[cps.length] = cp;
    }
    const digit = (d) => fromCharCode(d < 26 ? 97 + d : 22 + d);
    let out = '', n = 128, delta = 0, bias = 72, h = 0;
    for (let i = 0; i < cps.length; i++) if (cps[i] < 128) { out += fromCharCode(cps[i]); h++; }
    const b = h;
    if (b) out += '-';
    while (h < cps.length) {
      let m = Infinity;
      for (let i = 0; i < cps.length; i++) if (cps[i] >= n && cps[i] < m) m = cps[i];
      delta += (m - n) * (h + 1); n = m;
      for (let i = 0; i < cps.length; i++) {
        if (cps[i] < n) delta++;
        if (cps[i] !== n) continue;
        let q = delta;
        for (let k = 36; ; k += 36) {
          const t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
          if (q < t) break;
          out += digit(t + (q - t) % (36 - t)); q = floor((q - t) / (36 - t));
        }
        out += digit(q);
        delta = h === b ? floor(delta / 700) : delta >> 1;
        delta += floor(delta / (h + 1));
        let k = 0;
        for (; delta > 455; k += 36) delta = floor(delta / 35);
        bias = k + floor(36 * delta / (delta + 38));
        delta = 0; h++;
      }
      delta++; n++;
    }
    return 'xn--' + out;
  }
  function parseHost(s, opaque) {
    if (cca(s, 0) === 91) return cca(s, s.length - 1) === 93 ? ipv6(sl(s, 1, -1)) : null;
    if (opaque) {
      for (let i = 0; i < s.length; i++) { const c = cca(s, i); if (c < 128 && T[c] & FHOST) return null; }
      return pe(s, 0);
    }
    let d = pd(s), ascii = true;
    for (let i = 0; i < d.length; i++) if (cca(d, i) > 127) { ascii = false; break; }
    d = lower(d);
    if (!ascii) { // no UTS #46 tables: NFKC + lowercase approximates its mapping
      const labels = ssplit(replaceAll(replaceAll(lower(normalize(d, 'NFKC')), '\u3002', '.'), '\u00ad', ''), '.');
      for (let i = 0; i < labels.length; i++) {
        for (let j = 0; j < labels[i].length; j++) if (cca(labels[i], j) > 127) { labels[i] = punycode(labels[i]); break; }
      }
      d = join(labels, '.');
    }
    if (d === '') return null;
    for (let i = 0; i < d.length; i++) {
      const c = cca(d, i);
      if (c < 32 || c === 37 || c > 126 || T[c] & FHOST) return null;
    }
    return endsInNumber(d) ? ipv4(d) : d;
  }

  // URL records: s scheme, u username, p password, h host (null if none), o port
  // (null if none), a path (array of segments, or a string when opaque), q query, f fragment
  const rec = () => ({ s: '', u: '', p: '', h: null, o: null, a: [], q: null, f: null });
  function shorten(r) {
    const a = r.a;
    if (r.s === 'file' && a.length === 1 && isNormDrive(a[0])) return;
    if (a.length) a.length--;
  }
  function segs(s, r, sp) { // the path state, over a whole path string
    const a = r.a, n = s.length;
    for (let i = 0, st = 0; i <= n; i++) {
      const c = i < n ? cca(s, i) : -1;
      if (c >= 0 && !isSlash(c, sp)) continue;
      let seg = pe(sl(s, st, i), PATH);
      const l = seg.length < 7 ? lower(seg) : '';
      st = i + 1;
      if (l === '..' || l === '.%2e' || l === '%2e.' || l === '%2e%2e') { shorten(r); if (c < 0) a[a.length] = ''; }
      else if (l === '.' || l === '%2e') { if (c < 0) a[a.length] = ''; }
      else {
        if (r.s === 'file' && !a.length && isDrive(seg)) seg = sl(seg, 0, 1) + ':';
        a[a.length] = seg;
      }
    }
  }
  function qf(s, r) { // splits off the fragment and the query; returns the path part
    let i = sIdx(s, '#');
    if (i >= 0) { r.f = pe(sl(s, i + 1), FRAG); s = sl(s, 0, i); }
    i = sIdx(s, '?');
    if (i >= 0) { r.q = pe(sl(s, i + 1), r.s in DP ? SQUERY : QUERY); s = sl(s, 0, i); }
    return s;
  }
  // mode 0: query and fragment only; 1: path start state; 2: path state
  function tail(s, r, mode) {
    const sp = r.s in DP;
    s = qf(s, r);
    if (mode === 1) {
      if (isSlash(cca(s, 0), sp) || (!sp && cca(s, 0) === 47)) s = sl(s, 1);
      else if (!sp && s === '') return r;
    }
    if (mode) segs(s, r, sp);
    return r;
  }
  function hostPort(hp, r, sp, ov) { // ov: 0 parsing, 1 host setter, 2 hostname setter
    const n = hp.length;
    let i = 0;
    for (let br = false; i < n; i++) {
      const c = cca(hp, i);
      if (c === 91) br = true; else if (c === 93) br = false; else if (c === 58 && !br) break;
    }
    const hs = sl(hp, 0, i);
    if (hs === '') {
      if (i < n || sp || (ov && (r.u || r.p || r.o !== null))) return false;
      r.h = '';
      return true;
    }
    if (i < n && ov === 2) return false;
    const h = parseHost(hs, !sp);
    if (h === null) return false;
    r.h = h;
    if (i < n) {
      const ps = sl(hp, i + 1);
      let j = 0, v = 0;
      for (; j < ps.length && isDigit(cca(ps, j)); j++) v = v * 10 + cca(ps, j) - 48;
      if ((j < ps.length && !ov) || v > 65535) return false;
      if (j) r.o = v === DP[r.s] ? null : v;
    }
    return true;
  }
  function authority(s, r, sp) {
    let e = 0;
    for (const n = s.length; e < n; e++) { const c = cca(s, e); if (c === 63 || c === 35 || isSlash(c, sp)) break; }
    const au = sl(s, 0, e), at = sLast(au, '@');
    let hp = au;
    if (at >= 0) {
      const cred = sl(au, 0, at), col = sIdx(cred, ':');
      hp = sl(au, at + 1);
      if (hp === '') return null;
      r.u = pe(col < 0 ? cred : sl(cred, 0, col), USER);
      if (col >= 0) r.p = pe(sl(cred, col + 1), USER);
    }
    return hostPort(hp, r, sp, 0) ? tail(sl(s, e), r, 1) : null;
  }
  const copyAuth = (r, b) => { r.u = b.u; r.p = b.p; r.h = b.h; r.o = b.o; };
  function skipSlashes(s) { let i = 0; while (isSlash(cca(s, i), true)) i++; return sl(s, i); }
  function relative(s, b, r) {
    const sp = r.s in DP, c = cca(s, 0);
    if (isSlash(c, sp)) {
      if (isSlash(cca(s, 1), sp)) return authority(sp ? skipSlashes(s) : sl(s, 2), r, sp);
      copyAuth(r, b);
      return tail(s, r, 1);
    }
    copyAuth(r, b); r.a = aslice(b.a); r.q = b.q;
    if (c === 63 || c === 35 || s === '') return tail(s, r, 0);
    r.q = null;
    shorten(r);
    return tail(s, r, 2);
  }
  function file(s, b, r) {
    r.s = 'file'; r.h = '';
    const c = cca(s, 0);
    if (isSlash(c, true)) {
      if (isSlash(cca(s, 1), true)) { // file host state
        let e = 2;
        while (e < s.length && !isSlash(cca(s, e), true) && cca(s, e) !== 63 && cca(s, e) !== 35) e++;
        const hb = sl(s, 2, e);
        if (isDrive(hb)) return tail(sl(s, 2), r, 2);
        if (hb !== '') {
          const h = parseHost(hb, false);
          if (h === null) return null;
          r.h = h === 'localhost' ? '' : h;
        }
        return tail(sl(s, e), r, 1);
      }
      if (b) { r.h = b.h; if (!startsDrive(sl(s, 1)) && isNormDrive(b.a[0])) r.a = [b.a[0]]; }
      return tail(sl(s, 1), r, 2);
    }
    if (b) {
      r.h = b.h; r.a = aslice(b.a); r.q = b.q;
      if (c === 63 || c === 35 || s === '') return tail(s, r, 0);
      r.q = null;
      if (!startsDrive(s)) shorten(r); else r.a = [];
    }
    return tail(s, r, 2);
  }
  function parse(input, base) {
    let a = 0, z = input.length;
    while (a < z && cca(input, a) <= 32) a++;
    while (z > a && cca(input, z - 1) <= 32) z--;
    const s = stripTNL(sl(input, a, z)), r = rec();
    let i = 0;
    if (isAlpha(cca(s, 0))) {
      while (isSchemeChar(cca(s, ++i)));
      if (cca(s, i) !== 58) i = 0;
    }
    if (!i) { // no scheme
      if (!base) return null;
      if (typeof base.a === 'string') {
        if (cca(s, 0) !== 35) return null;
        r.s = base.s; r.a = base.a; r.q = base.q;
        return tail(s, r, 0);
      }
      r.s = base.s;
      return r.s === 'file' ? file(s, base, r) : relative(s, base, r);
    }
    r.s = lower(sl(s, 0, i));
    const rest = sl(s, i + 1);
    if (r.s === 'file') return file(rest, base && base.s === 'file' ? base : null, r);
    if (r.s in DP) return base && base.s === r.s ? relative(rest, base, r) : authority(skipSlashes(rest), r, true);
    if (cca(rest, 0) === 47) return cca(rest, 1) === 47 ? authority(sl(rest, 2), r, false) : tail(rest, r, 1);
    r.a = pe(qf(rest, r), 0); // opaque path
    return r;
  }
  const pathname = (r) => typeof r.a === 'string' ? r.a : r.a.length ? '/' + join(r.a, '/') : '';
  const portSuffix = (r) => r.o !== null ? ':' + r.o : '';
  function href(r) {
    let out = r.s + ':';
    if (r.h !== null) {
      out += '//';
      if (r.u !== '' || r.p !== '') out += r.u + (r.p !== '' ? ':' + r.p : '') + '@';
      out += r.h + portSuffix(r);
    } else if (typeof r.a !== 'string' && r.a.length > 1 && r.a[0] === '') out += '/.';
    out += pathname(r);
    if (r.q !== null) out += '?' + r.q;
    if (r.f !== null) out += '#' + r.f;
    return out;
  }
  const invalidURL = (input) => {
    const e = new TypeErr('Invalid URL');
    e.code = 'ERR_INVALID_URL'; e.input = input;
    return e;
  };
  function parseArgs(url, base) {
    url = usv(url);
    let b = null;
    if (base !== undefined) { b = parse(usv(base), null); if (!b) return [null, url]; }
    return [parse(url, b), url];
  }
  const MAKE = {};
  let spOf, spReset; // URLSearchParams internals: a linked instance, a list reset

  class URL {
    #r; #sp = null;
    constructor(url, base = undefined) {
      if (url === MAKE) { this.#r = base; return; }
      if (!arguments.length) throw new TypeErr('Failed to construct \'URL\': 1 argument required, but only 0 present.');
      const parsed = parseArgs(url, base);
      if (!parsed[0]) throw invalidURL(parsed[1]);
      this.#r = parsed[0];
    }
    static canParse(url, base = undefined) { return !!parseArgs(url, base)[0]; }
    static parse(url, base = undefined) { const r = parseArgs(url, base)[0]; return r ? new URLShell(MAKE, r) : null; }
    get href() { return href(this.#r); }
    set href(v) {
      const r = parse(usv(v), null);
      if (!r) throw invalidURL(usv(v));
      const t = this.#r;
      t.s = r.s; t.u = r.u; t.p = r.p; t.h = r.h; t.o = r.o; t.a = r.a; t.q = r.q; t.f = r.f;
      if (this.#sp) spReset(this.#sp, r.q);
    }
    get origin() {
      const r = this.#r;
      if (r.s === 'blob') {
        const u = parse(pathname(r), null);
        return u && (u.s === 'http' || u.s === 'https') ? u.s + '://' + u.h + portSuffix(u) : 'null';
      }
      if (!(r.s in DP) || r.s === 'file') return 'null';
      return r.s + '://' + r.h + portSuffix(r);
    }
    get protocol() { return this.#r.s + ':'; }
    set protocol(v) {
      const r = this.#r;
      v = stripTNL(usv(v)) + ':';
      let i = 0;
      if (!isAlpha(cca(v, 0))) return;
      while (isSchemeChar(cca(v, ++i)));
      if (cca(v, i) !== 58) return;
      const s = lower(sl(v, 0, i));
      if ((s in DP) !== (r.s in DP) || (s === 'file' && (r.u || r.p || r.o !== null)) || (r.s === 'file' && r.h === '')) return;
      r.s = s;
      if (r.o === DP[s]) r.o = null;
    }
    get username() { return this.#r.u; }
    set username(v) { const r = this.#r; if (r.h && r.s !== 'file') r.u = pe(usv(v), USER); }
    get password() { return this.#r.p; }
    set password(v) { const r = this.#r; if (r.h && r.s !== 'file') r.p = pe(usv(v), USER); }
    get host() { const r = this.#r; return r.h === null ? '' : r.h + portSuffix(r); }
    set host(v) { hostSet(this.#r, v, 1); }
    get hostname() { return this.#r.h ?? ''; }
    set hostname(v) { hostSet(this.#r, v, 2); }
    get port() { const o = this.#r.o; return o === null ? '' : '' + o; }
    set port(v) {
      const r = this.#r;
      if (!r.h || r.s === 'file') return;
      v = stripTNL(usv(v));
      if (v === '') { r.o = null; return; }
      let j = 0, n = 0;
      for (; isDigit(cca(v, j)); j++) n = n * 10 + cca(v, j) - 48;
      if (j && n <= 65535) r.o = n === DP[r.s] ? null : n;
    }
    get pathname() { return pathname(this.#r); }
    set pathname(v) {
      const r = this.#r, sp = r.s in DP;
      if (typeof r.a === 'string') return;
      v = stripTNL(usv(v));
      r.a = [];
      if (isSlash(cca(v, 0), sp)) v = sl(v, 1);
      else if (!sp && v === '') { if (r.h === null) r.a[0] = ''; return; }
      segs(v, r, sp);
    }
    get search() { const q = this.#r.q; return q ? '?' + q : ''; }
    set search(v) {
      const r = this.#r;
      v = usv(v);
      const hadMark = cca(v, 0) === 63;
      if (hadMark) v = sl(v, 1);
      r.q = v === '' && !hadMark ? null : pe(stripTNL(v), r.s in DP ? SQUERY : QUERY);
      if (this.#sp) spReset(this.#sp, v);
    }
    get searchParams() { return this.#sp ??= spOf(this.#r); }
    get hash() { const f = this.#r.f; return f ? '#' + f : ''; }
    set hash(v) {
      const r = this.#r;
      v = usv(v);
      if (v === '') { r.f = null; return; }
      r.f = pe(stripTNL(cca(v, 0) === 35 ? sl(v, 1) : v), FRAG);
    }
    toString() { return href(this.#r); }
    toJSON() { return href(this.#r); }
  }
  function hostSet(r, v, ov) {
    if (typeof r.a === 'string') return;
    v = stripTNL(usv(v));
    const sp = r.s in DP;
    let e = 0;
    while (e < v.length && !isSlash(cca(v, e), sp) && cca(v, e) !== 63 && cca(v, e) !== 35) e++;
    v = sl(v, 0, e);
    if (r.s !== 'file') { hostPort(v, r, sp, ov); return; }
    const h = v === '' ? '' : parseHost(v, false);
    if (h !== null) r.h = h === 'localhost' ? '' : h;
  }

  const formDec = (s) => pd(replaceAll(s, '+', ' '));
  function parseForm(s) {
    const out = [], n = s.length;
    for (let st = 0; st < n;) {
      let e = sIdx(s, '&', st);
      if (e < 0) e = n;
      if (e > st) {
        const seq = sl(s, st, e), eq = sIdx(seq, '=');
        out[out.length] = eq < 0 ? [formDec(seq), ''] : [formDec(sl(seq, 0, eq)), formDec(sl(seq, eq + 1))];
      }
      st = e + 1;
    }
    return out;
  }
  function serialize(l) {
    const out = [];
    for (let i = 0; i < l.length; i++) out[i] = pe(l[i][0], FORM, true) + '=' + pe(l[i][1], FORM, true);
    return join(out, '&');
  }
  const badPair = () => new TypeErr('Each query pair must be an iterable [name, value] tuple');
  class URLSearchParams {
    #l = []; #r = null;
    constructor(init = '') {
      if ((typeof init === 'object' && init !== null) || typeof init === 'function') {
        const it = init[iterator], l = this.#l;
        if (it !== undefined && it !== null) {
          if (typeof it !== 'function') throw new TypeErr('The query pairs must be iterable');
          for (const pair of init) {
            const p = [];
            if (typeof pair !== 'object' || pair === null) throw badPair();
            for (const x of pair) p[p.length] = x;
            if (p.length !== 2) throw badPair();
            l[l.length] = [usv(p[0]), usv(p[1])];
          }
        } else {
          const ks = ownKeys(init);
          for (let i = 0; i < ks.length; i++) {
            const k = ks[i], d = getOwnPropertyDescriptor(init, k);
            if (typeof k === 'string' && d && d.enumerable) l[l.length] = [usv(k), usv(init[k])];
          }
        }
      } else {
        const s = usv(init);
        this.#l = parseForm(cca(s, 0) === 63 ? sl(s, 1) : s);
      }
    }
    #update() { if (this.#r) { const s = serialize(this.#l); this.#r.q = s === '' ? null : s; } }
    get size() { return this.#l.length; }
    append(name, value) { const l = this.#l; l[l.length] = [usv(name), usv(value)]; this.#update(); }
    delete(name, value = undefined) {
      const l = this.#l, n = usv(name), v = value === undefined ? undefined : usv(value);
      for (let i = l.length - 1; i >= 0; i--) if (l[i][0] === n && (v === undefined || l[i][1] === v)) splice(l, i, 1);
      this.#update();
    }
    get(name) {
      const l = this.#l, n = usv(name);
      for (let i = 0; i < l.length; i++) if (l[i][0] === n) return l[i][1];
      return null;
    }
    getAll(name) {
      const l = this.#l, n = usv(name), out = [];
      for (let i = 0; i < l.length; i++) if (l[i][0] === n) out[out.length] = l[i][1];
      return out;
    }
    has(name, value = undefined) {
      const l = this.#l, n = usv(name), v = value === undefined ? undefined : usv(value);
      for (let i = 0; i < l.length; i++) if (l[i][0] === n && (v === undefined || l[i][1] === v)) return true;
      return false;
    }
    set(name, value) {
      const l = this.#l, n = usv(name), v = usv(value);
      let found = false;
      for (let i = 0; i < l.length; i++) {
        if (l[i][0] !== n) continue;
        if (found) splice(l, i--, 1);
        else { l[i] = [n, v]; found = true; }
      }
      if (!found) l[l.length] = [n, v];
      this.#update();
    }
    sort() {
      asort(this.#l, (a, b) => {
        const x = a[0], y = b[0];
        for (let i = 0, n = min(x.length, y.length); i < n; i++) { const d = cca(x, i) - cca(y, i); if (d) return d; }
        return x.length - y.length;
      });
      this.#update();
    }
    forEach(cb, thisArg = undefined) {
      if (typeof cb !== 'function') throw new TypeErr('The "callback" argument must be a function');
      const l = this.#l;
      for (let i = 0; i < l.length; i++) apply(cb, thisArg, [l[i][1], l[i][0], this]);
    }
    * keys() { const l = this.#l; for (let i = 0; i < l.length; i++) yield l[i][0]; }
    * values() { const l = this.#l; for (let i = 0; i < l.length; i++) yield l[i][1]; }
    * entries() { const l = this.#l; for (let i = 0; i < l.length; i++) yield [l[i][0], l[i][1]]; }
    toString() { return serialize(this.#l); }
    static {
      spOf = (r) => { const sp = new USPShell(r.q ?? ''); sp.#r = r; return sp; };
      spReset = (sp, q) => { sp.#l = q ? parseForm(q) : []; };
    }
  }
  def(URLSearchParams.prototype, iterator, URLSearchParams.prototype.entries);
  return { URL, URLSearchParams };
*/};

  // ---- structuredClone -------------------------------------------------------------
  SRC.clone = () => {/*'use strict';
  const { defineProperty, getPrototypeOf, getOwnPropertyDescriptor, keys, hasOwn, def, isArray, Obj, Arr, ERRORS,
    Map_, Set_, Date_, RegExp_, U8, AB, DV, TAS, sl, aIncludes, objToStr, taBuf, taOff, taLen, taTag, taSet, dvBuf,
    dvOff, dvLen, abLen, abSlice, isView, abTransfer, abResizable, abMax, abDetached, mapGet, mapSet, mapSize, mapEach,
    setAdd, setSize, setEach, dateGet, reSrc, reFlags, weakMapHas, weakSetHas, boxes, symVal, isError,
    TypeErr } = env;
  const { brand, isAB, toStr, domErr } = env.load('base');
  const OP = Obj.prototype, TA = { __proto__: null }, ERR = { __proto__: null };
  for (let i = 0; i < TAS.length; i++) if (TAS[i]) TA[TAS[i].name] = TAS[i];
  for (let i = 0; i < ERRORS.length; i++) ERR[ERRORS[i].name] = ERRORS[i];
  const cloneErr = (what) => domErr(what + ' could not be cloned.', 'DataCloneError');
  const UNCLONABLE = ['Promise', 'WeakRef', 'FinalizationRegistry', 'Generator', 'AsyncGenerator'];
  const KEY = {};
  function copyProps(v, c, mem) {
    const ks = keys(v);
    for (let i = 0; i < ks.length; i++) {
      const k = ks[i];
      if (!hasOwn(v, k)) continue;
      const x = clone(v[k], mem);
      if (k === '__proto__') defineProperty(c, k, { value: x, writable: true, enumerable: true, configurable: true });
      else c[k] = x;
    }
    return c;
  }
  function cloneSpecial(v, mem) {
    let c;
    if (isView(v)) {
      const tag = taTag(v);
      if (tag !== undefined) c = new TA[tag](clone(taBuf(v), mem), taOff(v), taLen(v));
      else c = new DV(clone(dvBuf(v), mem), dvOff(v), dvLen(v));
    } else if (isAB(v)) {
      if (abDetached && abDetached(v)) throw cloneErr('A detached ArrayBuffer');
      if (abResizable && abResizable(v)) {
        c = new AB(abLen(v), { maxByteLength: abMax(v) });
        taSet(new U8(c), new U8(v));
      } else c = abSlice(v, 0);
    } else if (brand(dateGet, v)) c = new Date_(dateGet(v));
    else if (brand(reSrc, v)) c = new RegExp_(reSrc(v), reFlags(v));
    else if (brand(mapSize, v)) {
      const e = [];
      mapEach(v, (val, key) => { e[e.length] = key; e[e.length] = val; });
      mapSet(mem, v, c = new Map_());
      for (let i = 0; i < e.length; i += 2) mapSet(c, clone(e[i], mem), clone(e[i + 1], mem));
      return c;
    } else if (brand(setSize, v)) {
      const e = [];
      setEach(v, (val) => { e[e.length] = val; });
      mapSet(mem, v, c = new Set_());
      for (let i = 0; i < e.length; i++) setAdd(c, clone(e[i], mem));
      return c;
    } else if (isError ? isError(v) : objToStr(v) === '[object Error]') {
      const name = v.name, md = getOwnPropertyDescriptor(v, 'message');
      mapSet(mem, v, c = new ERR[typeof name === 'string' && name in ERR ? name : 'Error']());
      if (md && 'value' in md) def(c, 'message', toStr(md.value));
      const sd = getOwnPropertyDescriptor(v, 'stack');
      if (sd && typeof sd.value === 'string') def(c, 'stack', sd.value);
      if (hasOwn(v, 'cause')) def(c, 'cause', clone(v.cause, mem));
      return c;
    } else {
      for (let i = 0; i < boxes.length; i++) if (brand(boxes[i], v)) { c = Obj(boxes[i](v)); break; }
      if (!c) {
        if (brand(symVal, v) || brand((x) => weakMapHas(x, KEY), v) || brand((x) => weakSetHas(x, KEY), v)) {
          throw cloneErr('#<Object>');
        }
        const tag = sl(objToStr(v), 8, -1);
        if (aIncludes(UNCLONABLE, tag)) throw cloneErr('#<' + tag + '>');
        return undefined;
      }
    }
    mapSet(mem, v, c);
    return c;
  }
  function clone(v, mem) {
    const t = typeof v;
    if (t === 'function') throw cloneErr(v.name ? '' + v.name : 'function');
    if (t === 'symbol') throw cloneErr('Symbol()');
    if (t !== 'object' || v === null) return v;
    let c = mapGet(mem, v);
    if (c !== undefined) return c;
    if (isArray(v)) { mapSet(mem, v, c = new Arr(v.length)); return copyProps(v, c, mem); }
    const proto = getPrototypeOf(v);
    if (proto !== OP && proto !== null && (c = cloneSpecial(v, mem)) !== undefined) return c;
    mapSet(mem, v, c = {});
    return copyProps(v, c, mem);
  }
  function structuredClone(value, options = undefined) {
    if (!arguments.length) throw new TypeErr('Failed to execute \'structuredClone\': 1 argument required, but only 0 present.');
    const transfer = [];
    if (options !== undefined && options !== null && options.transfer !== undefined) {
      for (const t of options.transfer) {
        if (!isAB(t)) throw cloneErr('Value not transferable:');
        if (aIncludes(transfer, t)) throw cloneErr('A duplicate ArrayBuffer in the transfer list');
        transfer[transfer.length] = t;
      }
    }
    const out = clone(value, new Map_());
    if (abTransfer) for (let i = 0; i < transfer.length; i++) abTransfer(transfer[i]);
    return out;
  }
  return { structuredClone };
*/};

  // ---- Event, EventTarget, AbortSignal, AbortController ------------------------------
  SRC.events = () => {/*'use strict';
  const { G, apply, trunc, now, MAX_SAFE, TypeErr, Map_, mapGet, mapSet, aslice, aIdx, splice } = env;
  const { Event: EventShell, AbortSignal: SignalShell } = env.S;
  const { toStr, domErr } = env.load('base');
  const T0 = now();
  let evState, isEvent, addL, fire, sigAlgo, isSignal, sigAborted, sigAbort;
  const report = (err) => {
    const r = G.reportError, c = G.console;
    try { if (typeof r === 'function') r(err); else if (c && typeof c.error === 'function') c.error(err); } catch { return; } // nowhere left to report it
  };
  class Event {
    #s;
    constructor(type, init = undefined) {
      if (!arguments.length) throw new TypeErr('Failed to construct \'Event\': 1 argument required, but only 0 present.');
      const i = init ?? {};
      this.#s = { type: toStr(type), bubbles: !!i.bubbles, cancelable: !!i.cancelable, composed: !!i.composed,
        dp: false, stop: 0, target: null, cur: null, phase: 0, trusted: false, passive: false, busy: false, ts: now() - T0 };
    }
    get type() { return this.#s.type; }
    get target() { return this.#s.target; }
    get srcElement() { return this.#s.target; }
    get currentTarget() { return this.#s.cur; }
    get eventPhase() { return this.#s.phase; }
    get bubbles() { return this.#s.bubbles; }
    get cancelable() { return this.#s.cancelable; }
    get composed() { return this.#s.composed; }
    get defaultPrevented() { return this.#s.dp; }
    get returnValue() { return !this.#s.dp; }
    get isTrusted() { return this.#s.trusted; }
    get timeStamp() { return this.#s.ts; }
    get cancelBubble() { return !!this.#s.stop; }
    set cancelBubble(v) { if (v) this.#s.stop |= 1; }
    composedPath() { return this.#s.cur ? [this.#s.cur] : []; }
    preventDefault() { const s = this.#s; if (s.cancelable && !s.passive) s.dp = true; }
    stopPropagation() { this.#s.stop |= 1; }
    stopImmediatePropagation() { this.#s.stop = 3; }
    static { evState = (e) => e.#s; isEvent = (e) => typeof e === 'object' && e !== null && #s in e; }
  }
  class EventTarget {
    #l = null;
    addEventListener(type, cb, options = undefined) { addL(this, toStr(type), cb, options); }
    removeEventListener(type, cb, options = undefined) {
      const cap = typeof options === 'boolean' ? options : !!(options && options.capture);
      const a = this.#l && mapGet(this.#l, toStr(type));
      if (!a) return;
      for (let i = 0; i < a.length; i++) if (a[i].cb === cb && a[i].cap === cap) { a[i].gone = true; splice(a, i, 1); return; }
    }
    dispatchEvent(e) {
      if (!isEvent(e)) throw new TypeErr('Failed to execute \'dispatchEvent\' on \'EventTarget\': parameter 1 is not of type \'Event\'.');
      if (evState(e).busy) throw domErr('The event is already being dispatched.', 'InvalidStateError');
      evState(e).trusted = false;
      return fire(this, e);
    }
    static {
      addL = (t, type, cb, o) => {
        if (cb === null || cb === undefined) return;
        if (typeof cb !== 'function' && typeof cb !== 'object') throw new TypeErr('The "listener" argument must be an object');
        let cap = false, once = false, passive = false, sig = null;
        if (typeof o === 'boolean') cap = o;
        else if (o !== null && o !== undefined) {
          cap = !!o.capture; once = !!o.once; passive = !!o.passive; sig = o.signal ?? null;
          if (sig !== null && !isSignal(sig)) throw new TypeErr('The "signal" option must be an AbortSignal');
        }
        if (sig && sigAborted(sig)) return;
        const m = t.#l ??= new Map_();
        let a = mapGet(m, type);
        if (!a) mapSet(m, type, a = []);
        for (let i = 0; i < a.length; i++) if (a[i].cb === cb && a[i].cap === cap) return;
        const l = { cb, cap, once, passive, gone: false };
        a[a.length] = l;
        if (sig) sigAlgo(sig, () => { l.gone = true; const i = aIdx(a, l); if (i >= 0) splice(a, i, 1); });
      };
      fire = (t, e) => {
        const s = evState(e), a = t.#l && mapGet(t.#l, s.type);
        s.busy = true; s.target = s.cur = t; s.phase = 2;
        const list = a ? aslice(a) : [];
        for (let i = 0; i < list.length && !(s.stop & 2); i++) {
          const l = list[i];
          if (l.gone) continue;
          if (l.once) { l.gone = true; splice(a, aIdx(a, l), 1); }
          s.passive = l.passive;
          try {
            if (typeof l.cb === 'function') apply(l.cb, t, [e]);
            else {
              const h = l.cb.handleEvent;
              if (typeof h !== 'function') throw new TypeErr('handleEvent is not a function');
              apply(h, l.cb, [e]);
            }
          } catch (err) { report(err); }
          s.passive = false;
        }
        s.busy = false; s.cur = null; s.phase = 0; s.stop = 0;
        return !s.dp;
      };
    }
  }

  const KEY = {};
  const abortReason = () => domErr('This operation was aborted', 'AbortError');
  class AbortSignal extends EventTarget {
    #aborted = false; #reason = undefined; #h = null; #hl = false; #algos = []; #deps = [];
    constructor(key = undefined) {
      if (key !== KEY) throw new TypeErr('Illegal constructor');
      super();
    }
    get aborted() { return this.#aborted; }
    get reason() { return this.#reason; }
    throwIfAborted() { if (this.#aborted) throw this.#reason; }
    get onabort() { return this.#h; }
    set onabort(f) {
      this.#h = typeof f === 'function' ? f : null;
      if (this.#h && !this.#hl) {
        this.#hl = true;
        addL(this, 'abort', (e) => { const h = this.#h; if (h) apply(h, this, [e]); });
      }
    }
    static abort(reason = undefined) {
      const s = new SignalShell(KEY);
      s.#aborted = true; s.#reason = reason === undefined ? abortReason() : reason;
      return s;
    }
    static timeout(ms) {
      ms = +ms;
      if (!(ms >= 0 && ms <= MAX_SAFE)) throw new TypeErr('The "ms" argument must be a non-negative integer');
      const s = new SignalShell(KEY), st = G.setTimeout;
      if (typeof st === 'function') st(() => sigAbort(s, domErr('The operation was aborted due to timeout', 'TimeoutError')), trunc(ms));
      return s;
    }
    static any(signals) {
      const s = new SignalShell(KEY), list = [];
      for (const x of signals) {
        if (!isSignal(x)) throw new TypeErr('Each item must be an AbortSignal');
        list[list.length] = x;
      }
      for (let i = 0; i < list.length; i++) if (list[i].#aborted) { s.#aborted = true; s.#reason = list[i].#reason; return s; }
      for (let i = 0; i < list.length; i++) { const d = list[i].#deps; d[d.length] = s; }
      return s;
    }
    static {
      const run = (s) => {
        const a = s.#algos;
        s.#algos = [];
        for (let i = 0; i < a.length; i++) a[i]();
        const e = new EventShell('abort');
        evState(e).trusted = true;
        fire(s, e);
      };
      sigAbort = (s, reason) => {
        if (s.#aborted) return;
        s.#aborted = true; s.#reason = reason === undefined ? abortReason() : reason;
        const deps = [], all = s.#deps;
        s.#deps = [];
        for (let i = 0; i < all.length; i++) {
          const d = all[i];
          if (!d.#aborted) { d.#aborted = true; d.#reason = s.#reason; deps[deps.length] = d; }
        }
        run(s);
        for (let i = 0; i < deps.length; i++) run(deps[i]);
      };
      sigAlgo = (s, f) => { if (!s.#aborted) { const a = s.#algos; a[a.length] = f; } };
      isSignal = (x) => typeof x === 'object' && x !== null && #aborted in x;
      sigAborted = (s) => s.#aborted;
    }
  }
  class AbortController {
    #signal = new SignalShell(KEY);
    get signal() { return this.#signal; }
    abort(reason = undefined) { sigAbort(this.#signal, reason); }
  }
  return { Event, EventTarget, AbortSignal, AbortController };
*/};

  // ---- loading ---------------------------------------------------------------------
  const loaded = { __proto__: null };
  // compiles a chunk once, then moves its members onto the shells
  function load(k) {
    let m = loaded[k];
    if (m) return m;
    if (!env) {
      env = { __proto__: null };
      for (let i = 0; i < ENV.length; i += 2) env[ENV[i]] = ENV[i + 1];
    }
    const code = textOf(k, SRC[k]);
    m = loaded[k] = Fn('env', code + '\n//# sourceURL=webjobs:polyfills/' + k)(env);
    const names = keys(m);
    for (let i = 0; i < names.length; i++) {
      const S = shells[names[i]];
      if (!S) continue;
      setPrototypeOf(S.prototype, parents[names[i]]);
      adopt(m[names[i]].prototype, S.prototype, true);
      adopt(m[names[i]], S, false);
    }
    return m;
  }
  // chunk k's text: from the library when there is one, else from f's comment
  function textOf(k, f) {
    return library !== null && hasOwn(LIBRARY, k) ? fromLibrary(LIBRARY[k]) : commentOf(f);
  }
  function commentOf(f) {
    const text = fnSrc(f);
    return sl(text, sIdx(text, '/*') + 2, sLast(text, '*/'));
  }
  function fromLibrary(where) {
    const start = where[0], length = where[1];
    let out = '';
    for (let i = 0; i < length; i += 8192) {
      const n = length - i < 8192 ? length - i : 8192;
      out += apply(fromCC, null, new U16(library, libraryAt + (start + i) * 2, n));
    }
    return out;
  }
  function adopt(from, to, proto) {
    const ks = ownKeys(from);
    for (let i = 0; i < ks.length; i++) {
      const k = ks[i];
      if (k === toStringTag || (proto ? k === 'constructor' : k === 'length' || k === 'name' || k === 'prototype')) continue;
      defineProperty(to, k, getOwnPropertyDescriptor(from, k));
    }
  }
  // The shells: constructors that build the real thing; static methods as stubs; until
  // the chunk is loaded the prototype's parent is a proxy, so that the first lookup of a
  // member that is not there yet loads it.
  for (const [name, chunk, parentName, length, statics] of [
    ['DOMException', 'base', 'Error', 0], ['TextEncoder', 'base', null, 0], ['TextDecoder', 'base', null, 0],
    ['Buffer', 'buffer', 'Uint8Array', 3, 'from alloc allocUnsafe allocUnsafeSlow byteLength concat isBuffer isEncoding compare'],
    ['URL', 'url', null, 1, 'canParse parse'], ['URLSearchParams', 'url', null, 0], ['Event', 'events', null, 1],
    ['EventTarget', 'events', null, 0], ['AbortSignal', 'events', 'EventTarget', 0, 'abort timeout any'],
    ['AbortController', 'events', null, 0]]) {
    const Parent = parentName === null ? null : shells[parentName] || G[parentName];
    const C = class extends Parent {
      constructor(...a) { return construct(Parent === U8 ? U8 : load(chunk)[name], a, new.target); }
    };
    defineProperty(C, 'name', { value: name, configurable: true });
    defineProperty(C, 'length', { value: length, configurable: true });
    const P = C.prototype, parent = Parent ? Parent.prototype : Object.prototype;
    if (Parent !== U8) defineProperty(P, toStringTag, { value: name, configurable: true });
    if (statics) {
      for (const k of statics.split(' ')) {
        const f = function (...a) {
          load(chunk);
          if (C[k] === f) throw new TypeError(`${k} is not available`);
          return apply(C[k], this, a);
        };
        def(C, k, f);
      }
    }
    parents[name] = parent;
    setPrototypeOf(P, new Proxy(parent, {
      get: (t, k, r) => { load(chunk); return reflectGet(P, k, r); },
      set: (t, k, v, r) => { load(chunk); return reflectSet(P, k, v, r); },
      has: (t, k) => { load(chunk); return k in P; },
    }));
    shells[name] = C;
  }
  ['NONE', 'CAPTURING_PHASE', 'AT_TARGET', 'BUBBLING_PHASE'].forEach((k, i) => {
    defineProperty(shells.Event, k, { value: i, enumerable: true });
    defineProperty(shells.Event.prototype, k, { value: i, enumerable: true });
  });

  // ---- install -----------------------------------------------------------------------
  const fns = {
    atob(data) { return apply(load('base').atob, undefined, arguments); },
    btoa(data) { return apply(load('base').btoa, undefined, arguments); },
    structuredClone(value, options = undefined) { return apply(load('clone').structuredClone, undefined, arguments); },
  };
  for (const k in shells) def(G, k, shells[k]);
  for (const k in fns) def(G, k, fns[k]);
})();
//# sourceURL=webjobs:polyfills
