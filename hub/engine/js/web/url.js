// URL and URLSearchParams (WHATWG), over web/url_parse.js's records. Evaluated after
// it and web/base.js, whose helpers it takes (see there for why every intrinsic is
// captured).
(() => {
  'use strict';
  const W = globalThis.__webjob_web;
  const { G, def, defineProperty, getOwnPropertyDescriptor, ownKeys, apply, uncurry, min, TypeErr, cca, sl, sIdx,
    usv } = W;
  const { FRAG, QUERY, SQUERY, USER, FORM, pe, pd, replaceAll, stripTNL, DP, isAlpha, isDigit, isSchemeChar, isSlash,
    parseHost, hostPort, segs, parse, pathname, portSuffix, href, invalidURL, parseArgs } = W.url;
  const lower = uncurry(String.prototype.toLowerCase), join = uncurry(Array.prototype.join);
  const splice = uncurry(Array.prototype.splice), asort = uncurry(Array.prototype.sort), iterator = Symbol.iterator;

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
    static parse(url, base = undefined) { const r = parseArgs(url, base)[0]; return r ? new URL(MAKE, r) : null; }
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
      spOf = (r) => { const sp = new URLSearchParams(r.q ?? ''); sp.#r = r; return sp; };
      spReset = (sp, q) => { sp.#l = q ? parseForm(q) : []; };
    }
  }
  def(URLSearchParams.prototype, iterator, URLSearchParams.prototype.entries);

  for (const C of [URL, URLSearchParams]) {
    defineProperty(C.prototype, Symbol.toStringTag, { value: C.name, configurable: true });
  }
  def(G, 'URL', URL);
  def(G, 'URLSearchParams', URLSearchParams);
})();
//# sourceURL=webjobs:web/url
