"""Browser sign-in: the login page, session cookies, and who am I."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import parse_qsl, quote

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from hub.api.deps import address_of, caller_of, hub_of, own_origin, public_scheme
from hub.api.inbound import media_type, read_body, read_json_object
from hub.api.login_page import render, safe_next
from hub.auth import SESSION_COOKIE
from hub.store.identity import User
from shared.errors import BadRequest, Forbidden, NotSignedIn, TooManyRequests

router = APIRouter()
CREDENTIALS_MAX_BYTES = 64 * 1024  # a sign-in or token request: a name, a password, a label


@router.get("/login")
async def login_page(request: Request, note: str = "", next: str = "") -> HTMLResponse:
    caller = hub_of(request).identity.resolve({}, request.cookies)
    name = caller.name if caller.kind == "user" else None
    return HTMLResponse(render(note, next or None, name),
                        headers={"Content-Security-Policy": "default-src 'none'; "
                                 "style-src 'unsafe-inline'; form-action 'self'; "
                                 "frame-ancestors 'none'", "Cache-Control": "no-store"})


async def _credentials(request: Request) -> tuple[dict[str, str], bool]:
    """(fields, came from an HTML form)."""
    ctype = media_type(request)
    if ctype == "application/json":
        data = await read_json_object(request, CREDENTIALS_MAX_BYTES)
        return {k: str(v) for k, v in data.items() if isinstance(v, str | int)}, False
    body = await read_body(request, CREDENTIALS_MAX_BYTES)
    return dict(parse_qsl(body.decode("utf-8", errors="replace"))), True


def _session_cookie(response: Response, request: Request, value: str, max_age: int) -> None:
    response.set_cookie(SESSION_COOKIE, value, max_age=max_age, path="/", httponly=True,
                        samesite="lax", secure=public_scheme(request) == "https")


def _refuse_cross_site(request: Request) -> None:
    """Sign-in from another site's page is refused (login CSRF: a hostile page would
    sign the visitor in as the attacker, and what they then do lands in the attacker's
    account). A browser says where a post comes from: ``Sec-Fetch-Site`` other than
    ``same-origin`` (or ``none``, typed by the user) or an ``Origin`` other than the
    hub's own is refused; ``same-site`` too, since a sibling host may be anyone's. A
    client that sends neither header is no browser, so no page can drive it."""
    fetch_site = request.headers.get("sec-fetch-site", "").strip().lower()
    origin = request.headers.get("origin", "").strip()
    if fetch_site and fetch_site not in ("same-origin", "none"):
        raise Forbidden("Cross-site sign-in refused: sign in from the hub's own page")
    if origin and origin.lower() != own_origin(request).lower():
        raise Forbidden("Sign-in from another origin refused: sign in from the hub's own page")


async def _verified_user(request: Request, name: str, password: str) -> User:
    """The user whose password this is, with every sign-in defence applied: the
    per-address rate, then the throttle (its lock, its delay), which counts the attempt
    as a failure BEFORE the password is checked, so parallel guesses cannot all slip
    past the lock while their hashes run. Every password check goes through here, so a
    console asking for a token is throttled exactly like the sign-in page. Raises
    ``TooManyRequests`` or ``NotSignedIn``."""
    hub, address = hub_of(request), address_of(request)
    await hub.sign_in_rate.admit(address)
    attempt = await hub.sign_in.begin(name, address)
    try:
        if attempt.delay:
            await asyncio.sleep(attempt.delay)  # deliberate: repeated failures slow down
        # Password hashing is slow on purpose: off the event loop, so other requests keep flowing.
        user = await asyncio.to_thread(hub.users.check_password, name, password)
    except Exception:
        await hub.sign_in.take_back(attempt)  # the password was never judged
        raise
    if user is None:
        raise NotSignedIn("Wrong name or password")
    await hub.sign_in.passed(attempt)
    return user


@router.post("/api/auth/login")
async def login(request: Request) -> Response:
    _refuse_cross_site(request)
    hub = hub_of(request)
    fields, from_form = await _credentials(request)
    next_path = safe_next(fields.get("next"))
    try:
        user = await _verified_user(request, fields.get("name", "").strip(),
                                    fields.get("password", ""))
    except (TooManyRequests, NotSignedIn) as refused:
        if not from_form:
            raise
        note = "locked" if isinstance(refused, TooManyRequests) else "failed"
        return RedirectResponse(f"/login?note={note}&next={quote(next_path)}", 303)
    secret = hub.users.open_session(user.id)
    response: Response = (RedirectResponse(next_path, 303) if from_form else JSONResponse(
        {"success": True, "user": {"name": user.name, "userClass": user.user_class}}))
    _session_cookie(response, request, secret, int(hub.settings.session_idle_hours * 3600))
    return response


@router.post("/api/auth/token")
async def token(request: Request) -> dict[str, Any]:
    """An API token for a desktop client that signs in with a name and password
    (the Owner console keeps it, so the password is asked for once). JSON only, so a
    plain HTML form elsewhere cannot post here; a browser that says the post is
    cross-site is refused as on the sign-in page."""
    _refuse_cross_site(request)
    ctype = media_type(request)
    if ctype != "application/json":
        raise BadRequest("Send {name, password, label} as application/json")
    data = await read_json_object(request, CREDENTIALS_MAX_BYTES)
    name, password, label = (data.get(key, "") for key in ("name", "password", "label"))
    if not all(isinstance(v, str) for v in (name, password, label)):
        raise BadRequest("'name', 'password' and 'label' must be strings")
    user = await _verified_user(request, name.strip(), password)
    info, secret = await asyncio.to_thread(hub_of(request).users.issue_token, user.name,
                                           label or "console")
    return {"token": secret, "id": info.id}


@router.delete("/api/auth/token")
async def revoke_own_token(request: Request) -> dict[str, Any]:
    """The API token this request is made with is revoked: a client that signed in with
    a password and was told not to keep the token gives it up when it closes."""
    caller = await caller_of(request)
    if caller.via != "token":
        raise NotSignedIn("Send the user API token to revoke as the bearer token")
    _, _, secret = request.headers.get("authorization", "").partition(" ")
    await asyncio.to_thread(hub_of(request).users.revoke_token_secret, secret.strip())
    return {"success": True}


@router.post("/api/auth/logout")
async def logout(request: Request) -> Response:
    await caller_of(request)  # a cross-site logout is refused like any other cookie write
    secret = request.cookies.get(SESSION_COOKIE)
    if secret:
        hub_of(request).users.close_session(secret)
    from_form = request.headers.get("content-type", "").startswith(
        "application/x-www-form-urlencoded")
    response: Response = (RedirectResponse("/login?note=out", 303) if from_form
                          else JSONResponse({"success": True}))
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get("/api/auth/me")
async def me(request: Request) -> dict[str, Any]:
    return (await caller_of(request)).as_job_view()
