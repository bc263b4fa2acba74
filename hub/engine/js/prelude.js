// The sandbox of one run. Evaluated in every fresh V8 context after polyfills.js.
// It captures the intrinsics it relies on, removes what a job must not reach,
// installs the job globals, and exposes one hidden object, __webjob_host, that the
// worker uses to start the job, poll for its outcome and answer bridge calls.
// The only host object in the context is the notification function __webjob_note,
// captured here and deleted from the global object before any job code runs.
(() => {
  'use strict';
  const G = globalThis;
  const note = G.__webjob_note;
  const wake = G.__webjob_wake;
  const { load: atomicLoad, store: atomicStore } = Atomics;
  const { stringify, parse } = JSON;
  const { defineProperty, freeze, keys, getPrototypeOf } = Object;
  const NativePromise = Promise;
  const nativeThen = Promise.prototype.then;
  const SAB = G.SharedArrayBuffer;
  const waitAsync = Atomics.waitAsync;
  const Int32 = Int32Array;
  const BufferC = G.Buffer;
  const now = Date.now;
  const ErrorC = Error;
  const isArray = Array.isArray;

  for (const name of ['__webjob_note', '__webjob_wake', 'SharedArrayBuffer', 'Atomics', 'WebAssembly',
    '__timer_manager', 'setTimeout', 'clearTimeout', 'console']) {
    // mini-racer declares its timer helpers with `var`: those cannot be deleted,
    // only overwritten.
    try { delete G[name]; } catch (e) { G[name] = undefined; }
  }

  // ---- run state -----------------------------------------------------------
  let spec = null;
  let outcome = null;        // "meta\nbody" once the run settled
  let asyncMode = false;     // the host is waiting for a notification
  let ended = false;
  let live = false;         // someone watches the console as it happens
  const logBuffer = [];
  let runStart = now();     // reset when the job starts
  let lastFlush = runStart;
  let flushQueued = false;
  let consoleBytes = 0;
  const CONSOLE_CAP = 8 * 1024 * 1024;
  const LINE_CAP = 16 * 1024;

  const elapsed = () => now() - runStart;

  // ---- timers: V8 has none; Atomics.waitAsync gives a delayed task ----------
  function later(ms, fn) {
    const res = waitAsync(new Int32(new SAB(4)), 0, 0, ms > 1 ? ms : 1);
    if (res.async) nativeThen.call(res.value, fn);
    else nativeThen.call(NativePromise.resolve(), fn);
  }
  let nextTimer = 1;
  const timers = new Map();
  function schedule(fn, ms, args, repeat) {
    if (typeof fn !== 'function') throw new TypeError('The callback must be a function');
    const id = nextTimer++;
    const delay = Number(ms) > 0 ? Number(ms) : 0;
    const fire = () => {
      if (ended || !timers.has(id)) return;
      if (!repeat) timers.delete(id);
      try { fn(...args); } catch (err) { fail(err, 'timer'); return; }
      if (repeat && timers.has(id)) later(delay, fire);
    };
    timers.set(id, true);
    later(delay, fire);
    return id;
  }
  const clear = (id) => { timers.delete(id); };

  // ---- console channel: a ring in shared memory the worker reads directly -----
  // JS writes frames [length:u32][UTF-8 JSON]; the worker reads them with its own
  // cursor, without needing the isolate, so lines logged just before a busy loop
  // still reach it. cursors[0] = bytes written, cursors[1] = bytes read (worker).
  const CHANNEL_BYTES = 64 * 1024;
  const channelMemory = new SAB(16 + CHANNEL_BYTES);
  const cursors = new Int32(channelMemory, 0, 2);
  const ring = new Uint8Array(channelMemory, 16);
  let channelOpen = true;   // once full, the rest of the run's lines take the slow path
  G.__webjob_channel = channelMemory;  // taken by the worker, then deleted, before any job code
  function utf8(text) {
    const out = new Uint8Array(text.length * 3);
    let n = 0;
    for (let i = 0; i < text.length; i++) {
      let c = text.charCodeAt(i);
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
        const d = text.charCodeAt(i + 1);
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
    return out.subarray(0, n);
  }
  function put(at, bytes) {
    const pos = at % CHANNEL_BYTES;
    const first = Math.min(bytes.length, CHANNEL_BYTES - pos);
    ring.set(bytes.subarray(0, first), pos);
    if (first < bytes.length) ring.set(bytes.subarray(first), 0);
  }
  function toChannel(frame) {
    if (!channelOpen) return false;
    const bytes = utf8(frame);
    const written = atomicLoad(cursors, 0);
    if (written - atomicLoad(cursors, 1) + 4 + bytes.length > CHANNEL_BYTES) {
      channelOpen = false;
      return false;
    }
    const n = bytes.length;
    put(written, new Uint8Array([n & 255, (n >> 8) & 255, (n >> 16) & 255, (n >>> 24) & 255]));
    put(written + 4, bytes);
    atomicStore(cursors, 0, written + 4 + n);
    return true;
  }

  // ---- console: the channel, or batched when it is full ---------------------
  function describe(v, depth, seen) {
    if (typeof v === 'string') return v;
    if (typeof v === 'bigint') return `${v}n`;
    if (typeof v === 'symbol' || typeof v === 'undefined' || v === null) return String(v);
    if (typeof v === 'function') return `[Function: ${v.name || 'anonymous'}]`;
    if (typeof v !== 'object') return String(v);
    if (v instanceof ErrorC) return v.stack ? String(v.stack) : `${v.name}: ${v.message}`;
    try {
      return stringify(v, (k, x) => {
        if (typeof x === 'bigint') return `${x}n`;
        if (typeof x === 'function') return `[Function: ${x.name || 'anonymous'}]`;
        if (x instanceof Map) return { Map: [...x.entries()] };
        if (x instanceof Set) return { Set: [...x.values()] };
        if (x && typeof x === 'object') {
          if (seen.has(x)) return '[Circular]';
          seen.add(x);
        }
        return x;
      });
    } catch (e) {
      return Object.prototype.toString.call(v);
    }
  }
  function format(args) {
    let out = '';
    let i = 0;
    if (typeof args[0] === 'string' && args[0].includes('%')) {
      i = 1;
      out = args[0].replace(/%[sdifjoO%]/g, (m) => {
        if (m === '%%') return '%';
        if (i >= args.length) return m;
        const a = args[i++];
        if (m === '%d' || m === '%i') return String(m === '%i' ? Math.trunc(Number(a)) : Number(a));
        if (m === '%f') return String(Number(a));
        return describe(a, 0, new WeakSet());
      });
    }
    for (; i < args.length; i++) out += (out ? ' ' : '') + describe(args[i], 0, new WeakSet());
    return out;
  }
  function flush() {
    flushQueued = false;
    lastFlush = now();
    if (!logBuffer.length || outcome !== null) return;
    note('L' + stringify(logBuffer.splice(0)));
  }
  function emit(level, args) {
    if (ended) return;
    let message = format(args);
    if (consoleBytes > CONSOLE_CAP) return;
    consoleBytes += message.length;
    if (consoleBytes > CONSOLE_CAP) message = '[console output over 8 MB: the rest of it is dropped]';
    if (message.length > LINE_CAP) message = message.slice(0, LINE_CAP) + ` … [${message.length} chars]`;
    const line = [level, message, elapsed()];
    if (toChannel(stringify(line))) {
      if (live) wake();  // watched live: the worker reads the line now
      return;
    }
    logBuffer.push(line);
    if (now() - lastFlush >= 25) flush();
    else if (!flushQueued) { flushQueued = true; later(1, flush); }
  }
  const jobConsole = freeze({
    log: (...a) => emit('log', a),
    info: (...a) => emit('info', a),
    debug: (...a) => emit('debug', a),
    warn: (...a) => emit('warn', a),
    error: (...a) => emit('error', a),
    trace: (...a) => emit('debug', a),
  });

  // ---- outcome ---------------------------------------------------------------
  function jobLine(err) {
    let stack = '';
    try { stack = String(err && err.stack); } catch (e) { return null; }
    const m = /job\.js:(\d+):(\d+)/.exec(stack);
    return m ? { line: Number(m[1]), column: Number(m[2]) } : null;
  }
  function errorText(err) {
    try {
      if (err instanceof ErrorC) return `${err.name}: ${err.message}`;
      if (err && typeof err === 'object' && typeof err.message === 'string') return err.message;
      return String(err);
    } catch (e) {
      return 'The job threw a value that cannot be shown';
    }
  }
  function settle(meta, body) {
    if (outcome !== null) return;
    ended = true;
    meta.logs = logBuffer.splice(0);
    outcome = stringify(meta) + '\n' + (body === undefined ? '' : body);
    timers.clear();
    if (asyncMode) note('D');
  }
  function fail(err, where) {
    const code = err && typeof err === 'object' && err.code === 'JOB-002' ? 'JOB-002' : 'JOB-001';
    const meta = { ok: false, code, message: errorText(err) };
    const pos = jobLine(err);
    if (pos) { meta.line = pos.line; meta.column = pos.column; }
    if (where) meta.where = where;
    settle(meta);
  }

  // ---- unhandled rejections of promises the job makes with Promise ----------
  const HANDLED = Symbol('handled');
  class JobPromise extends NativePromise {
    constructor(executor) {
      let self = null;
      super((resolve, reject) => executor(resolve, (reason) => {
        reject(reason);
        later(1, () => { if (self && !self[HANDLED]) fail(reason, 'unhandled rejection'); });
      }));
      self = this;
    }
    then(onOk, onErr) { this[HANDLED] = true; return super.then(onOk, onErr); }
    static get [Symbol.species]() { return JobPromise; }
    static [Symbol.hasInstance](v) { return v instanceof NativePromise; }
  }

  // ---- response builders -----------------------------------------------------
  const RESPONSES = new WeakSet();
  const TEXT_TYPES = { html: 'text/html; charset=utf-8', text: 'text/plain; charset=utf-8',
    csv: 'text/csv; charset=utf-8', json: 'application/json' };
  function status(s, dflt) {
    const n = s === undefined ? dflt : Number(s);
    if (!Number.isInteger(n) || n < 100 || n > 599) throw new TypeError(`Invalid HTTP status: ${s}`);
    return n;
  }
  function plainHeaders(h) {
    const out = {};
    if (h && typeof h === 'object') for (const k of keys(h)) out[String(k)] = String(h[k]);
    return out;
  }
  function bytesOf(b) {
    if (typeof b === 'string') return { body: b, encoding: 'base64' };
    if (b instanceof ArrayBuffer) b = new Uint8Array(b);
    if (ArrayBuffer.isView(b)) {
      return { body: BufferC.from(b.buffer, b.byteOffset, b.byteLength).toString('base64'),
        encoding: 'base64' };
    }
    throw new TypeError('Expected bytes (Buffer, Uint8Array, ArrayBuffer) or a base64 string');
  }
  function make(r) { const f = freeze(r); RESPONSES.add(f); return f; }
  function textResponse(type, text, st, extra) {
    return make({ type, format: TEXT_TYPES[type], status: status(st, 200), headers: {},
      body: String(text), encoding: 'utf8', ...extra });
  }
  const response = freeze({
    json: (body, st, headers) => make({ type: 'json', format: TEXT_TYPES.json, status: status(st, 200),
      headers: plainHeaders(headers), value: body }),
    html: (text, st) => textResponse('html', text, st),
    text: (text, st) => textResponse('text', text, st),
    csv: (text, filename) => textResponse('csv', text, 200, { filename: String(filename || 'export.csv') }),
    pdf: (bytes, filename) => make({ type: 'pdf', format: 'application/pdf', status: 200, headers: {},
      filename: String(filename || 'document.pdf'), ...bytesOf(bytes) }),
    file: (bytes, filename, contentType) => make({ type: 'file',
      format: String(contentType || 'application/octet-stream'), status: 200, headers: {},
      filename: String(filename || 'download'), ...bytesOf(bytes) }),
    redirect: (url, st) => make({ type: 'redirect', format: 'text/plain; charset=utf-8',
      status: status(st, 302), headers: { Location: String(url) }, body: '', encoding: 'utf8' }),
    raw: (body, headers, st) => {
      const h = plainHeaders(headers);
      const ct = keys(h).find((k) => k.toLowerCase() === 'content-type');
      const data = typeof body === 'string' ? { body, encoding: 'utf8' } : bytesOf(body);
      return make({ type: 'raw', format: ct ? h[ct] : 'application/octet-stream', status: status(st, 200),
        headers: h, ...data });
    },
  });

  function serialise(value) {
    try {
      const text = spec.pretty ? stringify(value, null, 2) : stringify(value);
      return text === undefined ? 'null' : text;
    } catch (err) {
      const why = String(err && err.message).split('\n')[0];
      throw new TypeError(`The result cannot be sent as JSON: ${why}`);
    }
  }
  function succeed(value) {
    if (value === undefined) {
      settle({ ok: false, code: 'JOB-004', message: 'The job finished without returning a result' });
      return;
    }
    try {
      if (value !== null && typeof value === 'object' && RESPONSES.has(value)) {
        const meta = { ok: true, ...value };
        let body = value.body;
        if (value.type === 'json') { body = serialise(value.value); delete meta.value; meta.encoding = 'utf8'; }
        delete meta.body;
        settle(meta, body);
        return;
      }
      if (value !== null && typeof value === 'object' && !isArray(value) && value.success === false) {
        const why = value.error ?? value.message ?? 'The job returned success: false';
        settle({ ok: false, code: 'JOB-001', message: typeof why === 'string' ? why : serialise(why),
          reported: true });
        return;
      }
      settle({ ok: true, type: 'json', format: TEXT_TYPES.json, status: 200, headers: {},
        encoding: 'utf8' }, serialise(value));
    } catch (err) {
      fail(err);
    }
  }

  // ---- sign / verify: HMAC-SHA256 tokens ------------------------------------
  const K = new Uint32Array([0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
    0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb,
    0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624,
    0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb,
    0xbef9a3f7, 0xc67178f2]);
  function sha256(bytes) {
    const len = bytes.length;
    const total = ((len + 9 + 63) >> 6) << 6;
    const m = new Uint8Array(total);
    m.set(bytes); m[len] = 0x80;
    const dv = new DataView(m.buffer);
    dv.setUint32(total - 4, (len * 8) >>> 0); dv.setUint32(total - 8, Math.floor(len / 0x20000000));
    const H = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c,
      0x1f83d9ab, 0x5be0cd19]);
    const W = new Uint32Array(64);
    const rotr = (x, n) => (x >>> n) | (x << (32 - n));
    for (let off = 0; off < total; off += 64) {
      for (let i = 0; i < 16; i++) W[i] = dv.getUint32(off + i * 4);
      for (let i = 16; i < 64; i++) {
        const a = W[i - 15], b = W[i - 2];
        W[i] = W[i - 16] + (rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3)) + W[i - 7]
          + (rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10));
      }
      let [a, b, c, d, e, f, g, h] = H;
      for (let i = 0; i < 64; i++) {
        const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + W[i]) >>> 0;
        const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
        h = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
      }
      H[0] += a; H[1] += b; H[2] += c; H[3] += d; H[4] += e; H[5] += f; H[6] += g; H[7] += h;
    }
    const out = new Uint8Array(32);
    const ov = new DataView(out.buffer);
    for (let i = 0; i < 8; i++) ov.setUint32(i * 4, H[i]);
    return out;
  }
  function hmac(key, data) {
    const block = new Uint8Array(64);
    block.set(key.length > 64 ? sha256(key) : key);
    const inner = new Uint8Array(64 + data.length);
    const outer = new Uint8Array(96);
    for (let i = 0; i < 64; i++) { inner[i] = block[i] ^ 0x36; outer[i] = block[i] ^ 0x5c; }
    inner.set(data, 64);
    outer.set(sha256(inner), 64);
    return sha256(outer);
  }
  let signKeyB64 = '';
  let signKeyBytes = null;
  const signKey = () => signKeyBytes || (signKeyBytes = BufferC.from(signKeyB64, 'base64'));
  const b64u = (bytes) => BufferC.from(bytes).toString('base64url');
  function sign(payload, ttlSeconds) {
    const ttl = ttlSeconds === undefined ? 900 : Number(ttlSeconds);
    if (!(ttl > 0)) throw new TypeError('ttlSeconds must be a positive number');
    const body = b64u(BufferC.from(stringify({ p: payload, exp: Math.floor(now() / 1000 + ttl) })));
    return body + '.' + b64u(hmac(signKey(), BufferC.from(body)));
  }
  function verify(token) {
    if (typeof token !== 'string') return null;
    const dot = token.indexOf('.');
    if (dot < 1) return null;
    const expected = b64u(hmac(signKey(), BufferC.from(token.slice(0, dot))));
    const given = token.slice(dot + 1);
    let diff = expected.length ^ given.length;
    for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ given.charCodeAt(i);
    if (diff !== 0) return null;
    try {
      const claim = parse(BufferC.from(token.slice(0, dot), 'base64url').toString('utf8'));
      return claim && claim.exp >= now() / 1000 ? claim.p : null;
    } catch (e) {
      return null;
    }
  }

  // ---- require: approved modules arrive with the outside-world issue --------
  function jobRequire(name) {
    const err = new ErrorC(`Module '${String(name)}' is not approved for jobs`);
    err.code = 'JOB-002';
    throw err;
  }

  // ---- bridge calls to the host (db, http later) -----------------------------
  let nextCall = 1;
  const calls = new Map();
  function bridge(op, args) {
    if (ended) return JobPromise.reject(new ErrorC('The run has ended'));
    const id = nextCall++;
    return new JobPromise((resolve, reject) => {
      calls.set(id, { resolve, reject });
      note('C' + stringify({ id, op, args }));
    });
  }

  // ---- globals ---------------------------------------------------------------
  function define(name, value, writable) {
    const d = Object.getOwnPropertyDescriptor(G, name);
    if (d && !d.configurable) { G[name] = value; return; }
    defineProperty(G, name, { value, writable: !!writable, configurable: !!writable, enumerable: false });
  }
  define('setTimeout', (fn, ms, ...args) => schedule(fn, ms, args, false), true);
  define('setInterval', (fn, ms, ...args) => schedule(fn, ms, args, true), true);
  define('clearTimeout', clear, true);
  define('clearInterval', clear, true);
  define('queueMicrotask', (fn) => { nativeThen.call(NativePromise.resolve(), () => {
    try { fn(); } catch (err) { fail(err, 'microtask'); } }); }, true);
  define('Promise', JobPromise, true);

  function install(s) {
    spec = s;
    live = !!s.live;
    runStart = lastFlush = now();
    signKeyB64 = String(s.signKey || '');
    delete s.signKey;
    define('params', s.params, true);
    define('request', freeze(s.request), true);
    define('userID', s.request.caller && s.request.caller.id !== undefined ? s.request.caller.id : null, true);
    define('isAuthenticated', !!(s.request.caller && s.request.caller.kind !== 'anonymous'), true);
    define('limits', freeze(s.limits), true);
    define('console', jobConsole, true);
    define('response', response, true);
    define('sign', sign, true);
    define('verify', verify, true);
    define('breakpoint', () => undefined, true);
    define('require', jobRequire, true);
  }

  const host = freeze({
    run(specJson, job) {
      if (spec !== null) throw new ErrorC('A run is already started');
      install(parse(specJson));
      let p;
      try { p = job(); } catch (err) { fail(err); return; }
      nativeThen.call(p, succeed, (err) => fail(err));
    },
    poll() {
      if (outcome === null) { asyncMode = true; return ''; }
      return outcome;
    },
    reply(id, ok, valueJson) {
      const call = calls.get(id);
      if (!call) return;
      calls.delete(id);
      const value = parse(valueJson);
      if (ok) { call.resolve(value); return; }
      const err = new ErrorC(value && value.message ? value.message : 'The host call failed');
      if (value && value.code) err.code = value.code;
      call.reject(err);
    },
    bridge,
  });
  defineProperty(G, '__webjob_host', { value: host, writable: false, configurable: false, enumerable: false });
})();
//# sourceURL=webjobs:prelude
