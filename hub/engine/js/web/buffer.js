// Buffer: the commonly used part of Node's (a Uint8Array subclass: from/alloc/concat/
// byteLength/compare, toString and write in utf8, hex, base64, base64url, latin1, ascii,
// utf16le, search, fill, copy, the fixed-size readers and writers). Evaluated after
// web/base.js, whose helpers it takes (see there for why every intrinsic is captured).
(() => {
  'use strict';
  const { G, def, defineProperty, keys, uncurry, TypeErr, RangeErr, U8, U16, min, cca, sl, sIdx, sub, taSet,
    taFill, taBuf, taOff, taLen, taTag, abLen, isView, isAB, toStr, range, bytesOf, codes, utf8Len, utf8Write, utf8,
    dec8, b64count, b64dec, b64enc, toHex, hexDec } = globalThis.__webjob_web;
  const { floor, max, trunc } = Math, isArray = Array.isArray, Arr = Array, DV = DataView, DVP = DataView.prototype;
  const { iterator, toPrimitive } = Symbol, TAP = Object.getPrototypeOf(U8.prototype);
  const lower = uncurry(String.prototype.toLowerCase), taIdx = uncurry(TAP.indexOf);
  const taLastIdx = uncurry(TAP.lastIndexOf), taSlice = uncurry(TAP.slice), taCopyWithin = uncurry(TAP.copyWithin);

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
      case 'base64': case 'base64url': return b64dec(s);
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
      case 'hex': return toHex(u);
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

  function from(v, a, b) {
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
      if (p !== v && p !== null && p !== undefined) return from(p, a, b);
      if (v.type === 'Buffer' && isArray(v.data)) return new Buffer(v.data);
      if (v.length !== undefined || typeof v[iterator] === 'function') return new Buffer(v);
      if (typeof v[toPrimitive] === 'function') return from(v[toPrimitive]('string'), a, b);
    }
    throw new TypeErr('The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object.');
  }

  class Buffer extends U8 {
    static from(v, a, b) { return from(v, a, b); }
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
      const n = taLen(this), data = new Arr(n);
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
  defineProperty(Buffer, 'length', { value: 3, configurable: true });  // Node's (string, encoding, length)
  const P = Buffer.prototype;
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
  def(G, 'Buffer', Buffer);
})();
//# sourceURL=webjobs:web/buffer
