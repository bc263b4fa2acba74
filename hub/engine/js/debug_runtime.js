// The step debugger's runtime, for debug runs only: the worker evaluates it after the
// sandbox and before the job, and the prelude defines `__dbg` from this factory when
// the run's spec says `debug`. Instrumented code (see
// debug_instrument.js) awaits `__dbg.pause(line, column, scope)` before each statement
// and `__dbg.breakpoint(...)` at `debugger;` / `breakpoint()`. A pause is one bridge
// call, `debug.pause`, that the host answers when the debugger says go on; while it
// waits, the host holds the run's runtime limit. The host may answer
// `{expand: handle}` to see one more level of a value, and the pause asks again.
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
    return { type: 'object', className: name, size: count, handle };
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

  G.__webjob_debug_runtime = (bridge) => {
    let handles = [];

    async function pause(kind, line, column, scope) {
      handles = [];
      let vars = {};
      try {
        const seen = scope ? scope() : {};
        for (const name of keys(seen)) vars[name] = describe(seen[name], handles);
      } catch (e) { vars = { '<scope>': { type: 'error', value: StringC(e) } }; }
      let payload = { kind, line, column, vars };
      for (;;) {
        const answer = await bridge('debug.pause', payload);
        if (answer && typeof answer.expand === 'number') {
          const value = handles[answer.expand - 1];
          payload = value === undefined
            ? { kind: 'expand', handle: answer.expand, error: 'That value is no longer available' }
            : { kind: 'expand', handle: answer.expand, ...children(value, handles) };
          continue;
        }
        if (answer && answer.stop) throw new ErrorC(StringC(answer.message || 'Stopped by the debugger'));
        return;
      }
    }

    return freeze({
      v(read) {
        try { return read(); } catch (e) { if (e instanceof RefErr) return TDZ; throw e; }
      },
      pause: (line, column, scope) => pause('step', line, column, scope),
      breakpoint: (line, column, scope) => pause('breakpoint', line, column, scope),
    });
  };
  Object.defineProperty(G, '__webjob_debug_runtime', { enumerable: false });
})();
