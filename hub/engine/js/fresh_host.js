// The host of a fresh context (a job with `Isolation: fresh`): one run, whose
// globals are the context's own globals, in sloppy mode, as jobs ran before the
// warm engine. Evaluated after run.js; defines the hidden __webjob_host the worker
// drives (arm, run, poll, reply, provide) and leaves the channel memory in
// __webjob_channel, which the worker takes and deletes in the same eval.
//
// The job's code can reach __webjob_host here (its globals are the context's), so the
// worker's own entries take a key the worker arms before the job starts and the job
// never sees: without it, a job could settle its own db.exec or http() calls with
// answers of its choosing, and history would keep the real ones.
(() => {
  'use strict';
  const G = globalThis;
  const sandbox = G.__webjob_sandbox;
  delete G.__webjob_sandbox;
  const { defineProperty, getOwnPropertyDescriptor, freeze, keys } = Object;
  const { parse } = JSON;
  const run = sandbox.newRun(0, undefined);  // one run: the channel's only slot
  let started = false;
  let key = null;

  const define = (name, value) => {
    const d = getOwnPropertyDescriptor(G, name);
    if (d && !d.configurable) { G[name] = value; return; }
    defineProperty(G, name, { value, writable: true, configurable: true, enumerable: false });
  };
  const host = freeze({
    arm(workerKey) {
      if (key !== null) throw new Error('The host is armed already');
      key = workerKey;
    },
    run(specJson, job) {
      if (started) throw new Error('A run is already started');
      started = true;
      const globals = run.globals(parse(specJson));
      const names = keys(globals);
      for (let i = 0; i < names.length; i++) {
        if (globals[names[i]] !== undefined) define(names[i], globals[names[i]]);
      }
      run.start(job);
    },
    poll: (workerKey) => (key !== null && workerKey === key ? run.poll() : ''),
    reply(workerKey, id, ok, valueJson) {
      if (key !== null && workerKey === key) run.reply(id, ok, valueJson);
    },
    bridge: run.bridge,  // a fresh job may call the host directly (its calls are checked there all the same)
    provide(name, value) {
      if (started) throw new Error('Modules are provided before the job starts');
      sandbox.provide(name, value);
    },
  });
  defineProperty(G, '__webjob_host', { value: host, writable: false, configurable: false, enumerable: false });
  G.__webjob_channel = sandbox.channelMemory;
})();
//# sourceURL=webjobs:fresh-host
