"""``webhub``: the hub's command line."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from shared.errors import NotFound, WebJobsError

if TYPE_CHECKING:
    from hub.services.secrets import SecretsService
    from hub.settings import Settings
    from hub.store.hubdb import HubDatabase
    from hub.store.identity import IdentityStore


def _with_node_url(settings: Settings, host: str, port: int) -> Settings:
    """``settings`` with WEBHUB_NODE_URL, if unset, read from what the server listens on:
    the host it is bound to, or the machine's name when it listens on every address."""
    if settings.node_url:
        return settings
    import dataclasses
    import socket

    reachable = socket.gethostname() if host in ("0.0.0.0", "::", "") else host
    shown = f"[{reachable}]" if ":" in reachable else reachable
    return dataclasses.replace(settings, node_url=f"http://{shown}:{port}")


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from hub.api.app import create_app
    from hub.api.http_protocol import hub_http_protocol
    from hub.logsetup import configure, uvicorn_options
    from hub.settings import load_settings

    settings = _with_node_url(load_settings(), args.host, args.port)
    configure(args.log_level, settings.log_format, settings.node)  # .env read now too
    app = create_app(settings)
    print(f"WebJobs hub on http://{args.host}:{args.port}  (jobs: {settings.jobs_dir}, "
          f"data: {settings.home})", flush=True)
    if not (os.environ.get("WEBHUB_SYSTEM_TOKEN") or os.environ.get("WEBHUB_SYSTEM_TOKEN_FILE")):
        print(f"System token (management API, bearer): {settings.system_token}\n"
              f"  kept in {settings.home / 'system-token'}; set WEBHUB_SYSTEM_TOKEN to choose one",
              flush=True)
    if args.demo_owner:
        from hub.demo import ensure_demo_owner

        with _users() as users:
            details = ensure_demo_owner(users, f"http://{args.host}:{args.port}")
        if details:
            print(details, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level,
                **uvicorn_options(settings.access_log), loop="uvloop",
                http=hub_http_protocol(settings.header_timeout_s),
                timeout_graceful_shutdown=5,
                # The hub decides itself whose X-Forwarded-For to believe
                # (WEBHUB_TRUSTED_PROXIES); uvicorn's own rewrite would trust loopback.
                proxy_headers=False)
    return 0


@contextlib.contextmanager
def _users() -> Iterator[IdentityStore]:
    """The hub's user directory (``WEBHUB_DB``), closed afterwards; a database fault
    becomes a one-line error, not a traceback."""
    from hub.settings import load_settings
    from hub.store.identity import open_identity_store

    store = open_identity_store(load_settings().hub_db)  # faults arrive as StoreUnavailable
    try:
        yield store
    finally:
        store.close()


@contextlib.contextmanager
def _secrets(with_jobs: bool = False) -> Iterator[SecretsService]:
    """The secrets on the hub database, sealed with this hub's WEBHUB_SECRET;
    ``with_jobs``: the job store too (to list which jobs declare which secret)."""
    from hub.services.secrets import secrets_service
    from hub.settings import load_settings
    from hub.store.opening import open_job_store

    settings = load_settings()
    jobs = open_job_store(settings) if with_jobs else None
    try:
        service = secrets_service(settings, jobs)
        try:
            yield service
        finally:
            service.store.db.close()
    finally:
        jobs_db = getattr(jobs, "db", None)
        if jobs_db is not None:
            jobs_db.close()


def _cli_user() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (OSError, KeyError):  # no login name (a bare container)
        return "cli"


def _secret_set(args: argparse.Namespace) -> int:
    from hub.services.secrets import check_secret_name

    check_secret_name(args.name)  # before asking for a value
    value = _read_password("Secret value: ")
    with _secrets() as secrets:
        done = asyncio.run(secrets.set(args.name, value, _cli_user()))
    print(f"{'created' if done.created else 'replaced'} {args.name}")
    return 0


def _secret_list(args: argparse.Namespace) -> int:
    with _secrets(with_jobs=True) as secrets:
        for item in asyncio.run(secrets.listing()).secrets:
            state = item.updatedAt or "not set"
            print(f"{item.name}\t{state}\t{item.updatedBy or '-'}\t"
                  f"{','.join(item.declaredBy) or '-'}")
    return 0


def _secret_delete(args: argparse.Namespace) -> int:
    with _secrets() as secrets:
        asyncio.run(secrets.delete(args.name, _cli_user()))
    return 0


def _add_secret_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    secret = sub.add_parser("secret", help="manage the secrets jobs read with secrets.get")
    secret.set_defaults(log_level="warning")
    verbs = secret.add_subparsers(dest="verb", required=True)
    put = verbs.add_parser("set", help="set a secret (its value read from stdin)")
    put.add_argument("name")
    put.set_defaults(func=_secret_set)
    verbs.add_parser("list", help="list secrets: name, updated, by whom, declaring jobs "
                     "(never values)").set_defaults(func=_secret_list)
    delete = verbs.add_parser("delete", help="delete a secret")
    delete.add_argument("name")
    delete.set_defaults(func=_secret_delete)


def _read_password(prompt: str = "New password: ") -> str:
    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    line = sys.stdin.readline()
    return line.removesuffix("\n").removesuffix("\r")


def _user_add(args: argparse.Namespace) -> int:
    with _users() as users:
        users.add_user(args.name, args.user_class, args.staff_id)
        _, token = users.issue_token(args.name, "cli")
    print(token)
    return 0


def _user_passwd(args: argparse.Namespace) -> int:
    with _users() as users:
        if users.get_user(args.name) is None:
            raise NotFound(f"No user '{args.name}'")
        users.set_password(args.name, _read_password())
    return 0


