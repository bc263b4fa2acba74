// The step debugger's runtime, for debug runs only: the worker evaluates it after the
// sandbox and before the job, and the prelude defines `__dbg` from this factory when
// the run's spec says `debug`. Instrumented code (see
// debug_instrument.js) awaits `__dbg.pause(line, column, scope)` before each statement
// and `__dbg.breakpoint(...)` at `debugger;` / `breakpoint()`. A pause is one bridge
// call, `debug.pause`, that the host answers when the debugger says go on; while it
// waits, the host holds the run's runtime limit. The host may answer
// `{expand: handle}` to see one more level of a value, and the pause asks again.
// Each async function keeps a frame (`enter`/`leave`): a pause sends the chain of
// frames that led to it (`stack`, innermost first, each at the line it is at) and
// its `depth`, which step over and step out go by. An exception leaving the job
// body pauses once more (`kind: 'exception'`) where it was thrown, if the host
// wants it; the exception itself is then the first variable, `<exception>`.
(() => {
  'use strict';
  const G = globalThis;
  const { keys, freeze, getPrototypeOf } = Object;
  const isArray = Array.isArray, StringC = String, ErrorC = Error;
  const RefErr = ReferenceError;
  const TDZ = freeze({ tdz: true });
  const MAX_STRING = 200, MAX_KEYS = 50;

  function describe(value, handles) {
    if (value === TDZ) return { type: 'tdz', value: '<tdz>' };
    if (value === null) return { type: 'null', value: null };
    const t = typeof value;
    if (t === 'string') {
      return value.length > MAX_STRING
        ? { type: 'string', value: value.slice(0, MAX_STRING), truncated: value.length }
        : { type: 'string', value };
    }
    if (t === 'number' || t === 'boolean') return { type: t, value: Number.isFinite(value) || t === 'boolean' ? value : StringC(value) };
    if (t === 'undefined') return { type: 'undefined' };
    if (t === 'bigint' || t === 'symbol') return { type: t, value: StringC(value) };
    if (t === 'function') return { type: 'function', value: `function ${value.name || ''}` };
    handles.push(value);
    const handle = handles.length;
    if (isArray(value)) return { type: 'array', length: value.length, handle };
    let name = 'Object';
    try { const proto = getPrototypeOf(value); name = (proto && proto.constructor && proto.constructor.name) || 'Object'; } catch (e) { /* a hostile proxy */ }
    let count = 0;
    try { count = keys(value).length; } catch (e) { /* a hostile proxy */ }
    const shown = { type: 'object', className: name, size: count, handle };
    // An error reads best as its message (the console shows `RangeError: too big`).
    try { if (value instanceof ErrorC) shown.value = StringC(value.message).slice(0, MAX_STRING); } catch (e) { /* a hostile getter */ }
    return shown;
  }

  function children(value, handles) {
    const out = {};
    let names;
    try { names = isArray(value) ? value.map((_, i) => StringC(i)) : keys(value); } catch (e) { return { error: StringC(e) }; }
    const shown = names.slice(0, MAX_KEYS);
    for (const name of shown) {
      let item;
      try { item = value[name]; } catch (e) { item = `<${e && e.name}>`; }
      out[name] = describe(item, handles);
    }
    return { entries: out, more: names.length - shown.length };
  }

  const GLOBALS = '<globals>';

  function scopeVars(scope, handles) {
    const vars = {};
    try {
      const seen = scope ? scope() : {};
      for (const name of keys(seen)) {
        if (name !== GLOBALS) vars[name] = describe(seen[name], handles);
      }
      const globals = seen[GLOBALS] || {};
      const entries = {};
      for (const name of keys(globals)) entries[name] = describe(globals[name], handles);
      if (keys(entries).length) vars[GLOBALS] = { type: 'group', entries };
      return vars;
    } catch (e) { return { '<scope>': { type: 'error', value: StringC(e) } }; }
  }

  function stackOf(frame) {
    const stack = [];
    for (let f = frame; f && stack.length < 100; f = f.parent) {
      stack.push({ name: f.name, line: f.line, column: f.column });
    }
    return stack;
  }

  G.__webjob_debug_runtime = (bridge) => {
    let handles = [];
    let current = null;       // the frame running now (or last)
    let stopped = false;      // the debugger ended the run: no exception pause for that
    // The exception last thrown and the frame it left first (the innermost catch
    // runs first; the outer ones see the same value go by).
    let lastThrown = null;

    function enter(name, line) {
      const frame = { name: StringC(name), line, column: 1, parent: current, scope: null };
      current = frame;
      return frame;
    }

    function caught(error, frame) {
      if (!lastThrown || lastThrown.error !== error) lastThrown = { error, frame };
    }

    async function pause(kind, line, column, scope, given, extra) {
      handles = [];
      const frame = given || { name: '(arrow)', line, column, parent: current, scope };
      frame.line = line; frame.column = column; frame.scope = scope;
      const vars = extra ? { ...extra(handles), ...scopeVars(scope, handles) }
        : scopeVars(scope, handles);
      const stack = stackOf(frame);
      const payload = { kind, line, column, vars, stack, depth: stack.length };
      // While parked, control is back with whoever called (or resumed) this frame.
      current = frame.parent;
      try {
        return await ask(payload);
      } finally {
        current = frame;
      }
    }

    async function ask(first) {
      let payload = first;
      for (;;) {
        const answer = await bridge('debug.pause', payload);
        if (answer && typeof answer.expand === 'number') {
          const value = handles[answer.expand - 1];
          payload = value === undefined
            ? { kind: 'expand', handle: answer.expand, error: 'That value is no longer available' }
            : { kind: 'expand', handle: answer.expand, ...children(value, handles) };
          continue;
        }
        if (answer && answer.stop) {
          stopped = true;
          throw new ErrorC(StringC(answer.message || 'Stopped by the debugger'));
        }
        return;
      }
    }

    // The exception is leaving the job: pause where it was thrown, with that
    // frame's names (its closures still hold them) and the exception first.
    async function uncaught(error, jobFrame) {
      if (stopped) return;
      caught(error, jobFrame);
      const at = lastThrown.frame;
      const show = (handles) => ({ '<exception>': describe(error, handles) });
      await pause('exception', at.line, at.column, at.scope, at, show);
    }

    return freeze({
      v(read) {
        try { return read(); } catch (e) { if (e instanceof RefErr) return TDZ; throw e; }
      },
      pause: (line, column, scope, frame) => pause('step', line, column, scope, frame),
      breakpoint: (line, column, scope, frame) => pause('breakpoint', line, column, scope, frame),
      enter,
      leave: (frame) => { current = frame.parent; },
      caught,
      uncaught,
    });
  };
  Object.defineProperty(G, '__webjob_debug_runtime', { enumerable: false });
})();
