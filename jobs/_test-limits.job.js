/*
Name: Test: limits
Description: Returns the resolved limits; ?what=runtime|cpu|memory ends the run on that limit (JOB-003)
Author: WebJobs
Version: 1.0.0
Runtime: 3000
Memory: 64
CPU: 1000
Access: owner
*/
const what = String(params.what || "")

if (what === "runtime") {
  console.log("sleeping past the runtime limit of", limits.runtimeMs, "ms")
  await new Promise(resolve => setTimeout(resolve, limits.runtimeMs * 10))
}
if (what === "cpu") {
  console.log("spinning past the CPU limit of", limits.cpuMs, "ms")
  for (;;) { /* a synchronous busy loop: only the CPU limit can end it */ }
}
if (what === "memory") {
  console.log("allocating past the memory limit of", limits.memoryMb, "MB")
  const hoard = []
  for (;;) hoard.push(new Array(1 << 16).fill(hoard.length))
}
if (what) return response.json({ error: `unknown what=${what}; use runtime, cpu or memory` }, 400)

return { limits }
