/*
Name: GitHub-style push hook
Description: Verifies X-Hub-Signature-256 (sha256=<hex HMAC-SHA256 of the raw body>, keyed with the github_push secret) and acknowledges the push; 401 on a missing or bad signature
Access: public
Secrets: github_push
*/
// Set the secret once: echo -n "$SECRET" | webhub secret set github_push
// (the same text as the hook's "Secret" on the source-hosting side).
const given = String(request.headers['x-hub-signature-256'] || '')
if (!given) {
  return response.json({ error: 'Missing X-Hub-Signature-256 header: this endpoint only accepts signed deliveries' }, 401)
}
const expected = 'sha256=' + crypto.hmac('sha256', secrets.get('github_push'), request.rawBytes())
if (!crypto.timingSafeEqual(given, expected)) {
  console.warn('refused a delivery: the signature does not match')
  return response.json({ error: 'Invalid X-Hub-Signature-256: the signature does not match the body' }, 401)
}
let event
try {
  event = JSON.parse(request.rawBody)
} catch (e) {
  return response.json({ error: 'The signed body is not JSON' }, 400)
}
const kind = String(request.headers['x-github-event'] || 'push')
const commits = Array.isArray(event.commits) ? event.commits.length : 0
// Only what identifies the delivery is logged: never the body, the signature or the secret.
console.log(`verified ${kind} delivery ${String(request.headers['x-github-delivery'] || '-')}: ${commits} commits`)
return { ok: true, event: kind, ref: typeof event.ref === 'string' ? event.ref : null, commits }
