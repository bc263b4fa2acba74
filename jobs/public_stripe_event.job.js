/*
Name: Stripe-style payment event
Description: Verifies Stripe-Signature (t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">, keyed with the stripe_signing secret), refusing timestamps more than 5 minutes old; 401 on a missing, bad or stale signature
Access: public
Secrets: stripe_signing
*/
// Set the secret once: echo -n "$SIGNING_SECRET" | webhub secret set stripe_signing
const TOLERANCE_S = 300
const header = String(request.headers['stripe-signature'] || '')
if (!header) return response.json({ error: 'Missing Stripe-Signature header' }, 401)

let timestamp = null
const signatures = []
for (const part of header.split(',')) {
  const at = part.indexOf('=')
  if (at < 1) continue
  const key = part.slice(0, at).trim(), value = part.slice(at + 1).trim()
  if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value)
  if (key === 'v1') signatures.push(value)
}
if (timestamp === null || signatures.length === 0) {
  return response.json({ error: 'Malformed Stripe-Signature: it needs t=<timestamp> and v1=<signature>' }, 401)
}
const age = Math.floor(Date.now() / 1000) - timestamp
if (age > TOLERANCE_S || age < -TOLERANCE_S) {
  const when = age > 0 ? `${age} s old` : `${-age} s in the future`
  return response.json({ error: `Stale Stripe-Signature: its timestamp is ${when}; at most ${TOLERANCE_S} s either way is accepted` }, 401)
}
// The signed payload is "<t>.<raw body>", byte for byte.
const payload = Buffer.concat([Buffer.from(`${timestamp}.`), request.rawBytes()])
const expected = crypto.hmac('sha256', secrets.get('stripe_signing'), payload)
if (!signatures.some((s) => crypto.timingSafeEqual(s, expected))) {
  console.warn('refused an event: the signature does not match')
  return response.json({ error: 'Invalid Stripe-Signature: no v1 signature matches the body' }, 401)
}
let event
try {
  event = JSON.parse(request.rawBody)
} catch (e) {
  return response.json({ error: 'The signed body is not JSON' }, 400)
}
// The event's id and type only: a payment event carries customer data that stays out of history.
const id = typeof event.id === 'string' ? event.id : null
const type = typeof event.type === 'string' ? event.type : null
console.log(`verified event ${id} (${type})`)
return { received: true, id, type }
