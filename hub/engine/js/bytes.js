// Byte helpers for the sandbox's own use (console channel, sign/verify, response bytes):
// UTF-8, base64 and HMAC-SHA256. Evaluated before any job code, they capture every
// intrinsic they touch, so a job that later rewrites %TypedArray%.prototype.set,
// String.prototype.charCodeAt or Buffer cannot watch or bend them (the signing key
// passes through here). Handed to prelude.js as __webjob_bytes, which deletes it.
// The helpers every run calls are parenthesised function expressions, compiled with
// the script rather than pre-parsed and compiled again (see prelude.js).
(() => {
  'use strict';
  const FP = Function.prototype;
  const uncurry = FP.bind.bind(FP.call);
  const U8 = Uint8Array, U32 = Uint32Array, DV = DataView;
  const TAP = Object.getPrototypeOf(Uint8Array.prototype);
  const taSet = uncurry(TAP.set);
  const taLen = uncurry(Object.getOwnPropertyDescriptor(TAP, 'length').get);
  const taBuffer = uncurry(Object.getOwnPropertyDescriptor(TAP, 'buffer').get);
  const taOffset = uncurry(Object.getOwnPropertyDescriptor(TAP, 'byteOffset').get);
  // bytes[start, end) as a new view on the same memory. Not subarray(): that builds
  // its result with Uint8Array[Symbol.species], which a job may replace.
  const view = (bytes, start, end) => new U8(taBuffer(bytes), taOffset(bytes) + start, end - start);
  const dvGet = uncurry(DataView.prototype.getUint32), dvSet = uncurry(DataView.prototype.setUint32);
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const indexOf = uncurry(String.prototype.indexOf);
  const fromCharCode = String.fromCharCode;
  const floor = Math.floor, min = Math.min;
  // V8's base64 (see web/base.js); options without a prototype, so none can be added
  const toBase64 = uncurry(U8.prototype.toBase64), fromBase64 = U8.fromBase64;
  const STANDARD = Object.freeze({ __proto__: null, alphabet: 'base64', lastChunkHandling: 'loose',
    omitPadding: false });
  const URL_SAFE = Object.freeze({ __proto__: null, alphabet: 'base64url', lastChunkHandling: 'loose',
    omitPadding: true });

  const utf8Encode = (function utf8Encode(text) {
    const out = new U8(text.length * 3);
    let n = 0;
    for (let i = 0; i < text.length; i++) {
      let c = charCodeAt(text, i);
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
        const d = charCodeAt(text, i + 1);
        if (d >= 0xdc00 && d < 0xe000) { c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00); i++; }
      }
      if (c >= 0xd800 && c < 0xe000) c = 0xfffd;
      if (c < 0x80) out[n++] = c;
      else if (c < 0x800) { out[n++] = 0xc0 | (c >> 6); out[n++] = 0x80 | (c & 63); }
      else if (c < 0x10000) {
        out[n++] = 0xe0 | (c >> 12); out[n++] = 0x80 | ((c >> 6) & 63); out[n++] = 0x80 | (c & 63);
      } else {
        out[n++] = 0xf0 | (c >> 18); out[n++] = 0x80 | ((c >> 12) & 63);
        out[n++] = 0x80 | ((c >> 6) & 63); out[n++] = 0x80 | (c & 63);
      }
    }
    return view(out, 0, n);
  });

  // Standard or URL-safe base64 (one alphabet), padding optional; null when it is not
  // base64. Only ever given the host's base64 and the sandbox's own base64url.
  const base64Decode = (function base64Decode(text) {
    const url = indexOf(text, '-') >= 0 || indexOf(text, '_') >= 0;
    try { return fromBase64(text, url ? URL_SAFE : STANDARD); } catch { return null; }
  });
  const base64url = (bytes) => toBase64(bytes, URL_SAFE);
  const base64 = (bytes) => toBase64(bytes, STANDARD);

  function utf8Decode(bytes) {
    let out = '';
    const len = taLen(bytes);
    for (let i = 0; i < len;) {
      const b = bytes[i];
      let c = 0xfffd, need = 0;
      if (b < 0x80) { c = b; } else if (b >= 0xc2 && b < 0xe0) { c = b & 31; need = 1; }
      else if (b >= 0xe0 && b < 0xf0) { c = b & 15; need = 2; } else if (b >= 0xf0 && b < 0xf5) { c = b & 7; need = 3; }
      i++;
      for (let k = 0; k < need; k++, i++) {
        if (i >= len || (bytes[i] & 0xc0) !== 0x80) { c = 0xfffd; break; }
        c = (c << 6) | (bytes[i] & 63);
      }
      if (c >= 0x10000) out += fromCharCode(0xd800 + ((c - 0x10000) >> 10), 0xdc00 + ((c - 0x10000) & 1023));
      else out += fromCharCode(c);
    }
    return out;
  }

  // ---- SHA-256 and HMAC-SHA256 (sign/verify, and crypto.js's sha256)
  const K = new U32([0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
    0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb,
    0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624,
    0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb,
    0xbef9a3f7, 0xc67178f2]);
  const IV = new U32([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c,
    0x1f83d9ab, 0x5be0cd19]);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));

  function sha256(bytes) {
    const len = taLen(bytes);
    const total = ((len + 9 + 63) >> 6) << 6;
    const m = new U8(total);
    taSet(m, bytes); m[len] = 0x80;
    const dv = new DV(taBuffer(m));
    dvSet(dv, total - 4, (len * 8) >>> 0); dvSet(dv, total - 8, floor(len / 0x20000000));
    const H = new U32(8);
    taSet(H, IV);  // a typed array source: no array iterator, which a job may have bent
    const W = new U32(64);
    for (let off = 0; off < total; off += 64) {
      for (let i = 0; i < 16; i++) W[i] = dvGet(dv, off + i * 4);
      for (let i = 16; i < 64; i++) {
        const a = W[i - 15], b = W[i - 2];
        W[i] = W[i - 16] + (rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3)) + W[i - 7]
          + (rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10));
      }
      let a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
      for (let i = 0; i < 64; i++) {
        const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + W[i]) >>> 0;
        const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
        h = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
      }
      H[0] += a; H[1] += b; H[2] += c; H[3] += d; H[4] += e; H[5] += f; H[6] += g; H[7] += h;
    }
    const out = new U8(32);
    const ov = new DV(taBuffer(out));
    for (let i = 0; i < 8; i++) dvSet(ov, i * 4, H[i]);
    return out;
  }

  function hmacSha256(key, data) {
    const block = new U8(64);
    taSet(block, taLen(key) > 64 ? sha256(key) : key);
    const dataLen = taLen(data);
    const inner = new U8(64 + dataLen);
    const outer = new U8(96);
    for (let i = 0; i < 64; i++) { inner[i] = block[i] ^ 0x36; outer[i] = block[i] ^ 0x5c; }
    taSet(inner, data, 64);
    taSet(outer, sha256(inner), 64);
    return sha256(outer);
  }

  // Writes bytes into a ring at a running position (the console channel).
  const ringPut = (function ringPut(ring, capacity, at, bytes) {
    const pos = at % capacity;
    const len = taLen(bytes);
    const first = min(len, capacity - pos);
    taSet(ring, view(bytes, 0, first), pos);
    if (first < len) taSet(ring, view(bytes, first, len), 0);
  });

  globalThis.__webjob_bytes = Object.freeze({
    utf8Encode, utf8Decode, base64url, base64, base64Decode, sha256, hmacSha256, ringPut,
    length: taLen,  // a typed array's length, whatever a job did to the prototypes
  });
})();
//# sourceURL=webjobs:bytes
