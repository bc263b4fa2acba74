/*
Name: Test page
Description: A page job: an inline script, a form that posts back, and a console link
Author: WebJobs
Version: 1.0.0
Access: public
Mode: page
*/
const esc = s => String(s ?? "").replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c])
const posted = request.method === "POST"
const name = String(params.name || "")
console.log(posted ? `form posted with name=${name}` : "landing page requested")

const greeting = posted
  ? `<p id="greeting">Hello, <strong>${esc(name || "stranger")}</strong>. The form came back to the same job.</p>`
  : `<p id="greeting">Type a name and send the form: it posts back to this job.</p>`

return response.html(`<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>WebJobs test page</title>
  <style>
    body { font: 16px/1.5 system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem; color: #1d2430; }
    form { display: flex; gap: .5rem; margin: 1.5rem 0; }
    input { flex: 1; padding: .5rem; border: 1px solid #b8c0cc; border-radius: 6px; }
    button { padding: .5rem 1rem; border: 0; border-radius: 6px; background: #2459d6; color: #fff; }
    small { color: #5b6473; }
  </style>
</head>
<body>
  <h1>WebJobs test page</h1>
  ${greeting}
  <form method="post">
    <input name="name" placeholder="Your name" value="${esc(name)}" autocomplete="off">
    <button type="submit">Send</button>
  </form>
  <p><small>Method seen by the job: <code>${esc(request.method)}</code>.
  <span id="script-status">The inline script has not run.</span></small></p>
  <p><small><a href="?_console=1">Open with the console drawer</a> (owners only).</small></p>
  <script>
    document.getElementById("script-status").textContent = "The inline script ran."
  </script>
</body>
</html>`)
