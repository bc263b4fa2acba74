// The WHATWG URL parser and serialiser behind web/url.js, over plain records (no IDNA
// tables: non-ASCII hosts are NFKC-folded and punycoded). Evaluated after web/base.js,
// whose helpers it takes (see there for why every intrinsic is captured); hands its
// own on through __webjob_web.url.
(() => {
  'use strict';
  const W = globalThis.__webjob_web;
  const { uncurry, fromCharCode, TypeErr, U8, U16, cca, sl, sIdx, ssplit, sub, usv, utf8, dec8, hexVal } = W;
  const floor = Math.floor, isNaN = Number.isNaN, SP = String.prototype, AP = Array.prototype;
  const sLast = uncurry(SP.lastIndexOf), lower = uncurry(SP.toLowerCase), normalize = uncurry(SP.normalize);
  const join = uncurry(AP.join), aslice = uncurry(AP.slice), numToStr = uncurry(Number.prototype.toString);

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
    return (last !== '' && i === last.length) || !isNaN(ipv4Num(last));
  }
  function ipv4(s) {
    const parts = ssplit(s, '.');
    if (parts[parts.length - 1] === '' && parts.length > 1) parts.length--;
    const n = parts.length;
    if (n > 4) return null;
    let v = 0;
    for (let i = 0; i < n; i++) {
      const x = ipv4Num(parts[i]);
      if (isNaN(x)) return null;
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

  W.url = {
    __proto__: null, FRAG, QUERY, SQUERY, USER, FORM, pe, pd, replaceAll, stripTNL, DP, isAlpha, isDigit,
    isSchemeChar, isSlash, parseHost, hostPort, segs, parse, pathname, portSuffix, href, invalidURL, parseArgs,
  };
})();
//# sourceURL=webjobs:web/url_parse
