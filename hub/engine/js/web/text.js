// TextEncoder and TextDecoder (UTF-8, UTF-16LE/BE, windows-1252 and their labels),
// atob and btoa. Evaluated after web/base.js, whose helpers it takes (see there for
// why every intrinsic is captured).
(() => {
  'use strict';
  const { G, def, defineProperty, getPrototypeOf, uncurry, TypeErr, RangeErr, U8, U16, cca, sl, sIdx, taSet, taLen,
    taTag, fromB64, STD, toStr, domErr, io, bytesOf, codes, utf8Write, utf8, badData, dec8,
    b64enc } = globalThis.__webjob_web;
  const lower = uncurry(String.prototype.toLowerCase), strim = uncurry(String.prototype.trim);
  const taSlice = uncurry(getPrototypeOf(U8.prototype).slice);

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
  for (const C of [TextEncoder, TextDecoder]) {
    defineProperty(C.prototype, Symbol.toStringTag, { value: C.name, configurable: true });
  }

  // Methods, as built-ins are: no prototype property, not constructors. atob is WHATWG's
  // forgiving-base64, which is V8's decoder with 'loose' last chunks: ASCII whitespace
  // skipped, padding optional but correct, the standard alphabet only.
  const fns = {
    atob(data) {
      if (!arguments.length) throw new TypeErr('Failed to execute \'atob\': 1 argument required');
      const s = toStr(data);
      let u;
      try { u = fromB64(s, STD); } catch {
        throw domErr('The string to be decoded is not correctly encoded.', 'InvalidCharacterError');
      }
      return codes(u);
    },
    btoa(data) {
      if (!arguments.length) throw new TypeErr('Failed to execute \'btoa\': 1 argument required');
      const s = toStr(data), n = s.length, u = new U8(n);
      for (let i = 0; i < n; i++) {
        const c = cca(s, i);
        if (c > 255) {
          throw domErr('The string to be encoded contains characters outside of the Latin1 range.',
            'InvalidCharacterError');
        }
        u[i] = c;
      }
      return b64enc(u, false);
    },
  };

  def(G, 'TextEncoder', TextEncoder);
  def(G, 'TextDecoder', TextDecoder);
  def(G, 'atob', fns.atob);
  def(G, 'btoa', fns.btoa);
})();
//# sourceURL=webjobs:web/text
