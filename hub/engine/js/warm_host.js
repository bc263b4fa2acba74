// The host of a warm isolate: evaluated once, after SES's lockdown() and the whole
// sandbox, it hardens everything runs share and then serves runs, each in a new SES
// Compartment with globals of its own (run.js's newRun()): one after another, and up
// to the worker's WEBJOB_RUNS_PER_WORKER at once, interleaved at their awaits. Each
// run has a slot (the worker's number for it); every entry into the isolate is made on
// behalf of one run (its start, a bridge reply, a timer: run.js's enter()), and the
// microtasks that follow are that run's until the queue drains, so `current` is the
// run whose code runs now.
//
// A run's job is compiled by the worker as a top-level script
//   __webjob_host.runWarm(spec, function (<NAMES>) { return function () { 'use strict'; <body> } })
// so every name on this (frozen) global is shadowed by a parameter holding the
// run's value: its own globals, the shared web APIs, this start compartment's
// Date, Math and Intl (SES's compartments make Date.now() and Math.random() throw),
// and the rest from the run's compartment (eval, Function and globalThis evaluate
// there). No scope proxy stands between the job and its names (SES's traps every
// global lookup, which CPU-bound code would pay for on every name it reads), and a
// name declared nowhere is a ReferenceError.
(() => {
  'use strict';
  const G = globalThis;
  const sandbox = G.__webjob_sandbox;
  delete G.__webjob_sandbox;
  const { defineProperty, freeze, getOwnPropertyNames, hasOwn } = Object;
  const { parse, stringify } = JSON;
  const apply = Reflect.apply;
  const CompartmentC = G.Compartment, hardenF = G.harden;
  const regTest = Function.prototype.call.bind(RegExp.prototype.test);
  const push = Function.prototype.call.bind(Array.prototype.push);

  // What SES's compartments lack or tame, given from here (all frozen by lockdown or hardened below).
  const FROM_START = ['Date', 'Math', 'Intl', 'Float16Array', 'Float32Array', 'Float64Array',
    'DisposableStack', 'AsyncDisposableStack', 'SuppressedError', 'DOMException', 'TextEncoder',
    'TextDecoder', 'atob', 'btoa', 'Buffer', 'URL', 'URLSearchParams', 'structuredClone', 'Event',
    'EventTarget', 'AbortSignal', 'AbortController'];
  // What no run may reach: SES's own tools, and what compartments do not have.
  const REMOVE = ['Compartment', 'harden', 'lockdown', 'assert', 'getStackString', 'repairIntrinsics',
    'FinalizationRegistry', 'WeakRef'];
  // A run's own globals (run.js): always parameters, whether or not the global has them.
  const RUN_NAMES = ['setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'queueMicrotask',
    'Promise', 'params', 'request', 'userID', 'isAuthenticated', 'limits', 'console', 'response', 'sign',
    'verify', 'breakpoint', '__dbg', 'require', 'db', 'http', 'crypto', 'secrets', 'reportError'];
  const HIDDEN = ['Compartment', 'harden', 'lockdown'];
  const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
  const IMMUTABLE = ['undefined', 'NaN', 'Infinity'];

  const shared = { __proto__: null };  // filled by seal()

  // Module state that harden() cannot see is shared by every run of the isolate:
  // date-fns keeps its default options in a closure, so setDefaultOptions would
  // change them for every later run. Its copy for jobs refuses that.
  // pdf-lib interns PDFName and PDFRef objects in Maps and hands the same object to
  // every caller: each is frozen as `of` hands it out (pdf-lib's own calls go through
  // the same static), so no run can write on one another run will get.
  function guarded(name, value) {
    if (value === null || typeof value !== 'object') return value;
    if (name === 'date-fns') {
      return { ...value, setDefaultOptions() {
        throw new TypeError("date-fns' setDefaultOptions() would change the defaults of every later " +
          'run on this hub: pass the options to each call instead');
      } };
    }
    if (name === 'pdf-lib') {
      hardenPdfCaches(value);
      for (const interned of [value.PDFName, value.PDFRef]) {
        if (typeof interned !== 'function' || typeof interned.of !== 'function') continue;
        const of = interned.of;
        defineProperty(interned, 'of', { value: function (...args) { return freeze(apply(of, this, args)); },
          writable: false, configurable: false });
      }
    }
    return value;
  }

  // pdf-lib loads each standard font's metrics once and gives every later document the
  // same font and encoding objects; its random-number helper's class is reachable only
  // through a document's context. All are made here and hardened, before any job.
  function hardenPdfCaches(pdf) {
    const fonts = pdf.StandardFonts && typeof pdf.StandardFontEmbedder === 'function'
      ? Object.values(pdf.StandardFonts) : [];
    for (const font of fonts) {
      const embedder = pdf.StandardFontEmbedder.for(font);
      hardenF(embedder.font);
      hardenF(embedder.encoding);
    }
    if (pdf.PDFContext && typeof pdf.PDFContext.create === 'function') {
      hardenF(Object.getPrototypeOf(pdf.PDFContext.create().rng));
    }
  }

  // Prototypes that lockdown() does not find (reachable only through an instance).
  function hardenHidden() {
    const P = Object.getPrototypeOf;
    const segments = new G.Intl.Segmenter().segment('a');
    for (const proto of [P(segments), P(segments[Symbol.iterator]()), P([].values().map((x) => x)),
      P(Iterator.from({ next() { return { done: true }; } }))]) {
      hardenF(proto);
    }
  }

  // SES gives compartments a powerless Error (%SharedError%): its captureStackTrace
  // leaves '' in a non-writable `stack`, so `Error.captureStackTrace(this, MyError)`,
  // common in custom errors, broke them. Jobs get this Error instead: the same
  // prototype (instanceof and subclasses work as before) and V8's captureStackTrace
  // through the start compartment's Error, which writes only the object it is given.
  // Shared by every run, it holds no state and is hardened.
  function jobError(SharedError) {
    const InitialError = G.Error;
    const JobError = function Error(...args) {
      if (new.target === undefined) return apply(SharedError, undefined, args);
      return Reflect.construct(SharedError, args, new.target === JobError ? SharedError : new.target);
    };
    JobError.prototype = SharedError.prototype;
    const captureStackTrace = (target, fn) =>
      apply(InitialError.captureStackTrace, InitialError, [target, fn === undefined ? captureStackTrace : fn]);
    defineProperty(JobError, 'captureStackTrace', { value: captureStackTrace });
    // SES's lenient, do-nothing accessors, so that code that sets them still runs
    for (const name of ['stackTraceLimit', 'prepareStackTrace']) {
      const d = Object.getOwnPropertyDescriptor(SharedError, name);
      if (d) defineProperty(JobError, name, d);
    }
    return hardenF(JobError);
  }

  let current = null;  // the run whose code runs now (its last entry): { run, globals }
  const runs = new Map();  // slot -> { run, globals, seq }: the runs started, until they settle
  // Shared code (the web APIs) reads these from the global when it is called: they
  // reach the run it was called for.
  const forward = (name) => function (...args) {
    if (current === null) return undefined;
    return apply(current.globals[name], undefined, args);
  };
  let names = null;     // the parameters every job function takes, in order
  // What a compartment gives for each name that is neither a run's own nor shared: the
  // same for every compartment (the hardened intrinsics), by index into names; and the
  // names whose value is each compartment's own (eval, Function, globalThis). A job
  // whose text names none of the latter can reach no compartment of its own (strict
  // code has no other way to a global), so it gets none: a Compartment costs a run
  // ~0.1 ms. The worker decides from the job's text (warm.job_script), where a name
  // spelled with a \u escape counts as naming any of them.
  let alike = null;
  let ownPerCompartment = null;

  function seal() {
    for (let i = 0; i < FROM_START.length; i++) {
      if (hasOwn(G, FROM_START[i])) shared[FROM_START[i]] = hardenF(G[FROM_START[i]]);
    }
    for (const name of ['setTimeout', 'clearTimeout', 'reportError']) {
      defineProperty(G, name, { value: forward(name), writable: false, configurable: false });
    }
    const levels = { __proto__: null };
    for (const level of ['log', 'info', 'debug', 'warn', 'error', 'trace']) {
      levels[level] = (...args) => { if (current !== null) apply(current.globals.console[level], undefined, args); };
    }
    defineProperty(G, 'console', { value: freeze(levels), writable: false, configurable: false });
    for (let i = 0; i < sandbox.shared.length; i++) hardenF(sandbox.shared[i]);
    hardenHidden();
    shared.Error = jobError(new CompartmentC({ __options__: true }).globalThis.Error);
    const found = [];
    const own = getOwnPropertyNames(G);
    for (let i = 0; i < REMOVE.length; i++) delete G[REMOVE[i]];
    for (let i = 0; i < own.length; i++) {
      const n = own[i];
      if (regTest(IDENTIFIER, n) && IMMUTABLE.indexOf(n) < 0 && REMOVE.indexOf(n) < 0) push(found, n);
    }
    for (let i = 0; i < RUN_NAMES.length; i++) if (found.indexOf(RUN_NAMES[i]) < 0) push(found, RUN_NAMES[i]);
    if (found.indexOf('globalThis') < 0) push(found, 'globalThis');
    names = freeze(found);
    freeze(G);
    learnCompartments();
  }

  function learnCompartments() {
    const a = new CompartmentC({ __options__: true }).globalThis;
    const b = new CompartmentC({ __options__: true }).globalThis;
    const values = new Array(names.length);
    const own = [];
    for (let i = 0; i < names.length; i++) {
      const n = names[i];
      if (RUN_NAMES.indexOf(n) >= 0 || n in shared) continue;
      if (n === 'globalThis' || a[n] !== b[n]) push(own, n);
      else values[i] = a[n];
    }
    alike = freeze(values);
    ownPerCompartment = freeze(own);
  }

  // compartmentGlobal: null for a run without a compartment (see alike)
  function valuesFor(globals, compartmentGlobal) {
    const values = new Array(names.length);
    for (let i = 0; i < names.length; i++) {
      const n = names[i];
      if (hasOwn(globals, n)) values[i] = globals[n];
      else if (n in shared) values[i] = shared[n];
      else if (compartmentGlobal === null) values[i] = alike[i];
      else if (n === 'globalThis') values[i] = compartmentGlobal;
      else values[i] = compartmentGlobal[n];
    }
    return values;
  }

  // seq: the worker's number for this run of the isolate, so that an end meant for an
  // earlier run of the slot never reaches a later one.
  // specJson: null when the worker handed the spec in through the inbox (a large one).
  const endedEarly = new Map();  // slot -> the number of a run ended before it started
  // eval() and new Function() code in the job evaluates in the run's compartment, and
  // sees the run's globals there too.
  let compartmentsMade = 0;  // asked by the tests
  function compartmentFor(globals) {
    compartmentsMade++;
    const endowed = { ...shared };
    for (let i = 0; i < RUN_NAMES.length; i++) {
      if (globals[RUN_NAMES[i]] !== undefined) endowed[RUN_NAMES[i]] = globals[RUN_NAMES[i]];
    }
    const compartment = new CompartmentC({ __options__: true, globals: endowed });
    // SES's own tools stay out of reach, as their bare names are
    for (let i = 0; i < HIDDEN.length; i++) delete compartment.globalThis[HIDDEN[i]];
    return compartment.globalThis;
  }

  // plain: the job's text names nothing a compartment has of its own (see alike)
  function runWarm(specJson, slot, seq, outer, plain) {
    sandbox.enterSlot(slot);  // the spec's parse is this run's CPU
    const endedFirst = endedEarly.get(slot) === seq;
    endedEarly.delete(slot);
    if (endedFirst) {  // the worker ended it while its start was on the way: it never runs
      sandbox.dropReceived(slot);
      return;
    }
    const prior = runs.get(slot);
    if (prior !== undefined) prior.run.cancel();  // the worker has given the slot on
    const spec = specJson === null ? sandbox.received(slot) : specJson;
    if (specJson !== null) sandbox.dropReceived(slot);
    if (spec === null) throw new Error('The run\'s start did not arrive whole');
    let entry = null;
    // A settled run is forgotten at once (its compartment, its globals: garbage now, so
    // the worker's next heap reading is not swelled by them), unless the worker has yet
    // to ask it for an outcome too long for the channel memory (poll forgets it then).
    const forget = () => {
      if (runs.get(slot) === entry) runs.delete(slot);
      if (current === entry) current = null;
    };
    const run = sandbox.newRun(slot, () => { current = entry; },
      (inMemory) => {
        if (inMemory) forget(); else entry.polled = forget;
        sandbox.markIdleAfter(seq);
      });
    const globals = run.globals(parse(spec));
    entry = { run, globals, seq };
    runs.set(slot, entry);
    run.enter();
    let job;
    try {
      job = apply(outer, undefined, valuesFor(globals, plain === true ? null : compartmentFor(globals)));
    } catch (err) {
      run.fail(err);
      return;
    }
    run.start(job);
  }

  const entryOf = (slot) => {
    const entry = runs.get(slot);
    if (entry !== undefined) entry.run.enter();
    return entry;
  };
  const host = freeze({
    runWarm,
    poll: (slot) => {
      const e = runs.get(slot);
      if (e === undefined) return '';
      const outcome = e.run.poll();
      if (outcome !== '' && e.polled !== undefined) e.polled();
      return outcome;
    },
    // valueJson: null when the answer was handed in through the inbox (receive)
    reply: (slot, id, ok, valueJson) => {
      const e = entryOf(slot);
      const answer = valueJson === null ? sandbox.received(slot) : valueJson;
      if (e === undefined) return;
      if (answer === null) e.run.reply(id, false, '{"message":"The answer did not arrive whole"}');
      else e.run.reply(id, ok, answer);
    },
    receive: (slot, total, offset, size) => sandbox.receive(slot, total, offset, size),
    // The worker ends a run that has not settled: the run alone, the isolate goes on.
    end: (slot, seq) => {
      const e = runs.get(slot);
      if (e !== undefined && e.seq === seq) {
        e.run.cancel();
        runs.delete(slot);
        sandbox.dropReceived(slot);
      } else if (e === undefined || e.seq < seq) {
        endedEarly.set(slot, seq);  // its start has yet to come (its spec is crossing)
      }
    },
    provide(name, value) { sandbox.provide(name, hardenF(guarded(name, value))); },
    // The worker's question once a run has answered: this eval only gets a turn when
    // the isolate is idle, so no answer in time means something of the run still spins.
    // Asked only when the worker holds no run: what ended runs left goes with them.
    idle() {
      runs.forEach((e) => e.run.cancel());  // whatever is forgotten can do nothing more
      current = null;
      sandbox.dropReceived();
      runs.clear();
      sandbox.enterSlot(-1);
      return 'idle';
    },
    seal,
    names: () => stringify(names),
    ownPerCompartment: () => stringify(ownPerCompartment),
    compartmentsMade: () => compartmentsMade,
  });
  defineProperty(G, '__webjob_host', { value: host, writable: false, configurable: false, enumerable: false });
  G.__webjob_channel = sandbox.channelMemory;
})();
//# sourceURL=webjobs:warm-host
