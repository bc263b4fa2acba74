// One run's state and globals, made by newRun() for every run (evaluated once per
// context, after prelude.js, whose __webjob_kit it takes). A run owns its console,
// timers, bridge calls, outcome, limits, secrets and its slot of the channel memory;
// when it settles (or the worker ends it), its timers and waits are cancelled and
// everything it still does is ignored, so nothing of one run reaches another in a
// warm isolate, where runs that wait share it with others, interleaved at their awaits.
// Every entry into the isolate on a run's behalf that the host does not make itself (a
// timer firing) calls the run's enter() first: the host then knows whose code runs. The host script (fresh_host.js or
// warm_host.js) takes __webjob_sandbox: `newRun`, `provide`, the channel memory and its
// reset, and the objects every run shares (`shared`, which the warm host hardens).
(() => {
  'use strict';
  const G = globalThis;
  const kit = G.__webjob_kit;
  delete G.__webjob_kit;
  const { note, wake, done, responses, cryptoHost, debugRuntime, apply, stringify, parse, freeze,
    NativePromise, thenOf, mapGet, mapSet, mapHas, mapDelete, mapClear, push, strSlice, strIndexOf,
    regExec, now, ErrorC, TypeErrorC, isArray, StringC, NumberC, floor, MapC, enc, later, cancelWaits,
    channelOf, enterSlot, format, signWith, verifyWith, httpOptions, httpResponse, requestView,
    secretsApi, moduleOf } = kit;
  const MB = 1024 * 1024;
  const CONSOLE_CAP = 8 * 1024 * 1024;  // characters, plus 32 a line: the rest is dropped
  const CAP_TEXT = { result: ["The job's result", 'WEBJOB_MAX_RESULT_MB'],
    payload: ['A bridge payload (a db.exec or http() call or its answer)', 'WEBJOB_MAX_PAYLOAD_MB'],
    console: ["The job's console output", 'WEBJOB_MAX_CONSOLE_MB'] };
  const LINE_CAP = 16 * 1024;
  const BROKEN = '{"ok":false,"code":"JOB-001","message":"The job broke the sandbox\'s own machinery"}';
  const JOB_LINE = /job\.js:(\d+):(\d+)/;
  const JSON_TYPE = 'application/json';
  const response = responses.response;

  function jobLine(err) {
    try {
      const m = regExec(JOB_LINE, StringC(err && err.stack));
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
  function serialise(value, pretty) {
    let text;
    try {
      text = pretty ? stringify(value, null, 2) : stringify(value);
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
  }
  // The run's hard caps (spec.caps, from the hub's settings): going over ends the
  // run with JOB-003, checked here so the worker never even sends the bytes.
  function capsOf(given) {
    const caps = { result: 50 * MB, payload: 64 * MB, console: 10 * MB };
    if (given && typeof given === 'object') {
      const names = ['result', 'payload', 'console'];
      for (let i = 0; i < names.length; i++) if (NumberC(given[names[i]]) > 0) caps[names[i]] = NumberC(given[names[i]]);
    }
    return caps;
  }
  // The console is timed from when the hub took the run (spec.clockOrigin, epoch ms),
  // the clock the hub's own lines (an http() call, a replayed answer) are timed on;
  // a worker's clock that disagrees by seconds keeps its own start instead.
  function startOf(origin) {
    const started = now();
    return typeof origin === 'number' && origin <= started && started - origin < 5000 ? origin : started;
  }

  // slot: the run's part of the channel memory (and its tag on every note); onEnter: the
  // host's hook for an entry of this run (the warm host's `current`), or undefined.
  // onSettled(inMemory): the run has its outcome, and whether it lies in the channel
  // memory (the worker then never asks the run for it).
  function newRun(slot, onEnter, onSettled) {
    const channel = channelOf(slot);
    if (channel === undefined) throw new ErrorC('No such channel slot');
    channel.reset();
    const tag = StringC(slot) + ':';
    const enter = () => { enterSlot(slot); if (onEnter !== undefined) onEnter(); };
    let spec = null;
    let outcome = null;        // "meta\nbody" once the run settled
    let asyncMode = false;     // the host waits for a notification
    let ended = false;
    let live = false;          // someone watches the console as it happens
    let channelOpen = true;
    let logBuffer = [];        // lines not sent yet: they leave with the outcome
    let runStart = now();
    let lastFlush = runStart;
    let flushQueued = false;
    let consoleBytes = 0;
    let caps = capsOf(null);
    let signKey = null;
    let microtasks = 0;        // queued by the job with queueMicrotask
    const waits = new MapC();  // this run's pending Atomics waits, woken when it settles
    const elapsed = () => now() - runStart;

    // ---- timers ----------------------------------------------------------------
    let nextTimer = 1;
    const timers = new MapC();
    function schedule(fn, ms, args, repeat) {
      if (typeof fn !== 'function') throw new TypeErrorC('The callback must be a function');
      const id = nextTimer++;
      const delay = NumberC(ms) > 0 ? NumberC(ms) : 0;
      const fire = () => {
        if (ended || !mapHas(timers, id)) return;
        enter();
        if (!repeat) mapDelete(timers, id);
        try { apply(fn, undefined, args); } catch (err) { fail(err, 'timer'); return; }
        if (repeat && mapHas(timers, id)) later(delay, fire, waits);
      };
      mapSet(timers, id, true);
      later(delay, fire, waits);
      return id;
    }
    const clear = (id) => { mapDelete(timers, id); };

    // ---- console -----------------------------------------------------------------
    const takeBuffer = () => { const lines = logBuffer; logBuffer = []; return lines; };
    function flush() {
      if (ended) return;
      enter();
      flushQueued = false;
      lastFlush = now();
      if (logBuffer.length && outcome === null) note('L' + tag + enc(takeBuffer()));
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
      if (live && channelOpen) {
        if (channel.toChannel('["' + level + '",' + stringify(message) + ',' + line[2] + ']')) { wake(); return; }
        channelOpen = false;
      }
      push(logBuffer, line);
      if (!live) return;
      if (now() - lastFlush >= 25) flush();
      else if (!flushQueued) { flushQueued = true; later(1, flush, waits); }
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
    function settle(meta, body) {
      if (outcome !== null) return;
      if (meta.ok && bodyOverCap(meta, body)) { overCap('result'); return; }
      ended = true;
      let head;
      try { head = enc({ ...meta, logs: takeBuffer() }); } catch (e) { head = BROKEN; }
      outcome = head + '\n' + (typeof body === 'string' ? body : '');
      const inMemory = channel.outcomeToMemory(outcome);
      try { mapClear(timers); mapClear(calls); cancelWaits(waits); } catch (e) { /* the run is over anyway */ }
      if (onSettled !== undefined) onSettled(inMemory);
      if (asyncMode) done();
    }
    function overCap(limit) {
      const text = CAP_TEXT[limit];  // indexed, not destructured: a job may replace iterators
      settle({ ok: false, code: 'JOB-003', limit,
        message: `${text[0]} is over the limit of ${caps[limit] / MB} MB (${text[1]})` });
    }
    // A body's size in bytes is at least its length in code units (UTF-8), or about
    // three quarters of it (base64): over the cap by that measure, it is over for sure.
    function bodyOverCap(meta, body) {
      if (typeof body !== 'string') return false;
      const units = meta.encoding === 'utf8' ? body.length : floor(body.length * 3 / 4) - 2;
      return units > caps.result;
    }
    function fail(err, where) {
      let code = 'JOB-001';
      try { if (err && typeof err === 'object' && err.code === 'JOB-002') code = 'JOB-002'; } catch (e) { /* */ }
      const pos = jobLine(err);
      settle({ ok: false, code, message: errorText(err), line: pos ? pos.line : undefined,
        column: pos ? pos.column : undefined, where });
    }
    function succeed(value) {
      if (value === undefined) {
        settle({ ok: false, code: 'JOB-004', message: 'The job finished without returning a result' });
        return;
      }
      try {
        if (value !== null && typeof value === 'object' && responses.isResponse(value)) {
          const r = value;
          settle({ ok: true, type: r.type, format: r.format, status: r.status, headers: r.headers,
            filename: r.filename, encoding: r.encoding }, r.type === 'json' ? serialise(r.value, spec.pretty) : r.body);
          return;
        }
        if (value !== null && typeof value === 'object' && !isArray(value) && value.success === false) {
          const why = value.error ?? value.message ?? 'The job returned success: false';
          settle({ ok: false, code: 'JOB-001', message: typeof why === 'string' ? why : serialise(why),
            reported: true });
          return;
        }
        settle({ ok: true, type: 'json', format: JSON_TYPE, status: 200, headers: {}, encoding: 'utf8' },
          serialise(value, spec.pretty));
      } catch (err) {
        fail(err);
      }
    }

    // ---- unhandled rejections of promises the job makes with Promise ----------
    const HANDLED = Symbol('handled');
    class JobPromise extends NativePromise {
      constructor(executor) {
        let self = null;
        super((resolve, reject) => executor(resolve, (reason) => {
          reject(reason);
          later(1, () => {
            if (ended || !self || self[HANDLED]) return;
            enter();
            fail(reason, 'unhandled rejection');
          }, waits);
        }));
        self = this;
      }
      then(onOk, onErr) { this[HANDLED] = true; return super.then(onOk, onErr); }
      static get [Symbol.species]() { return JobPromise; }
      static [Symbol.hasInstance](v) { return v instanceof NativePromise; }
    }
    const rejected = (err) => new JobPromise((_, reject) => reject(err));

    // ---- require: approved modules the worker loaded for this job -------------
    function jobRequire(name) {
      const key = StringC(name);
      // Only modules this job names as text: one loaded for an earlier job on this
      // worker stays invisible, so a job behaves the same on every worker.
      const named = isArray(spec.named) && spec.named.indexOf(key) >= 0;
      const found = named ? moduleOf(key) : undefined;
      if (found !== undefined) return found;
      const approved = isArray(spec.approved) && spec.approved.indexOf(key) >= 0;
      const err = new ErrorC(approved
        ? `Module '${key}' is approved but not installed on this hub (or not named as text: require('${key}'))`
        : `Module '${key}' is not approved for jobs`);
      err.code = 'JOB-002';
      throw err;
    }

    // ---- bridge calls to the host (db.exec, http): policy is applied there ----
    let nextCall = 1;
    const calls = new MapC();
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
        note('C' + tag + '{"id":' + id + ',"op":' + stringify(StringC(op)) + ',"args":'
          + (typeof argsJson === 'string' ? argsJson : 'null') + '}');
      });
    }
    const db = freeze({
      exec(sql, params) {
        if (typeof sql !== 'string') return rejected(new TypeErrorC('db.exec(sql, params): sql must be text'));
        return bridge('db.exec', { sql, params: params === undefined ? [] : params });
      },
    });
    function http(url, options) {
      const call = bridge('http', { url: StringC(url), options: httpOptions(options) });
      call[HANDLED] = true;  // handled here: what the job gets is the promise below
      return new JobPromise((resolve, reject) => thenOf(call, (r) => resolve(httpResponse(r)), reject));
    }

    // ---- the run's globals, from its spec ---------------------------------------
    function globals(s) {
      spec = s;
      live = !!s.live;  // else lines leave with the outcome
      runStart = startOf(s.clockOrigin);
      lastFlush = now();
      const key = StringC(s.signKey || '');
      delete s.clockOrigin; delete s.signKey;
      const entropy = typeof s.entropy === 'string' ? kit.bytes.base64Decode(s.entropy) : null;
      if (entropy) cryptoHost.reseed(entropy);  // 32 host bytes, when the engine sends them
      delete s.entropy;
      const jobSecrets = secretsApi(s.secrets);
      delete s.secrets;
      caps = capsOf(s.caps);
      delete s.caps;
      const caller = s.request && s.request.caller;
      const sign = (payload, ttlSeconds) => signWith(signKeyBytes(key), payload, ttlSeconds);
      const verify = (token) => verifyWith(signKeyBytes(key), token);
      return {
        setTimeout: (fn, ms, ...args) => schedule(fn, ms, args, false),
        setInterval: (fn, ms, ...args) => schedule(fn, ms, args, true),
        clearTimeout: clear,
        clearInterval: clear,
        queueMicrotask: (fn) => {
          microtasks++;
          thenOf(new NativePromise((r) => r()), () => { try { fn(); } catch (err) { fail(err, 'microtask'); } });
        },
        Promise: JobPromise,
        params: s.params,
        request: freeze(requestView(s.request)),
        userID: caller && caller.id !== undefined ? caller.id : null,
        isAuthenticated: !!(caller && caller.kind !== 'anonymous'),
        limits: freeze(s.limits),
        console: jobConsole,
        response,
        sign,
        verify,
        breakpoint: () => undefined,
        __dbg: s.debug ? debugMaker()(bridge) : undefined,
        require: jobRequire,
        db,
        http,
        crypto: cryptoHost.crypto,
        secrets: jobSecrets,
        // what shared code reports to the run it serves (an EventTarget listener that throws)
        reportError: (err) => emit('error', [err]),
      };
    }
    function signKeyBytes(key) { return signKey || (signKey = kit.bytes.base64Decode(key)); }

    function start(job) {
      let p;
      try { p = job(); } catch (err) { fail(err); return; }
      let thenable;
      try {
        thenable = p !== null && (typeof p === 'object' || typeof p === 'function') && typeof p.then === 'function';
      } catch (err) { fail(err); return; }
      if (thenable) thenOf(NativePromise.resolve(p), succeed, (err) => fail(err));
      // A microtask the job queued runs before its result is taken, as it does after an
      // async function's return (a throw there fails the run).
      else if (microtasks > 0) thenOf(NativePromise.resolve(), () => succeed(p));
      else succeed(p);
      // Not settled within the eval: the worker waits for the note, and never asks with
      // another eval (which would wait behind whatever the job left in the microtask queue).
      if (outcome === null) asyncMode = true;
    }
    return freeze({
      globals,
      start,
      fail,
      poll: () => (outcome === null ? '' : outcome),
      ended: () => ended,
      enter,
      // The worker ends a run that has not settled (its runtime is up, its caller has
      // gone): no outcome; its timers, waits and calls go, and what it still does is ignored.
      cancel() {
        if (ended) return;
        ended = true;
        outcome = '';
        try { mapClear(timers); mapClear(calls); cancelWaits(waits); } catch (e) { /* over anyway */ }
      },
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
    });
  }
  function debugMaker() {
    if (typeof debugRuntime !== 'function') throw new ErrorC('The debugger runtime is missing');
    return debugRuntime;
  }

  Object.defineProperty(G, '__webjob_sandbox', { configurable: true,
    value: freeze({ newRun, provide: kit.provide, channelMemory: kit.channelMemory, enterSlot: kit.enterSlot,
      receive: kit.receive, received: kit.received, dropReceived: kit.dropReceived,
      markIdleAfter: kit.markIdleAfter,
      shared: freeze([response, cryptoHost.crypto]) }) });
})();
//# sourceURL=webjobs:run
