// The response builders a job uses (response.json, .html, .csv, .pdf, .file,
// .redirect, .raw). Evaluated after bytes.js and before prelude.js, which takes
// them from __webjob_responses and deletes that global. A builder's result is a
// frozen object the prelude recognises through isResponse; anything else a job
// returns is plain JSON. What a builder produces is checked again in Python.
(() => {
  'use strict';
  const bytes = globalThis.__webjob_bytes;
  const { freeze, keys } = Object;
  const FP = Function.prototype;
  const uncurry = FP.bind.bind(FP.call);
  const weakAdd = uncurry(WeakSet.prototype.add), weakHas = uncurry(WeakSet.prototype.has);
  const StringC = String, NumberC = Number, isInteger = Number.isInteger;
  const TypeErrorC = TypeError, U8 = Uint8Array;

  const RESPONSES = new WeakSet();
  const TEXT = { html: 'text/html; charset=utf-8', text: 'text/plain; charset=utf-8',
    csv: 'text/csv; charset=utf-8', json: 'application/json' };
  function status(s, dflt) {
    const n = s === undefined ? dflt : NumberC(s);
    if (!isInteger(n) || n < 100 || n > 599) throw new TypeErrorC(`Invalid HTTP status: ${s}`);
    return n;
  }
  function plainHeaders(h) {
    const out = {};
    if (h && typeof h === 'object') for (const k of keys(h)) out[StringC(k)] = StringC(h[k]);
    return out;
  }
  function bytesOf(b) {
    if (typeof b === 'string') return { body: b, encoding: 'base64' };
    if (b instanceof ArrayBuffer) return { body: bytes.base64url(new U8(b)), encoding: 'base64url' };
    if (ArrayBuffer.isView(b)) {
      return { body: bytes.base64url(new U8(b.buffer, b.byteOffset, b.byteLength)), encoding: 'base64url' };
    }
    throw new TypeErrorC('Expected bytes (Buffer, Uint8Array, ArrayBuffer) or a base64 string');
  }
  function make(r) { const f = freeze(r); weakAdd(RESPONSES, f); return f; }
  function textResponse(type, text, st, filename) {
    return make({ type, format: TEXT[type], status: status(st, 200), headers: {}, body: StringC(text),
      encoding: 'utf8', filename });
  }
  function fileResponse(type, format, b, filename) {
    return make({ type, format: StringC(format), status: 200, headers: {}, filename: StringC(filename),
      ...bytesOf(b) });
  }
  const response = freeze({
    json: (body, st, headers) => make({ type: 'json', format: TEXT.json, status: status(st, 200),
      headers: plainHeaders(headers), value: body, encoding: 'utf8' }),
    html: (text, st) => textResponse('html', text, st),
    text: (text, st) => textResponse('text', text, st),
    csv: (text, filename) => textResponse('csv', text, 200, StringC(filename || 'export.csv')),
    pdf: (b, filename) => fileResponse('pdf', 'application/pdf', b, filename || 'document.pdf'),
    file: (b, filename, type) => fileResponse('file', type || 'application/octet-stream', b,
      filename || 'download'),
    redirect: (url, st) => make({ type: 'redirect', format: TEXT.text, status: status(st, 302),
      headers: { Location: StringC(url) }, body: '', encoding: 'utf8' }),
    raw: (body, headers, st) => {
      const h = plainHeaders(headers);
      const ct = keys(h).find((k) => k.toLowerCase() === 'content-type');
      const data = typeof body === 'string' ? { body, encoding: 'utf8' } : bytesOf(body);
      return make({ type: 'raw', format: ct ? h[ct] : 'application/octet-stream', status: status(st, 200),
        headers: h, ...data });
    },
  });

  globalThis.__webjob_responses = freeze({ response, isResponse: (v) => weakHas(RESPONSES, v) });
})();
//# sourceURL=webjobs:responses
