/*
Name: Test: failures
Description: How runs fail and how they don't: ?mode=throw (default) | async | timer | false | 404 | ok
Author: WebJobs
Version: 1.0.0
Runtime: 5000
Access: owner
*/
const mode = String(params.mode || "throw")
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

switch (mode) {
  case "throw":
    throw new Error("thrown on purpose")
  case "async":
    // A rejected promise nobody awaits: the run fails at once, not after the sleep.
    new Promise((_, reject) => setTimeout(() => reject(new Error("rejected on purpose")), 10))
    await sleep(4000)
    return { unreachable: true }
  case "timer":
    // A throw inside a timer callback: also fails the run at once.
    setTimeout(() => { throw new Error("thrown in a timer on purpose") }, 10)
    await sleep(4000)
    return { unreachable: true }
  case "false":
    return { success: false, error: "reported as a failure on purpose" }
  case "404":
    return response.json({ status: "not_found", note: "a 404 answer is not a failed run" }, 404)
  case "ok":
    return { success: true, caller: request.caller, method: request.method, params }
  default:
    return response.json({ error: `unknown mode ${mode}` }, 400)
}
