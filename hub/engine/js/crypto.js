// The job's `crypto` global: synchronous SHA-1/256/512, HMAC, a constant-time
// compare, and randomness (randomUUID, getRandomValues). Pure JS, evaluated after
// bytes.js and before prelude.js; every intrinsic it touches is captured now, so a
// job that rewrites %TypedArray%.prototype, String.prototype or Math cannot bend it.
// Handed to prelude.js as __webjob_crypto ({ crypto, reseed }), which deletes it.
//
// Randomness: an HMAC-DRBG over SHA-256 (NIST SP 800-90A). It is seeded from V8's
// Math.random (captured before any job code; V8 seeds it per isolate, from
// /dev/urandom) plus the clock, and reseeded with 32 bytes from the host's os.urandom
// when the run's spec carries them (`entropy`), at the next draw. With an isolate kept
// warm across runs the generator's state is shared by them: the host's bytes for each
// run, and the DRBG's update after every draw, keep one run's output from telling another's.
(() => {
  'use strict';
  const FP = Function.prototype;
  const uncurry = FP.bind.bind(FP.call);
  const bytes = globalThis.__webjob_bytes;
  const U8 = Uint8Array, I32 = Int32Array, U32 = Uint32Array;
  const TAP = Object.getPrototypeOf(U8.prototype);
  const getter = (o, k) => uncurry(Object.getOwnPropertyDescriptor(o, k).get);
  const taSet = uncurry(TAP.set), taLen = getter(TAP, 'length'), taTag = getter(TAP, Symbol.toStringTag);
  const taBuf = getter(TAP, 'buffer'), taOff = getter(TAP, 'byteOffset'), taByteLen = getter(TAP, 'byteLength');
  const abLen = getter(ArrayBuffer.prototype, 'byteLength');
  const dvBuf = getter(DataView.prototype, 'buffer'), dvOff = getter(DataView.prototype, 'byteOffset');
  const dvLen = getter(DataView.prototype, 'byteLength');
  const isView = ArrayBuffer.isView;
  const toLower = uncurry(String.prototype.toLowerCase);
  const random = Math.random, floor = Math.floor, now = Date.now;
  const TypeErrorC = TypeError, RangeErrorC = RangeError;
  const freeze = Object.freeze;
  // V8's hex and base64 (see web/base.js)
  const toHex = uncurry(U8.prototype.toHex), toBase64 = uncurry(U8.prototype.toBase64);
  const STANDARD = freeze({ __proto__: null, alphabet: 'base64', omitPadding: false });

  const seedMaterial = new U32(20);  // drawn now, before any job code runs
  const seedBuffer = taBuf(seedMaterial);
  for (let i = 0; i < 18; i++) seedMaterial[i] = floor(random() * 0x100000000);
  seedMaterial[18] = now() % 0x100000000; seedMaterial[19] = floor(now() / 0x100000000);

  const fromList = (list) => {
    const out = new I32(list.length);
    for (let i = 0; i < list.length; i++) out[i] = list[i];
    return out;
  };
  const HEX = '0123456789abcdef';

  // ---- SHA-1 and SHA-256: 64-byte blocks, big-endian 32-bit words -----------------
  // pad(): the message, 0x80, zeros and the bit length, as big-endian 32-bit words.
  function pad32(m) {
    const len = taLen(m);
    const nWords = ((len + 9 + 63) >> 6) << 4;
    const W = new I32(nWords);
    for (let i = 0; i < len; i++) W[i >> 2] |= m[i] << (24 - ((i & 3) << 3));
    W[len >> 2] |= 0x80 << (24 - ((len & 3) << 3));
    W[nWords - 1] = (len * 8) | 0;
    W[nWords - 2] = floor(len / 0x20000000) | 0;
    return W;
  }
  function wordsOut(H, n) {
    const out = new U8(n * 4);
    for (let i = 0; i < n; i++) {
      const h = H[i];
      out[i * 4] = h >>> 24; out[i * 4 + 1] = (h >>> 16) & 255;
      out[i * 4 + 2] = (h >>> 8) & 255; out[i * 4 + 3] = h & 255;
    }
    return out;
  }

  function sha1(m) {
    const X = pad32(m), W = new I32(80), n = taLen(X);
    let h0 = 0x67452301, h1 = 0xefcdab89 | 0, h2 = 0x98badcfe | 0, h3 = 0x10325476, h4 = 0xc3d2e1f0 | 0;
    for (let off = 0; off < n; off += 16) {
      for (let i = 0; i < 16; i++) W[i] = X[off + i];
      for (let i = 16; i < 80; i++) {
        const x = W[i - 3] ^ W[i - 8] ^ W[i - 14] ^ W[i - 16];
        W[i] = (x << 1) | (x >>> 31);
      }
      let a = h0, b = h1, c = h2, d = h3, e = h4;
      for (let i = 0; i < 80; i++) {
        let f, k;
        if (i < 20) { f = (b & c) | (~b & d); k = 0x5a827999; }
        else if (i < 40) { f = b ^ c ^ d; k = 0x6ed9eba1; }
        else if (i < 60) { f = (b & c) | (b & d) | (c & d); k = 0x8f1bbcdc | 0; }
        else { f = b ^ c ^ d; k = 0xca62c1d6 | 0; }
        const t = (((a << 5) | (a >>> 27)) + f + e + k + W[i]) | 0;
        e = d; d = c; c = (b << 30) | (b >>> 2); b = a; a = t;
      }
      h0 = (h0 + a) | 0; h1 = (h1 + b) | 0; h2 = (h2 + c) | 0; h3 = (h3 + d) | 0; h4 = (h4 + e) | 0;
    }
    const H = new I32(5);
    H[0] = h0; H[1] = h1; H[2] = h2; H[3] = h3; H[4] = h4;
    return wordsOut(H, 5);
  }

  // SHA-256 is bytes.js's (sign/verify need it before any job runs): one copy of it.
  const sha256 = bytes.sha256;

  // ---- SHA-512: 128-byte blocks, 64-bit words as (hi, lo) 32-bit pairs ------------
  const K512 = fromList([
    0x428a2f98, 0xd728ae22, 0x71374491, 0x23ef65cd, 0xb5c0fbcf, 0xec4d3b2f, 0xe9b5dba5, 0x8189dbbc,
    0x3956c25b, 0xf348b538, 0x59f111f1, 0xb605d019, 0x923f82a4, 0xaf194f9b, 0xab1c5ed5, 0xda6d8118,
    0xd807aa98, 0xa3030242, 0x12835b01, 0x45706fbe, 0x243185be, 0x4ee4b28c, 0x550c7dc3, 0xd5ffb4e2,
    0x72be5d74, 0xf27b896f, 0x80deb1fe, 0x3b1696b1, 0x9bdc06a7, 0x25c71235, 0xc19bf174, 0xcf692694,
    0xe49b69c1, 0x9ef14ad2, 0xefbe4786, 0x384f25e3, 0x0fc19dc6, 0x8b8cd5b5, 0x240ca1cc, 0x77ac9c65,
    0x2de92c6f, 0x592b0275, 0x4a7484aa, 0x6ea6e483, 0x5cb0a9dc, 0xbd41fbd4, 0x76f988da, 0x831153b5,
    0x983e5152, 0xee66dfab, 0xa831c66d, 0x2db43210, 0xb00327c8, 0x98fb213f, 0xbf597fc7, 0xbeef0ee4,
    0xc6e00bf3, 0x3da88fc2, 0xd5a79147, 0x930aa725, 0x06ca6351, 0xe003826f, 0x14292967, 0x0a0e6e70,
    0x27b70a85, 0x46d22ffc, 0x2e1b2138, 0x5c26c926, 0x4d2c6dfc, 0x5ac42aed, 0x53380d13, 0x9d95b3df,
    0x650a7354, 0x8baf63de, 0x766a0abb, 0x3c77b2a8, 0x81c2c92e, 0x47edaee6, 0x92722c85, 0x1482353b,
    0xa2bfe8a1, 0x4cf10364, 0xa81a664b, 0xbc423001, 0xc24b8b70, 0xd0f89791, 0xc76c51a3, 0x0654be30,
    0xd192e819, 0xd6ef5218, 0xd6990624, 0x5565a910, 0xf40e3585, 0x5771202a, 0x106aa070, 0x32bbd1b8,
    0x19a4c116, 0xb8d2d0c8, 0x1e376c08, 0x5141ab53, 0x2748774c, 0xdf8eeb99, 0x34b0bcb5, 0xe19b48a8,
    0x391c0cb3, 0xc5c95a63, 0x4ed8aa4a, 0xe3418acb, 0x5b9cca4f, 0x7763e373, 0x682e6ff3, 0xd6b2b8a3,
    0x748f82ee, 0x5defb2fc, 0x78a5636f, 0x43172f60, 0x84c87814, 0xa1f0ab72, 0x8cc70208, 0x1a6439ec,
    0x90befffa, 0x23631e28, 0xa4506ceb, 0xde82bde9, 0xbef9a3f7, 0xb2c67915, 0xc67178f2, 0xe372532b,
    0xca273ece, 0xea26619c, 0xd186b8c7, 0x21c0c207, 0xeada7dd6, 0xcde0eb1e, 0xf57d4f7f, 0xee6ed178,
    0x06f067aa, 0x72176fba, 0x0a637dc5, 0xa2c898a6, 0x113f9804, 0xbef90dae, 0x1b710b35, 0x131c471b,
    0x28db77f5, 0x23047d84, 0x32caab7b, 0x40c72493, 0x3c9ebe0a, 0x15c9bebc, 0x431d67c4, 0x9c100d4c,
    0x4cc5d4be, 0xcb3e42b6, 0x597f299c, 0xfc657e2a, 0x5fcb6fab, 0x3ad6faec, 0x6c44198c, 0x4a475817]);

  const IV512 = fromList([0x6a09e667, 0xf3bcc908, 0xbb67ae85, 0x84caa73b, 0x3c6ef372, 0xfe94f82b,
    0xa54ff53a, 0x5f1d36f1, 0x510e527f, 0xade682d1, 0x9b05688c, 0x2b3e6c1f, 0x1f83d9ab, 0xfb41bd6b,
    0x5be0cd19, 0x137e2179]);

  function sha512(m) {
    const len = taLen(m);
    const nWords = ((len + 17 + 127) >> 7) << 5;
    const X = new I32(nWords);
    for (let i = 0; i < len; i++) X[i >> 2] |= m[i] << (24 - ((i & 3) << 3));
    X[len >> 2] |= 0x80 << (24 - ((len & 3) << 3));
    X[nWords - 1] = (len * 8) | 0;
    X[nWords - 2] = floor(len / 0x20000000) | 0;
    const H = new I32(16);
    taSet(H, IV512);
    const W = new I32(160);
    for (let off = 0; off < nWords; off += 32) {
      for (let i = 0; i < 32; i++) W[i] = X[off + i];
      for (let i = 16; i < 80; i++) {
        // s0 = rotr1 ^ rotr8 ^ shr7 of W[i-15]; s1 = rotr19 ^ rotr61 ^ shr6 of W[i-2]
        let xh = W[(i - 15) * 2], xl = W[(i - 15) * 2 + 1];
        const s0h = ((xh >>> 1) | (xl << 31)) ^ ((xh >>> 8) | (xl << 24)) ^ (xh >>> 7);
        const s0l = ((xl >>> 1) | (xh << 31)) ^ ((xl >>> 8) | (xh << 24)) ^ ((xl >>> 7) | (xh << 25));
        xh = W[(i - 2) * 2]; xl = W[(i - 2) * 2 + 1];
        const s1h = ((xh >>> 19) | (xl << 13)) ^ ((xl >>> 29) | (xh << 3)) ^ (xh >>> 6);
        const s1l = ((xl >>> 19) | (xh << 13)) ^ ((xh >>> 29) | (xl << 3)) ^ ((xl >>> 6) | (xh << 26));
        let lo = (W[(i - 16) * 2 + 1] >>> 0) + (s0l >>> 0) + (W[(i - 7) * 2 + 1] >>> 0) + (s1l >>> 0);
        const hi = W[(i - 16) * 2] + s0h + W[(i - 7) * 2] + s1h + floor(lo / 0x100000000);
        W[i * 2] = hi | 0; W[i * 2 + 1] = lo = lo | 0;
      }
      let ah = H[0], al = H[1], bh = H[2], bl = H[3], ch = H[4], cl = H[5], dh = H[6], dl = H[7];
      let eh = H[8], el = H[9], fh = H[10], fl = H[11], gh = H[12], gl = H[13], hh = H[14], hl = H[15];
      for (let i = 0; i < 80; i++) {
        // S1 = rotr14 ^ rotr18 ^ rotr41 of e; ch = (e & f) ^ (~e & g)
        const S1h = ((eh >>> 14) | (el << 18)) ^ ((eh >>> 18) | (el << 14)) ^ ((el >>> 9) | (eh << 23));
        const S1l = ((el >>> 14) | (eh << 18)) ^ ((el >>> 18) | (eh << 14)) ^ ((eh >>> 9) | (el << 23));
        const chh = (eh & fh) ^ (~eh & gh), chl = (el & fl) ^ (~el & gl);
        let lo = (hl >>> 0) + (S1l >>> 0) + (chl >>> 0) + (K512[i * 2 + 1] >>> 0) + (W[i * 2 + 1] >>> 0);
        const t1h = (hh + S1h + chh + K512[i * 2] + W[i * 2] + floor(lo / 0x100000000)) | 0;
        const t1l = lo | 0;
        // S0 = rotr28 ^ rotr34 ^ rotr39 of a; maj = (a & b) ^ (a & c) ^ (b & c)
        const S0h = ((ah >>> 28) | (al << 4)) ^ ((al >>> 2) | (ah << 30)) ^ ((al >>> 7) | (ah << 25));
        const S0l = ((al >>> 28) | (ah << 4)) ^ ((ah >>> 2) | (al << 30)) ^ ((ah >>> 7) | (al << 25));
        const mjh = (ah & bh) ^ (ah & ch) ^ (bh & ch), mjl = (al & bl) ^ (al & cl) ^ (bl & cl);
        lo = (S0l >>> 0) + (mjl >>> 0);
        const t2h = (S0h + mjh + floor(lo / 0x100000000)) | 0, t2l = lo | 0;
        hh = gh; hl = gl; gh = fh; gl = fl; fh = eh; fl = el;
        lo = (dl >>> 0) + (t1l >>> 0);
        eh = (dh + t1h + floor(lo / 0x100000000)) | 0; el = lo | 0;
        dh = ch; dl = cl; ch = bh; cl = bl; bh = ah; bl = al;
        lo = (t1l >>> 0) + (t2l >>> 0);
        ah = (t1h + t2h + floor(lo / 0x100000000)) | 0; al = lo | 0;
      }
      const add = (k, h, l) => {
        const lo = (H[k + 1] >>> 0) + (l >>> 0);
        H[k] = (H[k] + h + floor(lo / 0x100000000)) | 0; H[k + 1] = lo | 0;
      };
      add(0, ah, al); add(2, bh, bl); add(4, ch, cl); add(6, dh, dl);
      add(8, eh, el); add(10, fh, fl); add(12, gh, gl); add(14, hh, hl);
    }
    return wordsOut(H, 16);
  }

  const ALGORITHMS = { __proto__: null, sha1: [sha1, 64], sha256: [sha256, 64], sha512: [sha512, 128] };

  function hmacWith(alg, key, data) {
    const hash = alg[0], block = alg[1];
    const k = new U8(block);
    taSet(k, taLen(key) > block ? hash(key) : key);
    const inner = new U8(block + taLen(data));
    for (let i = 0; i < block; i++) inner[i] = k[i] ^ 0x36;
    taSet(inner, data, block);
    const ih = hash(inner);
    const outer = new U8(block + taLen(ih));
    for (let i = 0; i < block; i++) outer[i] = k[i] ^ 0x5c;
    taSet(outer, ih, block);
    return hash(outer);
  }

  // ---- arguments -------------------------------------------------------------------
  function brand(f, v) { try { f(v); return true; } catch (e) { return false; } }
  // Text (as UTF-8) or bytes (any typed array, DataView or ArrayBuffer) as a Uint8Array view.
  function toBytes(v, fn, name) {
    if (typeof v === 'string') return bytes.utf8Encode(v);
    if (isView(v)) {
      if (taTag(v) !== undefined) return new U8(taBuf(v), taOff(v), taByteLen(v));
      return new U8(dvBuf(v), dvOff(v), dvLen(v));
    }
    if (v !== null && typeof v === 'object' && brand(abLen, v)) return new U8(v);
    throw new TypeErrorC(`crypto.${fn}: ${name} must be a string, a Buffer/Uint8Array or an ArrayBuffer`);
  }
  function algorithmOf(name, fn) {
    const alg = typeof name === 'string' ? ALGORITHMS[toLower(name)] : undefined;
    if (alg === undefined) {
      throw new TypeErrorC(`crypto.${fn}: algorithm must be 'sha1', 'sha256' or 'sha512'`
        + (typeof name === 'string' ? `, not '${name}'` : ''));
    }
    return alg;
  }
  function encode(digest, encoding, fn) {
    const enc = encoding === undefined ? 'hex' : encoding;
    if (enc === 'hex') return toHex(digest);
    if (enc === 'base64') return toBase64(digest, STANDARD);
    throw new TypeErrorC(`crypto.${fn}: encoding must be 'hex' or 'base64'`);
  }

  function hash(algorithm, data, encoding) {
    const alg = algorithmOf(algorithm, 'hash');
    const digest = alg[0](toBytes(data, 'hash', 'data'));
    return encode(digest, encoding, 'hash');
  }
  function hmac(algorithm, key, data, encoding) {
    const alg = algorithmOf(algorithm, 'hmac');
    const digest = hmacWith(alg, toBytes(key, 'hmac', 'key'), toBytes(data, 'hmac', 'data'));
    return encode(digest, encoding, 'hmac');
  }
  function timingSafeEqual(a, b) {
    const x = toBytes(a, 'timingSafeEqual', 'a'), y = toBytes(b, 'timingSafeEqual', 'b');
    const n = taLen(x);
    if (n !== taLen(y)) return false;
    let diff = 0;
    for (let i = 0; i < n; i++) diff |= x[i] ^ y[i];
    return diff === 0;
  }

  // ---- HMAC-DRBG (SHA-256) ---------------------------------------------------------
  const H256 = ALGORITHMS.sha256;
  let K = null, V = null;
  function join(...parts) {
    let n = 0;
    for (let i = 0; i < parts.length; i++) n += taLen(parts[i]);
    const out = new U8(n);
    for (let i = 0, at = 0; i < parts.length; i++) { taSet(out, parts[i], at); at += taLen(parts[i]); }
    return out;
  }
  const ZERO = new U8(1), ONE = new U8(1), EMPTY = new U8(0);
  ONE[0] = 1;
  function update(provided) {
    K = hmacWith(H256, K, join(V, ZERO, provided));
    V = hmacWith(H256, K, V);
    if (taLen(provided) === 0) return;
    K = hmacWith(H256, K, join(V, ONE, provided));
    V = hmacWith(H256, K, V);
  }
  // Seeded on first use, with the material drawn at load time and the host's entropy;
  // the host's bytes for each run are mixed in at the next draw, not as the run starts
  // (four HMACs, ~0.07 ms a run): a run that never asks for randomness pays nothing. The
  // latest run's 32 bytes replace those of runs that never drew: every draw follows
  // fresh host entropy no run has seen.
  let pending = EMPTY;
  function instantiate() {
    K = new U8(32); V = new U8(32);
    for (let i = 0; i < 32; i++) V[i] = 1;
    update(join(new U8(seedBuffer), pending));
    pending = EMPTY;
  }
  // More entropy (the host's 32 bytes for this run), mixed into the state.
  const reseed = (function reseed(entropy) {
    pending = toBytes(entropy, 'reseed', 'entropy');
  });
  function randomBytes(n) {
    if (K === null) instantiate();
    else if (taLen(pending) !== 0) {
      update(pending);
      pending = EMPTY;
    }
    const out = new U8(n);
    for (let at = 0; at < n; at += 32) {
      V = hmacWith(H256, K, V);
      // Not subarray(): it would build its result with a job's Symbol.species.
      taSet(out, n - at >= 32 ? V : new U8(taBuf(V), taOff(V), n - at), at);
    }
    update(EMPTY);
    return out;
  }

  function getRandomValues(array) {
    const tag = isView(array) ? taTag(array) : undefined;
    if (tag === undefined || tag === 'Float32Array' || tag === 'Float64Array' || tag === 'Float16Array') {
      throw new TypeErrorC('crypto.getRandomValues: array must be an integer typed array (e.g. Uint8Array)');
    }
    const n = taByteLen(array);
    if (n > 65536) throw new RangeErrorC('crypto.getRandomValues: array must be at most 65536 bytes');
    taSet(new U8(taBuf(array), taOff(array), n), randomBytes(n));
    return array;
  }
  function randomUUID() {
    const b = randomBytes(16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let out = '';
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) out += '-';
      out += HEX[b[i] >> 4] + HEX[b[i] & 15];
    }
    return out;
  }

  // methods, as built-ins are: no prototype property, not constructors
  const crypto = freeze({
    hash(algorithm, data, encoding) { return hash(algorithm, data, encoding); },
    hmac(algorithm, key, data, encoding) { return hmac(algorithm, key, data, encoding); },
    timingSafeEqual(a, b) { return timingSafeEqual(a, b); },
    randomUUID() { return randomUUID(); },
    getRandomValues(array) { return getRandomValues(array); },
  });
  globalThis.__webjob_crypto = freeze({ crypto, reseed });
})();
//# sourceURL=webjobs:crypto
