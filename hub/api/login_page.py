"""The hub's sign-in page: small, self-contained, no scripts."""

from __future__ import annotations

import html

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · WebJobs</title>
<style>
  :root { color-scheme: light dark; }
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; min-height: 100vh; display: grid;
         place-items: center; background: Canvas; color: CanvasText; }
  main { width: min(22rem, 90vw); padding: 2rem; border: 1px solid color-mix(in srgb,
         CanvasText 15%, transparent); border-radius: 12px; }
  h1 { font-size: 1.25rem; margin: 0 0 1.25rem; }
  label { display: block; font-size: .875rem; margin: .75rem 0 .25rem; }
  input { width: 100%; box-sizing: border-box; padding: .55rem .6rem; font: inherit;
          border: 1px solid color-mix(in srgb, CanvasText 30%, transparent); border-radius: 6px; }
  button { margin-top: 1.25rem; width: 100%; padding: .6rem; font: inherit; border: 0;
           border-radius: 6px; background: #2459d6; color: #fff; cursor: pointer; }
  .note { font-size: .875rem; margin: 0 0 .5rem; padding: .5rem .6rem; border-radius: 6px; }
  .error { background: color-mix(in srgb, #d62424 15%, transparent); }
  .ok { background: color-mix(in srgb, #24a148 15%, transparent); }
</style>
</head>
<body>
<main>
  <h1>Sign in to WebJobs</h1>
  {note}
  <form method="post" action="/api/auth/login">
    <input type="hidden" name="next" value="{next}">
    <label for="name">Name</label>
    <input id="name" name="name" autocomplete="username" required autofocus>
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required>
    <button type="submit">Sign in</button>
  </form>
</main>
</body>
</html>
"""

_NOTES = {
    "failed": '<p class="note error" id="note">Wrong name or password.</p>',
    "locked": '<p class="note error" id="note">Too many failed sign-ins: try again later.</p>',
    "out": '<p class="note ok" id="note">You are signed out.</p>',
}


def safe_next(target: str | None) -> str:
    """Only a path on this hub: never another site (no open redirect)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\\\" in target:
        return "/api/auth/me"
    return target


def render(note: str = "", next_path: str | None = None, signed_in_as: str | None = None) -> str:
    text = _NOTES.get(note, "")
    if signed_in_as and not text:
        text = (f'<p class="note ok" id="note">Signed in as {html.escape(signed_in_as)}.</p>'
                '<form method="post" action="/api/auth/logout">'
                '<button type="submit" id="signout">Sign out</button></form>')
    return _PAGE.replace("{note}", text).replace(
        "{next}", html.escape(safe_next(next_path), quote=True))
