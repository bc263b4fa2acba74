// The sandbox's shared machinery, evaluated once per V8 context after the web APIs
// (web/*.js, bytes.js, responses.js, crypto.js: scripts.WEB_APIS) and before run.js. It captures
// the intrinsics the machinery uses (so a job that rewrites Function.prototype.call,
// JSON, Map, %TypedArray% or Object.prototype can break only itself, never reach the
// host, the signing key or the channel memory), removes from the global what a job
// must not reach, and hands run.js one hidden object, __webjob_kit: the parts every
// run shares (our own JSON, timers, the console channel, formatting, signing, http's
// shapes). Nothing here holds a run's state: that lives in run.js's newRun().
(() => {
  'use strict';
  const G = globalThis;
  const layout = G.__webjob_protocol;
  const note = G.__webjob_note;
  const wake = G.__webjob_wake;
  // The run's end, told without an argument: reading one would need the isolate, which
  // work the job left spinning may never give back (the outcome is in shared memory).
  const done = G.__webjob_done;
  const bytes = G.__webjob_bytes;
  const responses = G.__webjob_responses;
  const cryptoHost = G.__webjob_crypto;
  const debugRuntime = G.__webjob_debug_runtime;  // only where debug_runtime.js ran first
  // rawBody's decoder (WHATWG: bytes.utf8Decode replaces invalid sequences otherwise)
  const TextDecoderC = G.TextDecoder;
  const FP = Function.prototype;
  const uncurry = FP.bind.bind(FP.call);
  const apply = Reflect.apply;
  const { stringify, parse } = JSON;
  const { defineProperty, freeze, keys } = Object;
  const NativePromise = Promise;
  const thenOf = uncurry(NativePromise.prototype.then);
  const SAB = G.SharedArrayBuffer;
  const { waitAsync, notify, load: atomicLoad, store: atomicStore } = Atomics;
  const Int32 = Int32Array, U8 = Uint8Array;
  const mapGet = uncurry(Map.prototype.get), mapSet = uncurry(Map.prototype.set);
  const mapHas = uncurry(Map.prototype.has), mapDelete = uncurry(Map.prototype.delete);
  const mapClear = uncurry(Map.prototype.clear), mapEach = uncurry(Map.prototype.forEach);
  const weakAdd = uncurry(WeakSet.prototype.add), weakHas = uncurry(WeakSet.prototype.has);
  const push = uncurry(Array.prototype.push);
  const strSlice = uncurry(String.prototype.slice), strIndexOf = uncurry(String.prototype.indexOf);
  const strReplace = uncurry(String.prototype.replace);
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const regExec = uncurry(RegExp.prototype.exec);
  const now = Date.now, ErrorC = Error, TypeErrorC = TypeError, isArray = Array.isArray;
  const StringC = String, NumberC = Number, floor = Math.floor, trunc = Math.trunc, isFinite = Number.isFinite;
  const MapC = Map, WeakSetC = WeakSet, SetC = Set;

  for (const name of ['__webjob_protocol', '__webjob_note', '__webjob_wake', '__webjob_done', '__webjob_bytes', '__webjob_responses',
    '__webjob_debug_runtime', '__webjob_crypto', 'SharedArrayBuffer', 'Atomics', 'WebAssembly',
    '__timer_manager', 'setTimeout', 'clearTimeout', 'console']) {
    // mini-racer declares its timer helpers with `var`: those can only be overwritten.
    try { delete G[name]; } catch (e) { G[name] = undefined; }
  }

  // Our own JSON for our own data: never consults toJSON, setters or iterators.
  const enc = (function enc(v) {
    if (v === null || v === undefined) return 'null';
    const t = typeof v;
    if (t === 'string') return stringify(v);
    if (t === 'number') return isFinite(v) ? StringC(v) : 'null';
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
  // Each wait has its own cell, so that the run's end can wake (cancel) every
  // wait still pending: nothing of an ended run is left queued in the isolate.
  const later = (function later(ms, fn, pending) {
    const cell = new Int32(new SAB(4));
    const res = waitAsync(cell, 0, 0, ms > 1 ? ms : 1);
    if (pending) mapSet(pending, cell, true);
    thenOf(res.async ? res.value : new NativePromise((r) => r()), () => {
      if (pending) mapDelete(pending, cell);
      fn();
    });
  });
  const cancelWaits = (function cancelWaits(pending) {
    mapEach(pending, (_, cell) => { notify(cell, 0); });
    mapClear(pending);
  });

  // ---- console channel: a ring in shared memory the worker reads directly -----
  // One slot per run the context holds at once (layout.slots; a warm isolate serves
  // several runs, interleaved at their awaits), each a run's own: frames are
  // [length:u32 LE][UTF-8 JSON]; the worker reads them with its own cursor without
  // the isolate, so a line logged just before a busy loop still reaches it.
  // cursors[0] = bytes written, cursors[1] = bytes read (worker). After the ring, a
  // small outcome area: a run's outcome (when short) is left there, so the worker
  // reads it without another round trip into V8. The header's first cell says which
  // slot's code the isolate runs (enter()), for the worker's CPU monitor.
  // The layout is hub/engine/hidden.py's, handed over as __webjob_protocol.
  const CHANNEL_BYTES = layout.ringBytes;
  const OUTCOME_BYTES = layout.outcomeBytes;
  const channelMemory = new SAB(layout.memoryBytes);
  const currentCell = new Int32(channelMemory, layout.currentAt, 1);
  atomicStore(currentCell, 0, -1);
  const enterSlot = (function enterSlot(slot) { atomicStore(currentCell, 0, slot); });
  // Once a run has settled: a task of its own (a notified wait resolves in a task of
  // its own, after the microtasks queued before it) writes the run's number, so the
  // worker knows, without asking the isolate, that nothing the run did still runs.
  const idleCell = new Int32(channelMemory, layout.idleAt, 1);
  const markIdleAfter = (function markIdleAfter(seq) {
    const cell = new Int32(new SAB(4));
    thenOf(waitAsync(cell, 0, 0).value, () => { atomicStore(idleCell, 0, seq); });
    notify(cell, 0);
  });
  function slotChannel(slot) {
    const at = layout.slotsAt + slot * layout.slotBytes;
    const cursors = new Int32(channelMemory, at, 2);
    const ring = new U8(channelMemory, at + layout.ringAt, CHANNEL_BYTES);
    const outcomeLength = new Int32(channelMemory, at + layout.outcomeAt, 1);
    const outcomeBytes = new U8(channelMemory, at + layout.outcomeAt + 8, OUTCOME_BYTES);
    const reset = (function reset() {
      atomicStore(outcomeLength, 0, -1);
      atomicStore(cursors, 0, 0);
      atomicStore(cursors, 1, 0);
    });
    reset();
    // -1: no outcome yet; -2: settled, too long for this area (the worker asks for it).
    // Whether the outcome went into the area.
    const outcomeToMemory = (function outcomeToMemory(text) {
      if (text.length > OUTCOME_BYTES / 3) {  // UTF-8 needs at most 3 bytes a code unit
        atomicStore(outcomeLength, 0, -2);
        return false;
      }
      const data = bytes.utf8Encode(text);
      bytes.ringPut(outcomeBytes, OUTCOME_BYTES, 0, data);
      atomicStore(outcomeLength, 0, bytes.length(data));
      return true;
    });
    // false once the ring is full: the rest of the run's lines take the slow path
    const toChannel = (function toChannel(frame) {
      const data = bytes.utf8Encode(frame);
      const n = bytes.length(data);
      const written = atomicLoad(cursors, 0);
      if (written - atomicLoad(cursors, 1) + 4 + n > CHANNEL_BYTES) return false;
      const head = new U8(4);
      head[0] = n & 255; head[1] = (n >> 8) & 255; head[2] = (n >> 16) & 255; head[3] = (n >>> 24) & 255;
      bytes.ringPut(ring, CHANNEL_BYTES, written, head);
      bytes.ringPut(ring, CHANNEL_BYTES, written + 4, data);
      atomicStore(cursors, 0, written + 4 + n);
      return true;
    });
    return freeze({ slot, reset, outcomeToMemory, toChannel });
  }
  const channels = [];
  for (let i = 0; i < layout.slots; i++) push(channels, slotChannel(i));
  const channelOf = (function channelOf(slot) { return channels[slot]; });

  // ---- inbox: a large payload for a run crosses in pieces ---------------------
  // As a literal in its eval, a payload of MBs costs V8's scanner ~10 ms a MB before
  // any code of the eval runs, so before the eval can name its run: that CPU went to
  // the run entered last, and a stop meant for that run landed on the crossing. The
  // worker writes each piece into the inbox and hands it in with a small eval that
  // enters the run first (receive), so taking it is the run's own CPU. A payload is
  // JSON as Python writes it (ASCII only), so each byte is one character: a piece
  // becomes text straight from the inbox, with no copy of the whole payload as bytes.
  const inbox = new U8(channelMemory, layout.inboxAt, layout.inboxBytes);
  const typedSub = uncurry(Object.getPrototypeOf(U8.prototype).subarray);
  const fromCharCode = StringC.fromCharCode, join = uncurry(Array.prototype.join);
  const CHARS_AT_ONCE = 8192;  // arguments to one fromCharCode call
  const arriving = new MapC();  // slot -> { parts: [text], at, total }
  // offset 0 begins a payload (what a slot got before and never took is dropped)
  const receive = (function receive(slot, total, offset, size) {
    enterSlot(slot);
    let piece = mapGet(arriving, slot);
    if (offset === 0 || piece === undefined) {
      piece = { parts: [], at: 0, total };
      mapSet(arriving, slot, piece);
    }
    if (piece.at !== offset || piece.total !== total || offset + size > total) {
      piece.at = -1;  // not whole: received() says so
      return;
    }
    for (let i = 0; i < size; i += CHARS_AT_ONCE) {
      const end = i + CHARS_AT_ONCE < size ? i + CHARS_AT_ONCE : size;
      push(piece.parts, apply(fromCharCode, undefined, typedSub(inbox, i, end)));
    }
    piece.at += size;
  });
  // The payload handed in for the slot, as text; null when none arrived whole.
  const received = (function received(slot) {
    const piece = mapGet(arriving, slot);
    mapDelete(arriving, slot);
    return piece !== undefined && piece.at === piece.total ? join(piece.parts, '') : null;
  });
  // Without a slot: what arrived for every slot (the isolate is idle).
  const dropReceived = (function dropReceived(slot) {
    if (slot === undefined) mapClear(arriving); else mapDelete(arriving, slot);
  });

  // ---- console formatting of values that are not plain text -----------------
  function describe(v) {
    if (typeof v === 'string') return v;
    if (typeof v === 'bigint') return `${v}n`;
    if (typeof v === 'symbol' || v === undefined || v === null) return StringC(v);
    if (typeof v === 'function') return `[Function: ${v.name || 'anonymous'}]`;
    if (typeof v !== 'object') return StringC(v);
    if (v instanceof ErrorC) return v.stack ? StringC(v.stack) : `${v.name}: ${v.message}`;
    const seen = new WeakSetC();
    return stringify(v, (k, x) => {
      if (typeof x === 'bigint') return `${x}n`;
      if (typeof x === 'function') return `[Function: ${x.name || 'anonymous'}]`;
      if (x instanceof MapC) return { Map: [...x.entries()] };
      if (x instanceof SetC) return { Set: [...x.values()] };
      if (x && typeof x === 'object') {
        if (weakHas(seen, x)) return '[Circular]';
        weakAdd(seen, x);
      }
      return x;
    });
  }
  const FORMAT = /%[sdifjoO%]/g;
  function format(args) {
    let out = '';
    let i = 0;
    if (typeof args[0] === 'string' && strIndexOf(args[0], '%') >= 0) {
      i = 1;
      out = strReplace(args[0], FORMAT, (m) => {
        if (m === '%%') return '%';
        if (i >= args.length) return m;
        const a = args[i++];
        if (m === '%d' || m === '%f') return StringC(NumberC(a));
        if (m === '%i') return StringC(trunc(NumberC(a)));
        return describe(a);
      });
    }
    for (; i < args.length; i++) out += (out ? ' ' : '') + describe(args[i]);
    return out;
  }

  // ---- sign / verify: HMAC-SHA256 tokens, computed with bytes.js only -------
  const mac = (key, text) => bytes.base64url(bytes.hmacSha256(key, bytes.utf8Encode(text)));
  function signWith(key, payload, ttlSeconds) {
    const ttl = ttlSeconds === undefined ? 900 : NumberC(ttlSeconds);
    if (!(ttl > 0)) throw new TypeErrorC('ttlSeconds must be a positive number');
    const claim = stringify({ p: payload, exp: floor(now() / 1000 + ttl) });
    if (typeof claim !== 'string') throw new TypeErrorC('The payload cannot be signed');
    const body = bytes.base64url(bytes.utf8Encode(claim));
    return body + '.' + mac(key, body);
  }
  function verifyWith(key, token) {
    if (typeof token !== 'string') return null;
    const dot = strIndexOf(token, '.');
    if (dot < 1) return null;
    const head = strSlice(token, 0, dot), given = strSlice(token, dot + 1), expected = mac(key, head);
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

  // ---- http(): what crosses the bridge, and what the job gets back ----------
  function httpOptions(options) {
    const o = options && typeof options === 'object' ? { ...options } : {};
    if (o.body instanceof ArrayBuffer) o.body = new U8(o.body);
    if (ArrayBuffer.isView(o.body)) {
      o.body = { base64: bytes.base64(new U8(o.body.buffer, o.body.byteOffset, o.body.byteLength)) };
    }
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
    const declared = new MapC(), values = new MapC();
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

  // ---- approved modules: registered once per context, handed out by name ----
  const modules = new MapC();
  const provide = (name, value) => { mapSet(modules, StringC(name), value); };
  const moduleOf = (name) => (mapHas(modules, name) ? mapGet(modules, name) : undefined);

  defineProperty(G, '__webjob_kit', { configurable: true, value: freeze({
    note, wake, done, bytes, responses, cryptoHost, debugRuntime, apply, stringify, parse, freeze,
    NativePromise, thenOf, mapGet, mapSet, mapHas,
    mapDelete, mapClear, push, strSlice, strIndexOf, regExec, now, ErrorC, TypeErrorC, isArray,
    StringC, NumberC, floor, MapC, enc, later, cancelWaits, channelMemory, channelOf, enterSlot,
    receive, received, dropReceived, markIdleAfter,
    format, signWith, verifyWith, httpOptions, httpResponse,
    requestView, secretsApi, provide, moduleOf }) });
})();
//# sourceURL=webjobs:prelude