def _user_token(args: argparse.Namespace) -> int:
    with _users() as users:
        _, token = users.issue_token(args.name, args.label)
    print(token)
    return 0


def _user_list(args: argparse.Namespace) -> int:
    with _users() as users:
        for user in users.list_users():
            staff = "-" if user.staff_id is None else str(user.staff_id)
            state = "disabled" if user.disabled else "active"
            print(f"{user.name}\t{user.user_class}\t{staff}\t{state}")
    return 0


def _user_disable(args: argparse.Namespace) -> int:
    with _users() as users:
        users.disable_user(args.name)
    return 0


def _token_revoke(args: argparse.Namespace) -> int:
    with _users() as users:
        if not users.revoke_token(args.id):
            raise NotFound(f"No token with id {args.id}")
    return 0


def _add_user_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    user = sub.add_parser("user", help="manage the hub's users")
    user.set_defaults(log_level="warning")
    verbs = user.add_subparsers(dest="verb", required=True)
    add = verbs.add_parser("add", help="add a user and print an API token for them")
    add.add_argument("name")
    add.add_argument("--class", dest="user_class", required=True, metavar="OWNER|USER")
    add.add_argument("--staff-id", type=int, default=None)
    add.set_defaults(func=_user_add)
    passwd = verbs.add_parser("passwd", help="set a user's password (read from stdin)")
    passwd.add_argument("name")
    passwd.set_defaults(func=_user_passwd)
    token = verbs.add_parser("token", help="print a new API token for a user")
    token.add_argument("name")
    token.add_argument("--label", default="")
    token.set_defaults(func=_user_token)
    verbs.add_parser("list", help="list users").set_defaults(func=_user_list)
    disable = verbs.add_parser("disable", help="disable a user (tokens and sessions too)")
    disable.add_argument("name")
    disable.set_defaults(func=_user_disable)
    tokens = sub.add_parser("token", help="manage users' API tokens")
    tokens.set_defaults(log_level="warning")
    token_verbs = tokens.add_subparsers(dest="verb", required=True)
    revoke = token_verbs.add_parser("revoke", help="revoke an API token by its id")
    revoke.add_argument("id", type=int)
    revoke.set_defaults(func=_token_revoke)


@contextlib.contextmanager
def _schema_databases(settings: Settings, *, made: bool) -> Iterator[
        list[tuple[HubDatabase, str]]]:
    """The databases the hub keeps tables in, each with its migration scope: the hub
    database, and the local history file when history is kept there (``made``: only
    if the file exists already)."""
    from hub.store.hubdb import open_hub_database
    from hub.store.migrations.startup import LOCAL_HISTORY_FILE, open_local_history_db

    found = [(open_hub_database(settings.hub_db), "hub")]
    try:
        local = settings.home / LOCAL_HISTORY_FILE
        if settings.history_store == "local" and (not made or local.exists()):
            found.append((open_local_history_db(settings.home), "history"))
        yield found
    finally:
        for db, _ in found:
            db.close()


def _db_upgrade(args: argparse.Namespace) -> int:
    from hub.settings import load_settings
    from hub.store.migrations import head_revision, upgrade, upgrade_local_history

    settings = load_settings()
    with _schema_databases(settings, made=True) as found:
        for db, scope in found:
            applied = (upgrade(db) if scope == "hub"
                       else upgrade_local_history(settings.home))
            done = f"applied {', '.join(applied)}" if applied else "nothing to do"
            print(f"{db.label}: {done}; at {head_revision()}")
    return 0


def _db_current(args: argparse.Namespace) -> int:
    from hub.settings import load_settings
    from hub.store.migrations import current_revision, head_revision, pending_migrations

    with _schema_databases(load_settings(), made=True) as found:
        for db, _ in found:
            at = current_revision(db) or "no revision (tables made before migrations, or none)"
            print(f"{db.label}: at {at}")
            pending = pending_migrations(db)
            print(f"  pending: {', '.join(pending) if pending else 'none'} "
                  f"(newest: {head_revision()})")
    return 0


def _add_db_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    db = sub.add_parser("db", help="the schema of the hub's databases")
    db.set_defaults(log_level="warning")
    verbs = db.add_subparsers(dest="verb", required=True)
    verbs.add_parser("upgrade", help="upgrade the hub's tables to this version (the hub "
                     "also does it at start)").set_defaults(func=_db_upgrade)
    verbs.add_parser("current", help="the schema revision of each database and what is "
                     "pending").set_defaults(func=_db_current)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="webhub", description="The WebJobs hub")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the hub's HTTP server")
    serve.add_argument("--demo-owner", action="store_true",
                       help="on a hub with no users yet, create an owner and print its sign-in")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8700)
    serve.add_argument("--log-level", default="info",
                       choices=["debug", "info", "warning", "error"])
    serve.set_defaults(func=_serve)
    _add_user_commands(sub)
    _add_secret_commands(sub)
    _add_db_commands(sub)
    return parser


def configure_logging(level: str) -> None:
    """The hub's log on stderr (hub.logsetup), every line of it writable whatever text
    it holds (a lone surrogate from a request or a job is U+FFFD) and with no secret
    value in it. Its format is WEBHUB_LOG_FORMAT as the environment has it; ``serve``
    sets it again from its settings (which may come from ``.env``)."""
    from hub.logsetup import configure

    configure(level, "json" if os.environ.get("WEBHUB_LOG_FORMAT") == "json" else "text")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level)
    try:
        return int(args.func(args))
    except WebJobsError as exc:
        print(f"webhub: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
