// Event, EventTarget, AbortSignal and AbortController (a target's own listeners only:
// no propagation path). Evaluated after web/base.js, whose helpers it takes (see there
// for why every intrinsic is captured), and the last of the web files: it deletes
// __webjob_web.
//
// What a run's own host provides is read at call time, never kept: reportError and
// console (a listener that throws), setTimeout (AbortSignal.timeout). With a warm
// isolate the host defines these on the global as trampolines to the current run.
(() => {
  'use strict';
  const { G, def, defineProperty, apply, uncurry, TypeErr, aIdx, toStr, domErr } = globalThis.__webjob_web;
  const { trunc } = Math, now = Date.now, MAX_SAFE = Number.MAX_SAFE_INTEGER, Map_ = Map;
  const mapGet = uncurry(Map.prototype.get), mapSet = uncurry(Map.prototype.set);
  const aslice = uncurry(Array.prototype.slice), splice = uncurry(Array.prototype.splice);
  // Event.timeStamp counts from here: in a warm isolate, from the isolate's start, not the run's.
  const T0 = now();
  let evState, isEvent, addL, fire, sigAlgo, isSignal, sigAborted, sigAbort;
  const report = (err) => {
    const r = G.reportError, c = G.console;
    try { if (typeof r === 'function') r(err); else if (c && typeof c.error === 'function') c.error(err); } catch { return; } // nowhere left to report it
  };
  class Event {
    #s;
    constructor(type, init = undefined) {
      if (!arguments.length) throw new TypeErr('Failed to construct \'Event\': 1 argument required, but only 0 present.');
      const i = init ?? {};
      this.#s = { type: toStr(type), bubbles: !!i.bubbles, cancelable: !!i.cancelable, composed: !!i.composed,
        dp: false, stop: 0, target: null, cur: null, phase: 0, trusted: false, passive: false, busy: false, ts: now() - T0 };
    }
    get type() { return this.#s.type; }
    get target() { return this.#s.target; }
    get srcElement() { return this.#s.target; }
    get currentTarget() { return this.#s.cur; }
    get eventPhase() { return this.#s.phase; }
    get bubbles() { return this.#s.bubbles; }
    get cancelable() { return this.#s.cancelable; }
    get composed() { return this.#s.composed; }
    get defaultPrevented() { return this.#s.dp; }
    get returnValue() { return !this.#s.dp; }
    get isTrusted() { return this.#s.trusted; }
    get timeStamp() { return this.#s.ts; }
    get cancelBubble() { return !!this.#s.stop; }
    set cancelBubble(v) { if (v) this.#s.stop |= 1; }
    composedPath() { return this.#s.cur ? [this.#s.cur] : []; }
    preventDefault() { const s = this.#s; if (s.cancelable && !s.passive) s.dp = true; }
    stopPropagation() { this.#s.stop |= 1; }
    stopImmediatePropagation() { this.#s.stop = 3; }
    static { evState = (e) => e.#s; isEvent = (e) => typeof e === 'object' && e !== null && #s in e; }
  }
  class EventTarget {
    #l = null;
    addEventListener(type, cb, options = undefined) { addL(this, toStr(type), cb, options); }
    removeEventListener(type, cb, options = undefined) {
      const cap = typeof options === 'boolean' ? options : !!(options && options.capture);
      const a = this.#l && mapGet(this.#l, toStr(type));
      if (!a) return;
      for (let i = 0; i < a.length; i++) if (a[i].cb === cb && a[i].cap === cap) { a[i].gone = true; splice(a, i, 1); return; }
    }
    dispatchEvent(e) {
      if (!isEvent(e)) throw new TypeErr('Failed to execute \'dispatchEvent\' on \'EventTarget\': parameter 1 is not of type \'Event\'.');
      if (evState(e).busy) throw domErr('The event is already being dispatched.', 'InvalidStateError');
      evState(e).trusted = false;
      return fire(this, e);
    }
    static {
      addL = (t, type, cb, o) => {
        if (cb === null || cb === undefined) return;
        if (typeof cb !== 'function' && typeof cb !== 'object') throw new TypeErr('The "listener" argument must be an object');
        let cap = false, once = false, passive = false, sig = null;
        if (typeof o === 'boolean') cap = o;
        else if (o !== null && o !== undefined) {
          cap = !!o.capture; once = !!o.once; passive = !!o.passive; sig = o.signal ?? null;
          if (sig !== null && !isSignal(sig)) throw new TypeErr('The "signal" option must be an AbortSignal');
        }
        if (sig && sigAborted(sig)) return;
        const m = t.#l ??= new Map_();
        let a = mapGet(m, type);
        if (!a) mapSet(m, type, a = []);
        for (let i = 0; i < a.length; i++) if (a[i].cb === cb && a[i].cap === cap) return;
        const l = { cb, cap, once, passive, gone: false };
        a[a.length] = l;
        if (sig) sigAlgo(sig, () => { l.gone = true; const i = aIdx(a, l); if (i >= 0) splice(a, i, 1); });
      };
      fire = (t, e) => {
        const s = evState(e), a = t.#l && mapGet(t.#l, s.type);
        s.busy = true; s.target = s.cur = t; s.phase = 2;
        const list = a ? aslice(a) : [];
        for (let i = 0; i < list.length && !(s.stop & 2); i++) {
          const l = list[i];
          if (l.gone) continue;
          if (l.once) { l.gone = true; splice(a, aIdx(a, l), 1); }
          s.passive = l.passive;
          try {
            if (typeof l.cb === 'function') apply(l.cb, t, [e]);
            else {
              const h = l.cb.handleEvent;
              if (typeof h !== 'function') throw new TypeErr('handleEvent is not a function');
              apply(h, l.cb, [e]);
            }
          } catch (err) { report(err); }
          s.passive = false;
        }
        s.busy = false; s.cur = null; s.phase = 0; s.stop = 0;
        return !s.dp;
      };
    }
  }

  const KEY = {};
  const abortReason = () => domErr('This operation was aborted', 'AbortError');
  class AbortSignal extends EventTarget {
    #aborted = false; #reason = undefined; #h = null; #hl = false; #algos = []; #deps = [];
    constructor(key = undefined) {
      if (key !== KEY) throw new TypeErr('Illegal constructor');
      super();
    }
    get aborted() { return this.#aborted; }
    get reason() { return this.#reason; }
    throwIfAborted() { if (this.#aborted) throw this.#reason; }
    get onabort() { return this.#h; }
    set onabort(f) {
      this.#h = typeof f === 'function' ? f : null;
      if (this.#h && !this.#hl) {
        this.#hl = true;
        addL(this, 'abort', (e) => { const h = this.#h; if (h) apply(h, this, [e]); });
      }
    }
    static abort(reason = undefined) {
      const s = new AbortSignal(KEY);
      s.#aborted = true; s.#reason = reason === undefined ? abortReason() : reason;
      return s;
    }
    static timeout(ms) {
      ms = +ms;
      if (!(ms >= 0 && ms <= MAX_SAFE)) throw new TypeErr('The "ms" argument must be a non-negative integer');
      const s = new AbortSignal(KEY), st = G.setTimeout;
      if (typeof st === 'function') st(() => sigAbort(s, domErr('The operation was aborted due to timeout', 'TimeoutError')), trunc(ms));
      return s;
    }
    static any(signals) {
      const s = new AbortSignal(KEY), list = [];
      for (const x of signals) {
        if (!isSignal(x)) throw new TypeErr('Each item must be an AbortSignal');
        list[list.length] = x;
      }
      for (let i = 0; i < list.length; i++) if (list[i].#aborted) { s.#aborted = true; s.#reason = list[i].#reason; return s; }
      for (let i = 0; i < list.length; i++) { const d = list[i].#deps; d[d.length] = s; }
      return s;
    }
    static {
      const run = (s) => {
        const a = s.#algos;
        s.#algos = [];
        for (let i = 0; i < a.length; i++) a[i]();
        const e = new Event('abort');
        evState(e).trusted = true;
        fire(s, e);
      };
      sigAbort = (s, reason) => {
        if (s.#aborted) return;
        s.#aborted = true; s.#reason = reason === undefined ? abortReason() : reason;
        const deps = [], all = s.#deps;
        s.#deps = [];
        for (let i = 0; i < all.length; i++) {
          const d = all[i];
          if (!d.#aborted) { d.#aborted = true; d.#reason = s.#reason; deps[deps.length] = d; }
        }
        run(s);
        for (let i = 0; i < deps.length; i++) run(deps[i]);
      };
      sigAlgo = (s, f) => { if (!s.#aborted) { const a = s.#algos; a[a.length] = f; } };
      isSignal = (x) => typeof x === 'object' && x !== null && #aborted in x;
      sigAborted = (s) => s.#aborted;
    }
  }
  class AbortController {
    #signal = new AbortSignal(KEY);
    get signal() { return this.#signal; }
    abort(reason = undefined) { sigAbort(this.#signal, reason); }
  }

  for (const C of [Event, EventTarget, AbortSignal, AbortController]) {
    defineProperty(C.prototype, Symbol.toStringTag, { value: C.name, configurable: true });
  }
  const PHASES = ['NONE', 'CAPTURING_PHASE', 'AT_TARGET', 'BUBBLING_PHASE'];
  for (let i = 0; i < PHASES.length; i++) {
    defineProperty(Event, PHASES[i], { value: i, enumerable: true });
    defineProperty(Event.prototype, PHASES[i], { value: i, enumerable: true });
  }
  def(G, 'Event', Event);
  def(G, 'EventTarget', EventTarget);
  def(G, 'AbortSignal', AbortSignal);
  def(G, 'AbortController', AbortController);
  delete G.__webjob_web;  // the web files are all in: nothing else may reach their helpers
})();
//# sourceURL=webjobs:web/events
