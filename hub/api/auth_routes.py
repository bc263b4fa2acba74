"""Browser sign-in: the login page, session cookies, and who am I."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, quote

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from hub.api.deps import IdentityDep, address_of, caller_of, own_origin, public_scheme
from hub.api.inbound import media_type, read_body, read_json_object
from hub.api.login_page import render, safe_next
from hub.api.typed import NO_BODY, TypedBody
from hub.auth import SESSION_COOKIE
from shared.errors import BadRequest, Forbidden, NotSignedIn, TooManyRequests
from shared.wire.auth import (
    CallerView,
    IssuedToken,
    SignedIn,
    SignedInUser,
    SignedOut,
    SignIn,
    TokenRequest,
    TokenRevoked,
)

router = APIRouter()
CREDENTIALS_MAX_BYTES = 64 * 1024  # a sign-in or token request: a name, a password, a label
SIGN_IN_BODY = TypedBody(SignIn, CREDENTIALS_MAX_BYTES)
TOKEN_BODY = TypedBody(TokenRequest, CREDENTIALS_MAX_BYTES)
FORM = "application/x-www-form-urlencoded"


def _json_or_form(body: TypedBody[Any]) -> dict[str, Any]:
    """``body``'s spec entry, taken as JSON or as an HTML form's fields."""
    doc = body.doc["requestBody"]
    json_media = doc["content"]["application/json"]
    return {"requestBody": {**doc, "content": {"application/json": json_media,
                                               FORM: json_media}}}


@router.get("/login", response_class=HTMLResponse)
async def login_page(identity: IdentityDep, request: Request, note: str = "",
                     next: str = "") -> HTMLResponse:
    name = await identity.session_user(request.cookies)
    return HTMLResponse(render(note, next or None, name),
                        headers={"Content-Security-Policy": "default-src 'none'; "
                                 "style-src 'unsafe-inline'; form-action 'self'; "
                                 "frame-ancestors 'none'", "Cache-Control": "no-store"})


async def _sign_in_fields(request: Request) -> tuple[SignIn, bool]:
    """(the fields, whether they came from an HTML form)."""
    if media_type(request) == "application/json":
        data = await read_json_object(request, CREDENTIALS_MAX_BYTES)
        # As the page's form would send them: a number as its text, anything else not at all.
        return SIGN_IN_BODY.check({k: str(v) for k, v in data.items()
                                   if isinstance(v, str | int)}), False
    body = await read_body(request, CREDENTIALS_MAX_BYTES)
    return SIGN_IN_BODY.check(dict(parse_qsl(body.decode("utf-8", errors="replace")))), True


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


@router.post("/api/auth/login", response_model=SignedIn,
             openapi_extra=_json_or_form(SIGN_IN_BODY))
async def login(request: Request, response: Response, identity: IdentityDep) -> object:
    """JSON in, JSON out; the sign-in page's form is redirected (to ``next``, or back
    to the page saying why not)."""
    _refuse_cross_site(request)
    fields, from_form = await _sign_in_fields(request)
    next_path = safe_next(fields.next or None)
    try:
        user = await identity.verified_user(fields.name.strip(), fields.password,
                                            address_of(request))
    except (TooManyRequests, NotSignedIn) as refused:
        if not from_form:
            raise
        note = "locked" if isinstance(refused, TooManyRequests) else "failed"
        return RedirectResponse(f"/login?note={note}&next={quote(next_path)}", 303)
    secret = await identity.open_session(user)
    target = RedirectResponse(next_path, 303) if from_form else response
    _session_cookie(target, request, secret, identity.session_max_age_s)
    if from_form:
        return target
    return SignedIn(success=True, user=SignedInUser(name=user.name, userClass=user.user_class))


@router.post("/api/auth/token", response_model=IssuedToken, openapi_extra=TOKEN_BODY.doc)
async def token(request: Request, identity: IdentityDep) -> object:
    """An API token for a desktop client that signs in with a name and password
    (the Owner console keeps it, so the password is asked for once). JSON only, so a
    plain HTML form elsewhere cannot post here; a browser that says the post is
    cross-site is refused as on the sign-in page."""
    _refuse_cross_site(request)
    if media_type(request) != "application/json":
        raise BadRequest("Send {name, password, label} as application/json")
    body = await TOKEN_BODY.read(request)
    user = await identity.verified_user(body.name.strip(), body.password, address_of(request))
    return await identity.issue_token(user, body.label)


@router.delete("/api/auth/token", response_model=TokenRevoked)
async def revoke_own_token(request: Request, identity: IdentityDep) -> object:
    """The API token this request is made with is revoked: a client that signed in with
    a password and was told not to keep the token gives it up when it closes."""
    caller = await caller_of(request)
    if caller.via != "token":
        raise NotSignedIn("Send the user API token to revoke as the bearer token")
    _, _, secret = request.headers.get("authorization", "").partition(" ")
    await identity.revoke_token_secret(secret.strip())
    return TokenRevoked(success=True)


@router.post("/api/auth/logout", response_model=SignedOut, openapi_extra=NO_BODY)
async def logout(request: Request, response: Response, identity: IdentityDep) -> object:
    """Ends this browser's session; the page's sign-out form is sent back to the page."""
    await caller_of(request)  # a cross-site logout is refused like any other cookie write
    secret = request.cookies.get(SESSION_COOKIE)
    if secret:
        await identity.close_session(secret)
    from_form = request.headers.get("content-type", "").startswith(FORM)
    target = RedirectResponse("/login?note=out", 303) if from_form else response
    target.delete_cookie(SESSION_COOKIE, path="/")
    return target if from_form else SignedOut(success=True)


@router.get("/api/auth/me", response_model=CallerView)
async def me(request: Request) -> object:
    return (await caller_of(request)).as_job_view()
