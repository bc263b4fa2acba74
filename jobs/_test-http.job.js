/*
Name: Test: http policy
Description: Probes the outbound network policy: every private, loopback or tricky target must be refused
Author: WebJobs
Version: 1.0.0
Access: owner
*/
const targets = [
  "http://127.0.0.1/", "http://localhost/", "http://127.1/", "http://2130706433/",
  "http://0x7f.0.0.1/", "http://0177.0.0.1/", "http://0.0.0.0/", "http://[::1]/",
  "http://[::ffff:127.0.0.1]/", "http://10.0.0.1/", "http://172.16.0.1/", "http://192.168.1.1/",
  "http://169.254.169.254/latest/meta-data/", "http://100.64.0.1/", "http://[fd00::1]/",
  "http://[fe80::1]/", "file:///etc/passwd", "ftp://example.org/", "gopher://example.org/",
]
const outcomes = {}
for (const url of targets) {
  try {
    const res = await http(url, { timeoutMs: 2000 })
    outcomes[url] = `REACHED (${res.status})`
  } catch (err) {
    outcomes[url] = `refused: ${err.message}`
  }
}
const reached = Object.keys(outcomes).filter(url => outcomes[url].startsWith("REACHED"))
return { allRefused: reached.length === 0, reached, outcomes }
