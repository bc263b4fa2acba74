/*
Name: Test: sandbox
Description: Probes what must not be reachable from a job; every probe should read undefined or refused
Author: WebJobs
Version: 1.0.0
Access: owner
*/
const probes = {
  "typeof process": () => typeof process,
  "typeof require('fs')": () => typeof require("fs"),
  "typeof fetch": () => typeof fetch,
  "typeof XMLHttpRequest": () => typeof XMLHttpRequest,
  "typeof WebAssembly": () => typeof WebAssembly,
  "typeof SharedArrayBuffer": () => typeof SharedArrayBuffer,
  "typeof Atomics": () => typeof Atomics,
  "typeof global": () => typeof global,
  "typeof module": () => typeof module,
  "typeof __dirname": () => typeof __dirname,
  "typeof Deno": () => typeof Deno,
  "typeof __webjob_note": () => typeof __webjob_note,
  "constructor.constructor('return process')()": () => typeof this.constructor.constructor("return process")(),
  "Function('return this')().process": () => typeof Function("return this")().process,
  "eval('process')": () => typeof eval("process"),
  "import('fs')": async () => typeof (await import("fs")),
  "host bridge op 'fs.read'": async () => typeof (await __webjob_host.bridge("fs.read", ["/etc/passwd"])),
}

const results = {}
for (const [name, probe] of Object.entries(probes)) {
  try {
    const value = await probe()
    results[name] = value === "undefined" ? "undefined" : `REACHABLE (${value})`
  } catch (err) {
    results[name] = `refused: ${String(err && err.message || err).split("\n")[0]}`
  }
}
const reachable = Object.entries(results).filter(([, v]) => v.startsWith("REACHABLE")).map(([k]) => k)
return { allBlocked: reachable.length === 0, reachable, probes: results }
