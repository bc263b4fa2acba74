// The sandbox of one run. Evaluated in every fresh V8 context after polyfills.js
// and bytes.js, before any job code. It captures the intrinsics its own machinery
// uses (so a job that rewrites Function.prototype.call, JSON, Map, %TypedArray%
// or Object.prototype can break only itself, never reach the host, the signing
// key or the channel memory), removes what a job must not reach, installs the job
// globals, and exposes one hidden object, __webjob_host, that the worker uses to
// start the job, poll for its outcome and answer bridge calls. The host functions
// (__webjob_note; __webjob_wake, set only for a run watched live) are captured here
// and deleted from the global.
//
// Functions every run calls are written `const f = (function f(...) {...})`: V8
// compiles a parenthesised function with the script, where a plain declaration is
// pre-parsed first and parsed again at its first call (~6% of a context's cost).
(() => {
  'use strict';
  const G = globalThis;
  const note = G.__webjob_note;
  let wake = null;  // a live run's: taken in install(), before any job code
  const bytes = G.__webjob_bytes;
  const responses = G.__webjob_responses;
  const cryptoHost = G.__webjob_crypto;
  const takeLibrary = G.__webjob_library;
  const libraryText = G.__webjob_library_text;  // polyfills.js: a chunk's text
  // rawBody's decoder (WHATWG: bytes.utf8Decode replaces invalid sequences otherwise)
  const TextDecoderC = G.TextDecoder;
  const FP = Function.prototype;
  const uncurry = FP.bind.bind(FP.call);
  const Fn = Function;
  const apply = Reflect.apply;
  const { stringify, parse } = JSON;
  const { defineProperty, getOwnPropertyDescriptor, freeze, keys } = Object;
  const NativePromise = Promise;
  const thenOf = uncurry(NativePromise.prototype.then);
  const SAB = G.SharedArrayBuffer;
  const { waitAsync, load: atomicLoad, store: atomicStore } = Atomics;
  const Int32 = Int32Array, U8 = Uint8Array;
  const mapGet = uncurry(Map.prototype.get), mapSet = uncurry(Map.prototype.set);
  const mapHas = uncurry(Map.prototype.has), mapDelete = uncurry(Map.prototype.delete);
  const mapClear = uncurry(Map.prototype.clear);
  const weakAdd = uncurry(WeakSet.prototype.add), weakHas = uncurry(WeakSet.prototype.has);
  const push = uncurry(Array.prototype.push);
  const strSlice = uncurry(String.prototype.slice), strIndexOf = uncurry(String.prototype.indexOf);
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const regExec = uncurry(RegExp.prototype.exec);
  const now = Date.now, ErrorC = Error, TypeErrorC = TypeError, isArray = Array.isArray;
  const StringC = String, NumberC = Number, isInteger = Number.isInteger, floor = Math.floor;

  for (const name of ['__webjob_note', '__webjob_wake', '__webjob_bytes', '__webjob_responses',
    '__webjob_debug_runtime', '__webjob_crypto', '__webjob_library', '__webjob_library_text',
    'SharedArrayBuffer',
    'Atomics', 'WebAssembly', '__timer_manager', 'setTimeout', 'clearTimeout', 'console']) {
    // mini-racer declares its timer helpers with `var`: those can only be overwritten.
    try { delete G[name]; } catch (e) { G[name] = undefined; }
  }

  // ---- run state -----------------------------------------------------------
  let spec = null;
  let outcome = null;        // "meta\nbody" once the run settled
  let asyncMode = false;     // the host waits for a notification
  let ended = false;
  let live = false;          // someone watches the console as it happens
  let logBuffer = [];        // lines the channel had no room for
  let runStart = now();      // reset when the job starts
  let lastFlush = runStart;
  let flushQueued = false;
  let consoleBytes = 0;
  const CONSOLE_CAP = 8 * 1024 * 1024;  // characters, plus 32 a line: the rest is dropped
  // The run's hard caps (spec.caps, from the hub's settings): going over ends the
  // run with JOB-003, checked here so the worker never even sends the bytes.
  const MB = 1024 * 1024;
  let caps = { result: 50 * MB, payload: 64 * MB, console: 10 * MB };
  const CAP_TEXT = { result: ["The job's result", 'WEBJOB_MAX_RESULT_MB'],
    payload: ['A bridge payload (a db.exec or http() call or its answer)', 'WEBJOB_MAX_PAYLOAD_MB'],
    console: ["The job's console output", 'WEBJOB_MAX_CONSOLE_MB'] };
  const LINE_CAP = 16 * 1024;
  const BROKEN = '{"ok":false,"code":"JOB-001","message":"The job broke the sandbox\'s own machinery"}';
  const elapsed = () => now() - runStart;

  // Our own JSON for our own data: never consults toJSON, setters or iterators.
  const enc = (function enc(v) {
    if (v === null || v === undefined) return 'null';
    const t = typeof v;
    if (t === 'string') return stringify(v);
    if (t === 'number') return v === v && v !== Infinity && v !== -Infinity ? StringC(v) : 'null';
    if (t === 'boolean') return v ? 'true' : 'false';
    let out;
    if (isArray(v)) {
      out = '[';
      for (let i = 0; i < v.length; i++) out += (i ? ',' : '') + enc(v[i]);
      return out + ']';
    }
    out = '{';
    const ks = keys(v);
    for (let i = 0, first = true; i < ks.length; i++) {
      const val = v[ks[i]];
      if (val === undefined) continue;
      out += (first ? '' : ',') + stringify(ks[i]) + ':' + enc(val);
      first = false;
    }
    return out + '}';
  });

  // ---- timers: V8 has none; Atomics.waitAsync gives a delayed task ----------
  function later(ms, fn) {
    const res = waitAsync(new Int32(new SAB(4)), 0, 0, ms > 1 ? ms : 1);
    thenOf(res.async ? res.value : new NativePromise((r) => r()), fn);
  }
  let nextTimer = 1;
  const timers = new Map();
  function schedule(fn, ms, args, repeat) {
    if (typeof fn !== 'function') throw new TypeErrorC('The callback must be a function');
    const id = nextTimer++;
    const delay = NumberC(ms) > 0 ? NumberC(ms) : 0;
    const fire = () => {
      if (ended || !mapHas(timers, id)) return;
      if (!repeat) mapDelete(timers, id);
      try { apply(fn, undefined, args); } catch (err) { fail(err, 'timer'); return; }
      if (repeat && mapHas(timers, id)) later(delay, fire);
    };
    mapSet(timers, id, true);
    later(delay, fire);
    return id;
  }
  const clear = (id) => { mapDelete(timers, id); };

  // ---- console channel: a ring in shared memory the worker reads directly -----
  // Frames are [length:u32 LE][UTF-8 JSON]; the worker reads them with its own
  // cursor without the isolate, so a line logged just before a busy loop still
  // reaches it. cursors[0] = bytes written, cursors[1] = bytes read (worker).
  // After the ring, a small outcome area: a synchronous job's outcome (when short)
  // is left there, so the worker reads it without another round trip into V8.
  // Last, the library: source text compiled only when a job first needs it, which
  // the worker writes there as UTF-16 code units (so V8 never scans it otherwise);
  // the worker fills in its size. See polyfills.js.
  const CHANNEL_BYTES = 64 * 1024;
  const OUTCOME_BYTES = 8 * 1024;
  const LIBRARY_AT = 16 + CHANNEL_BYTES + 8 + OUTCOME_BYTES;
  const LIBRARY_BYTES = 0/*@library-bytes*/;
  const channelMemory = new SAB(LIBRARY_AT + LIBRARY_BYTES);
  if (typeof takeLibrary === 'function') takeLibrary(new Uint16Array(channelMemory, LIBRARY_AT, LIBRARY_BYTES / 2));
  const cursors = new Int32(channelMemory, 0, 2);
  const ring = new U8(channelMemory, 16, CHANNEL_BYTES);
  const outcomeLength = new Int32(channelMemory, 16 + CHANNEL_BYTES, 1);
  const outcomeBytes = new U8(channelMemory, 16 + CHANNEL_BYTES + 8, OUTCOME_BYTES);
  atomicStore(outcomeLength, 0, -1);
  const outcomeToMemory = (function outcomeToMemory(text) {
    if (text.length > OUTCOME_BYTES / 3) return;  // UTF-8 needs at most 3 bytes a code unit
    const data = bytes.utf8Encode(text);
    bytes.ringPut(outcomeBytes, OUTCOME_BYTES, 0, data);
    atomicStore(outcomeLength, 0, bytes.length(data));
  });
  let channelOpen = true;    // once full, the rest of the run's lines take the slow path
  G.__webjob_channel = channelMemory;  // taken by the worker and deleted before any job code
  function toChannel(frame) {
    if (!channelOpen) return false;
    const data = bytes.utf8Encode(frame);
    const n = bytes.length(data);
    const written = atomicLoad(cursors, 0);
    if (written - atomicLoad(cursors, 1) + 4 + n > CHANNEL_BYTES) {
      channelOpen = false;
      return false;
    }
    const head = new U8(4);
    head[0] = n & 255; head[1] = (n >> 8) & 255; head[2] = (n >> 16) & 255; head[3] = (n >>> 24) & 255;
    bytes.ringPut(ring, CHANNEL_BYTES, written, head);
    bytes.ringPut(ring, CHANNEL_BYTES, written + 4, data);
    atomicStore(cursors, 0, written + 4 + n);
    return true;
  }

  // ---- console -----------------------------------------------------------------
  // format() (and its describe()) are cold code, compiled when first needed (below).
  function format(args) { return cold().format(args); }
  const takeBuffer = (function takeBuffer() { const lines = logBuffer; logBuffer = []; return lines; });
  function flush() {
    flushQueued = false;
    lastFlush = now();
    if (logBuffer.length && outcome === null) note('L' + enc(takeBuffer()));
  }
  // Not watched live, a line is just kept and leaves with the outcome (the cheap
  // path: a killed run's worker dies with its memory either way). Watched live, it
  // goes through the channel at once, or batched as notes when the channel is full.
  function emit(level, args) {
    if (ended || consoleBytes > CONSOLE_CAP) return;
    let message;
    try {
      message = args.length === 1 && typeof args[0] === 'string' && strIndexOf(args[0], '%') < 0
        ? args[0] : StringC(format(args));
    } catch (e) {
      message = '[a value console could not show]';
    }
    consoleBytes += message.length + 32;  // an empty line still costs something
    if (consoleBytes > caps.console) { overCap('console'); return; }
    if (consoleBytes > CONSOLE_CAP) message = '[console output over 8 MB: the rest of it is dropped]';
    if (message.length > LINE_CAP) message = strSlice(message, 0, LINE_CAP) + ` \u2026 [${message.length} chars]`;
    const line = [level, message, elapsed()];
    if (live && toChannel('["' + level + '",' + stringify(message) + ',' + line[2] + ']')) {
      wake();
      return;
    }
    push(logBuffer, line);
    if (!live) return;
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
    try {
      const m = regExec(/job\.js:(\d+):(\d+)/, StringC(err && err.stack));
      return m ? { line: NumberC(m[1]), column: NumberC(m[2]) } : null;
    } catch (e) {
      return null;
    }
  }
  function errorText(err) {
    try {
      if (err instanceof ErrorC) return StringC(`${err.name}: ${err.message}`);
      if (err && typeof err === 'object' && typeof err.message === 'string') return err.message;
      return StringC(err);
    } catch (e) {
      return 'The job threw a value that cannot be shown';
    }
  }
  const settle = (function settle(meta, body) {
    if (outcome !== null) return;
    if (meta.ok && bodyOverCap(meta, body)) { overCap('result'); return; }
    ended = true;
    let head;
    try { head = enc({ ...meta, logs: takeBuffer() }); } catch (e) { head = BROKEN; }
    outcome = head + '\n' + (typeof body === 'string' ? body : '');
    outcomeToMemory(outcome);
    try { mapClear(timers); } catch (e) { /* timers end with the context anyway */ }
    if (asyncMode) note('D');
  });
  const overCap = (function overCap(limit) {
    const text = CAP_TEXT[limit];  // indexed, not destructured: a job may replace iterators
    settle({ ok: false, code: 'JOB-003', limit,
      message: `${text[0]} is over the limit of ${caps[limit] / MB} MB (${text[1]})` });
  });
  // A body's size in bytes is at least its length in code units (UTF-8), or about
  // three quarters of it (base64): over the cap by that measure, it is over for sure.
  const bodyOverCap = (function bodyOverCap(meta, body) {
    if (typeof body !== 'string') return false;
    const units = meta.encoding === 'utf8' ? body.length : floor(body.length * 3 / 4) - 2;
    return units > caps.result;
  });
  function fail(err, where) {
    let code = 'JOB-001';
    try { if (err && typeof err === 'object' && err.code === 'JOB-002') code = 'JOB-002'; } catch (e) { /* */ }
    const pos = jobLine(err);
    settle({ ok: false, code, message: errorText(err), line: pos ? pos.line : undefined,
      column: pos ? pos.column : undefined, where });
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
  const rejected = (err) => new JobPromise((_, reject) => reject(err));

  // ---- response builders (responses.js) ------------------------------------
  const response = responses.response;
  const JSON_TYPE = 'application/json';

  const serialise = (function serialise(value) {
    let text;
    try {
      text = spec.pretty ? stringify(value, null, 2) : stringify(value);
    } catch (err) {
      let why = 'it cannot be serialised';
      try {
        why = StringC(err.message);
        const nl = strIndexOf(why, '\n');
        why = strSlice(why, 0, nl >= 0 && nl < 300 ? nl : 300);
      } catch (e) { /* keep the plain reason */ }
      throw new TypeErrorC(`The result cannot be sent as JSON: ${why}`);
    }
    return typeof text === 'string' ? text : 'null';
  });
  const succeed = (function succeed(value) {
    if (value === undefined) {
      settle({ ok: false, code: 'JOB-004', message: 'The job finished without returning a result' });
      return;
    }
    try {
      if (value !== null && typeof value === 'object' && responses.isResponse(value)) {
        const r = value;
        settle({ ok: true, type: r.type, format: r.format, status: r.status, headers: r.headers,
          filename: r.filename, encoding: r.encoding }, r.type === 'json' ? serialise(r.value) : r.body);
        return;
      }
      if (value !== null && typeof value === 'object' && !isArray(value) && value.success === false) {
        const why = value.error ?? value.message ?? 'The job returned success: false';
        settle({ ok: false, code: 'JOB-001', message: typeof why === 'string' ? why : serialise(why),
          reported: true });
        return;
      }
      settle({ ok: true, type: 'json', format: JSON_TYPE, status: 200, headers: {}, encoding: 'utf8' },
        serialise(value));
    } catch (err) {
      fail(err);
    }
  });

  // ---- sign / verify: HMAC-SHA256 tokens, computed with bytes.js only -------
  let signKeyB64 = '';
  let signKeyBytes = null;
  const signKey = () => signKeyBytes || (signKeyBytes = bytes.base64Decode(signKeyB64));
  function sign(payload, ttlSeconds) { return cold().sign(payload, ttlSeconds); }
  function verify(token) { return cold().verify(token); }

  // ---- require: approved modules the worker loaded for this job -------------
  const modules = new Map();
  function jobRequire(name) {
    const key = StringC(name);
    // Only modules this job names as text: one loaded for an earlier job on this
    // worker stays invisible, so a job behaves the same on every worker.
    const named = spec && isArray(spec.named) && spec.named.indexOf(key) >= 0;
    if (named && mapHas(modules, key)) return mapGet(modules, key);
    const approved = spec && isArray(spec.approved) && spec.approved.indexOf(key) >= 0;
    const err = new ErrorC(approved
      ? `Module '${key}' is approved but not installed on this hub (or not named as text: require('${key}'))`
      : `Module '${key}' is not approved for jobs`);
    err.code = 'JOB-002';
    throw err;
  }

  // ---- bridge calls to the host (db, http later): policy is applied there ----
  let nextCall = 1;
  const calls = new Map();
  function bridge(op, args) {
    if (ended) return rejected(new ErrorC('The run has ended'));
    let argsJson;
    try { argsJson = stringify(args === undefined ? null : args); } catch (err) { return rejected(err); }
    if (typeof argsJson === 'string' && argsJson.length > caps.payload) {
      overCap('payload');  // the run is over: what the job awaits never settles
      return new NativePromise(() => undefined);
    }
    const id = nextCall++;
    return new JobPromise((resolve, reject) => {
      mapSet(calls, id, { resolve, reject });
      note('C{"id":' + id + ',"op":' + stringify(StringC(op)) + ',"args":'
        + (typeof argsJson === 'string' ? argsJson : 'null') + '}');
    });
  }

  // ---- db.exec and http: thin wrappers; the host applies every policy -------
  const db = freeze({
    exec(sql, params) {
      if (typeof sql !== 'string') return rejected(new TypeErrorC('db.exec(sql, params): sql must be text'));
      return bridge('db.exec', { sql, params: params === undefined ? [] : params });
    },
  });
  function http(url, options) { return cold().http(url, options); }

  // ---- cold code: the parts of the sandbox most runs never call (console
  // formatting of non-text values, sign/verify, http), compiled from the library
  // the first time a run needs one, so that V8 does not pre-parse them for every
  // context (see polyfills.js). Chunk code must not contain a block comment.
  const SRC = { __proto__: null };
  SRC.prelude = () => {/*'use strict';
  const { stringify, parse, StringC, NumberC, ErrorC, TypeErrorC, floor, now, weakAdd, weakHas,
    strIndexOf, strSlice, charCodeAt, bytes, signKey, bridge, JobPromise, HANDLED, thenOf, U8, G,
    defineProperty, freeze } = env;
  function describe(v) {
    if (typeof v === 'string') return v;
    if (typeof v === 'bigint') return `${v}n`;
    if (typeof v === 'symbol' || v === undefined || v === null) return StringC(v);
    if (typeof v === 'function') return `[Function: ${v.name || 'anonymous'}]`;
    if (typeof v !== 'object') return StringC(v);
    if (v instanceof ErrorC) return v.stack ? StringC(v.stack) : `${v.name}: ${v.message}`;
    const seen = new WeakSet();
    return stringify(v, (k, x) => {
      if (typeof x === 'bigint') return `${x}n`;
      if (typeof x === 'function') return `[Function: ${x.name || 'anonymous'}]`;
      if (x instanceof Map) return { Map: [...x.entries()] };
      if (x instanceof Set) return { Set: [...x.values()] };
      if (x && typeof x === 'object') {
        if (weakHas(seen, x)) return '[Circular]';
        weakAdd(seen, x);
      }
      return x;
    });
  }
  function format(args) {
    let out = '';
    let i = 0;
    if (typeof args[0] === 'string' && strIndexOf(args[0], '%') >= 0) {
      i = 1;
      out = args[0].replace(/%[sdifjoO%]/g, (m) => {
        if (m === '%%') return '%';
        if (i >= args.length) return m;
        const a = args[i++];
        if (m === '%d' || m === '%f') return StringC(NumberC(a));
        if (m === '%i') return StringC(Math.trunc(NumberC(a)));
        return describe(a);
      });
    }
    for (; i < args.length; i++) out += (out ? ' ' : '') + describe(args[i]);
    return out;
  }
  const mac = (text) => bytes.base64url(bytes.hmacSha256(signKey(), bytes.utf8Encode(text)));
  function sign(payload, ttlSeconds) {
    const ttl = ttlSeconds === undefined ? 900 : NumberC(ttlSeconds);
    if (!(ttl > 0)) throw new TypeErrorC('ttlSeconds must be a positive number');
    const claim = stringify({ p: payload, exp: floor(now() / 1000 + ttl) });
    if (typeof claim !== 'string') throw new TypeErrorC('The payload cannot be signed');
    const body = bytes.base64url(bytes.utf8Encode(claim));
    return body + '.' + mac(body);
  }
  function verify(token) {
    if (typeof token !== 'string') return null;
    const dot = strIndexOf(token, '.');
    if (dot < 1) return null;
    const head = strSlice(token, 0, dot), given = strSlice(token, dot + 1), expected = mac(head);
    let diff = expected.length ^ given.length;
    for (let i = 0; i < expected.length; i++) diff |= charCodeAt(expected, i) ^ charCodeAt(given, i);
    if (diff !== 0) return null;
    try {
      const claim = parse(bytes.utf8Decode(bytes.base64Decode(head)));
      return claim && claim.exp >= now() / 1000 ? claim.p : null;
    } catch (e) {
      return null;
    }
  }

  function toBase64(view) {
    const url = bytes.base64url(new U8(view.buffer, view.byteOffset, view.byteLength));
    let out = '';
    for (let i = 0; i < url.length; i++) {
      const c = url[i];
      out += c === '-' ? '+' : c === '_' ? '/' : c;
    }
    for (let pad = (4 - (url.length % 4)) % 4; pad > 0; pad--) out += '=';
    return out;
  }
  function httpOptions(options) {
    const o = options && typeof options === 'object' ? { ...options } : {};
    if (o.body instanceof ArrayBuffer) o.body = new U8(o.body);
    if (ArrayBuffer.isView(o.body)) o.body = { base64: toBase64(o.body) };
    return o;
  }
  function httpResponse(r) {
    let raw = null;
    const res = { status: r.status, ok: r.ok, statusText: r.statusText, headers: r.headers,
      text: r.text, url: r.url, json() { return parse(r.text); } };
    defineProperty(res, 'bytes', { enumerable: true,
      get() { return raw || (raw = G.Buffer.from(r.base64 || '', 'base64')); } });
    return freeze(res);
  }
  function http(url, options) {
    const call = bridge('http', { url: StringC(url), options: httpOptions(options) });
    call[HANDLED] = true;  // handled here: what the job gets is the promise below
    return new JobPromise((resolve, reject) => thenOf(call, (r) => resolve(httpResponse(r)), reject));
  }

  return { format, sign, verify, http };
  */};
  let coldParts = null;
  function cold() {
    if (coldParts === null) {
      const env = { __proto__: null, stringify, parse, StringC, NumberC, ErrorC, TypeErrorC, floor,
        now, weakAdd, weakHas, strIndexOf, strSlice, charCodeAt, bytes, signKey, bridge, JobPromise,
        HANDLED, thenOf, U8, G, defineProperty, freeze };
      // polyfills.js's reader: the prelude only ever runs in a hub context, with the library
      coldParts = Fn('env', libraryText('prelude', SRC.prelude)
        + '\n//# sourceURL=webjobs:prelude-cold')(env);
    }
    return coldParts;
  }

  // ---- request: rawBody as text, rawBytes() as a fresh Buffer of the exact bytes ----
  // The body crosses as text when it is valid UTF-8 (its bytes are then the text's
  // UTF-8), else as base64, decoded (with replacement characters) when first read.
  const requestView = (function requestView(r) {
    if (!r || typeof r !== 'object') return r;
    const b64 = typeof r.rawBase64 === 'string' ? r.rawBase64 : null;
    delete r.rawBase64;
    let raw = null, text = typeof r.rawBody === 'string' ? r.rawBody : b64 === null ? '' : null;
    const exact = () => raw || (raw = b64 !== null ? bytes.base64Decode(b64) || new U8(0) : bytes.utf8Encode(text));
    defineProperty(r, 'rawBody', { enumerable: true, configurable: false,
      get: () => (text !== null ? text : (text = StringC(new TextDecoderC().decode(exact())))) });
    defineProperty(r, 'rawBytes', { enumerable: false, value: () => G.Buffer.from(exact()) });
    return r;
  });

  // ---- secrets: only the names the header declares; values from the spec -------
  // An undeclared or unset name throws an Error naming it (never a value), so a
  // job cannot fish for other jobs' secrets. The host masks every value given here
  // in what leaves the run (console, errors, history, the debugger).
  const secretsApi = (function secretsApi(given) {
    const declared = new Map(), values = new Map();
    const names = given && isArray(given.names) ? given.names : [];
    const vals = given && given.values && typeof given.values === 'object' ? given.values : {};
    for (let i = 0; i < names.length; i++) mapSet(declared, StringC(names[i]), true);
    const ks = keys(vals);
    for (let i = 0; i < ks.length; i++) {
      if (typeof vals[ks[i]] === 'string') mapSet(values, ks[i], vals[ks[i]]);
    }
    function get(name) {
      const key = typeof name === 'string' ? name : StringC(name);
      if (!mapHas(declared, key)) {
        throw new ErrorC(`Secret '${key}' is not declared in this job's header (add it to its Secrets: line)`);
      }
      if (!mapHas(values, key)) throw new ErrorC(`Secret '${key}' is not set on this hub`);
      return mapGet(values, key);
    }
    return freeze({ get });
  });

  // ---- globals ---------------------------------------------------------------
  const define = (function define(name, value) {
    const d = getOwnPropertyDescriptor(G, name);
    if (d && !d.configurable) { G[name] = value; return; }
    defineProperty(G, name, { value, writable: true, configurable: true, enumerable: false });
  });
  define('setTimeout', (fn, ms, ...args) => schedule(fn, ms, args, false));
  define('setInterval', (fn, ms, ...args) => schedule(fn, ms, args, true));
  define('clearTimeout', clear);
  define('clearInterval', clear);
  define('queueMicrotask', (fn) => {
    thenOf(new NativePromise((r) => r()), () => { try { fn(); } catch (err) { fail(err, 'microtask'); } });
  });
  define('Promise', JobPromise);

  // A debug run's worker evaluates debug_runtime.js after this script and before
  // the job's (no other run pays for compiling it): taken here, before job code.
  function debugRuntime() {
    const make = G.__webjob_debug_runtime;
    delete G.__webjob_debug_runtime;
    if (typeof make !== 'function') throw new ErrorC('The debugger runtime is missing');
    return make;
  }
  const install = (function install(s) {
    spec = s;
    const w = G.__webjob_wake;
    delete G.__webjob_wake;
    wake = typeof w === 'function' ? w : null;
    live = !!s.live && wake !== null;  // without it, lines leave with the outcome
    // The console is timed from when the hub took the run (spec.clockOrigin, epoch ms),
    // the clock the hub's own lines (an http() call, a replayed answer) are timed on;
    // a worker's clock that disagrees by seconds keeps its own start instead.
    const started = now(), origin = s.clockOrigin;
    delete s.clockOrigin;
    const fromHub = typeof origin === 'number' && origin <= started && started - origin < 5000;
    runStart = fromHub ? origin : started;
    lastFlush = started;
    signKeyB64 = StringC(s.signKey || '');
    delete s.signKey;
    const entropy = typeof s.entropy === 'string' ? bytes.base64Decode(s.entropy) : null;
    if (entropy) cryptoHost.reseed(entropy);  // 32 host bytes, when the engine sends them
    delete s.entropy;
    const jobSecrets = secretsApi(s.secrets);
    delete s.secrets;
    const c = s.caps;
    if (c && typeof c === 'object') {
      const names = ['result', 'payload', 'console'];
      for (let i = 0; i < names.length; i++) if (NumberC(c[names[i]]) > 0) caps[names[i]] = NumberC(c[names[i]]);
    }
    delete s.caps;
    const caller = s.request && s.request.caller;
    define('params', s.params);
    define('request', freeze(requestView(s.request)));
    define('userID', caller && caller.id !== undefined ? caller.id : null);
    define('isAuthenticated', !!(caller && caller.kind !== 'anonymous'));
    define('limits', freeze(s.limits));
    define('console', jobConsole);
    define('response', response);
    define('sign', sign);
    define('verify', verify);
    define('breakpoint', () => undefined);
    if (s.debug) define('__dbg', debugRuntime()(bridge));
    define('require', jobRequire);
    define('db', db);
    define('http', http);
    define('crypto', cryptoHost.crypto);
    define('secrets', jobSecrets);
  });

  const host = freeze({
    run: (function run(specJson, job) {
      if (spec !== null) throw new ErrorC('A run is already started');
      install(parse(specJson));
      let p;
      try { p = job(); } catch (err) { fail(err); return; }
      thenOf(p, succeed, (err) => fail(err));
    }),
    poll: (function poll() {
      if (outcome === null) { asyncMode = true; return ''; }
      return outcome;
    }),
    reply(id, ok, valueJson) {
      const call = mapGet(calls, id);
      if (!call) return;
      mapDelete(calls, id);
      const value = parse(valueJson);
      if (ok) { call.resolve(value); return; }
      const err = new ErrorC(value && typeof value.message === 'string' ? value.message : 'The host call failed');
      if (value && typeof value.code === 'string') err.code = value.code;
      call.reject(err);
    },
    bridge,
    provide(name, value) {
      if (spec !== null) throw new ErrorC('Modules are provided before the job starts');
      mapSet(modules, StringC(name), value);
    },
  });
  defineProperty(G, '__webjob_host', { value: host, writable: false, configurable: false, enumerable: false });
})();
//# sourceURL=webjobs:prelude
