"""What a job's SQL may not do on PostgreSQL, MariaDB and other ODBC servers.

SQLite has an authorizer (:mod:`hub.outside.sqlite_guard`); a server has grants, and
grants are the last word on tables. But three things a job could do are out of reach
of grants, so the hub refuses them by reading the statement first:

* **files of the hub's host**: MariaDB's ``LOAD DATA|XML … LOCAL INFILE`` makes the
  *client* — the hub — send a file; the server's grants do not see it. Every ``LOAD``
  statement is refused (and the connector's own option is off as well, see
  :mod:`hub.outside.mariadb_client`), as are the server-file functions and
  ``INTO OUTFILE``, ``COPY`` and ``LOAD 'library'``;
* **the login itself**: any login may change its own password (``SET PASSWORD``,
  ``ALTER USER|ROLE CURRENT_USER``) or, on PostgreSQL, its stored settings, which locks
  every later ``db.exec`` out. Statements that change a login, a role, a grant, the
  session's identity (``SET ROLE``, ``SET SESSION AUTHORIZATION``) or the staff id the
  hub sets (``webhub.userstaffid``, ``@webhub_userstaffid``) are refused;
* **the doors around a reading**: SQL built at run time cannot be read, so what runs
  it is refused — PostgreSQL ``DO`` blocks, MariaDB ``PREPARE``/``EXECUTE``/
  ``EXECUTE IMMEDIATE`` and ``BEGIN NOT ATOMIC`` blocks, and creating functions,
  procedures and events (whose bodies would run later, unread).

The reading is exact about what is code (:mod:`hub.outside.sql_lexing`): each
dialect's strings, comments and quoted names, with the quoting settings the server
itself reported on the connection; what cannot be known is read every way, and any
refusal counts. Reading is linear in the text. A refusal carries the SQL state
``42501``.
"""

from __future__ import annotations

import re

from hub.outside.collector import collector_paused
from hub.outside.sql_lexing import NOTHING, Dialect, Quoting, Token, dialect_of, readings

__all__ = ["Dialect", "Quoting", "dialect_of", "refused_in_server_text"]

_NOTHING = NOTHING
_OPEN, _AT, _COMMA, _SEMICOLON = (Token("other", c) for c in "(@,;")
_INTO, _SET = Token("word", "into"), Token("word", "set")


# ---------------------------------------------------------------- what is refused

_LOGIN_CHANGE = "it changes a login, a role or a grant, which would outlast the run"
_DYNAMIC = "it runs SQL built at run time, which the hub cannot read first"
# create/alter/drop/rename of these: the first such word after the verb names the object.
_OBJECT_WORDS = frozenset({
    "table", "view", "index", "sequence", "trigger", "type", "domain", "schema",
    "database", "user", "role", "group", "login", "function", "procedure", "package",
    "event", "extension", "system", "server", "tablespace", "language", "foreign",
    "subscription", "publication", "policy", "rule", "statistics", "collation",
    "operator", "cast", "conversion", "materialized", "default", "owned",
    "routine", "transform", "synonym", "text", "access",
})
_REFUSED_OBJECTS = {
    "user": _LOGIN_CHANGE, "role": _LOGIN_CHANGE, "group": _LOGIN_CHANGE,
    "login": _LOGIN_CHANGE, "default": _LOGIN_CHANGE, "owned": _LOGIN_CHANGE,
    "database": "it reaches past the business database",
    "system": "it changes the server for every login",
    "server": "it reaches another server", "foreign": "it reaches another server",
    "subscription": "it reaches another server",
    "tablespace": "it names files on the database server",
    "extension": "it loads code into the database server",
    "language": "it loads code into the database server",
}
_ROUTINES = {"function", "procedure", "package", "event", "routine"}  # create/alter only
_SET_TARGETS = {"password": "SET PASSWORD", "role": "SET ROLE",
                "authorization": "SET SESSION AUTHORIZATION"}
_SET_MODIFIERS = {"session", "local", "global"}
_FILE_FUNCTIONS = {
    "postgresql": frozenset({
        "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_ls_logdir", "pg_ls_waldir",
        "pg_ls_tmpdir", "pg_ls_archive_statusdir", "pg_ls_logicalsnapdir",
        "pg_ls_logicalmapdir", "pg_ls_replslotdir", "pg_stat_file", "lo_import",
        "lo_export", "pg_file_write", "pg_file_rename", "pg_file_unlink", "pg_logdir_ls",
        "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
        "pg_promote", "dblink", "dblink_exec", "dblink_connect", "dblink_connect_u",
        "dblink_send_query", "dblink_open",
        # they run SQL held in a string, which cannot be read first
        "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "ts_stat",
        "ts_rewrite",
        # views and functions over the server's files
        "pg_file_settings", "pg_hba_file_rules", "pg_ident_file_mappings", "pg_current_logfile",
    }),
    "mariadb": frozenset({"load_file", "sys_exec", "sys_eval",
                          "execute_prepared_stmt"}),  # sys's: it runs SQL held in a string
    "other": frozenset({"openrowset", "opendatasource", "openquery", "xp_cmdshell"}),
}
_CONFIG_REFUSED = ("role", "session_authorization", "webhub.")


# Every refusal below needs one of these in the text (a keyword, an object's kind, a
# function's name): a statement with none of them is not read at all. A bulk INSERT or
# a plain SELECT costs a lower-casing and a few substring searches, not a reading.
_NEEDED_WORDS = (
    "{", "grant", "revoke", "load", "password", "role", "authorization", "webhub", "reassign",
    "user", "group", "login", "default", "owned", "database", "system", "server",
    "foreign", "subscription", "tablespace", "extension", "language", "function",
    "procedure", "package", "event", "routine",
)
_NEEDED_BY_DIALECT: dict[Dialect, tuple[str, ...]] = {
    "postgresql": ("copy", "import", "set_config", "pg_", "lo_", "dblink", "query_to",
                   "transaction", "u&", "reset", "discard", "ts_stat", "ts_rewrite"),
    "mariadb": ("schema", "prepare", "execute", "deallocate", "kill", "shutdown", "install",
                "atomic", "immediate", "outfile", "dumpfile", "sys_", "federated", "connect",
                "spider"),
    "other": ("open", "xp_"),
}
# Short verbs, as whole words: DO (PostgreSQL), XA (MariaDB). A compound statement
# needs nothing of its own here: only what its body holds could be refused.
_SHORT_VERB = {"postgresql": re.compile(r"\bdo\b"), "mariadb": re.compile(r"\bxa\b")}


def _may_be_refused(sql: str, dialect: Dialect) -> bool:
    lowered = sql.lower()
    verb = _SHORT_VERB.get(dialect)
    if verb is not None and verb.search(lowered):
        return True
    return any(word in lowered for word in _NEEDED_WORDS + _NEEDED_BY_DIALECT[dialect])


_ODBC_ESCAPE = re.compile(r"\{\s*(?:\?|(?:d|t|ts|fn|oj|call|escape|interval|guid)\b)",
                          re.IGNORECASE)
_DOLLAR_THEN_PARAMETER = re.compile(r"\$[A-Za-z0-9_\x80-\U0010FFFF]*\?")


def refused_in_server_text(sql: str, dialect: Dialect, quoting: Quoting | None = None,
                           with_params: bool = False) -> str | None:
    """What ``sql`` does that a job may not, in words for the job; None when nothing.
    ``quoting`` is the server's, when the connection reported it (else every way);
    ``with_params`` says ``?`` parameters come with it."""
    # psqlODBC writes the parameters' values into a text it takes for several statements
    # (it doubles quotes, not backslashes): a value could end a string and add a
    # statement. Its own idea of where a statement ends is not the server's (e'…',
    # $_$…$_$), so with parameters no ";" may stand before the end at all.
    if dialect == "postgresql" and with_params and ";" in sql.rstrip().rstrip(";"):
        return ("a ';' in a statement with ? parameters (the driver would write their "
                "values into the text): send one statement a db.exec, with no ';' in it")
    # psqlODBC sends each ? as $1, $2…: after a "$" or a "$tag" that opens a dollar quote
    # the server reads and the hub did not.
    if dialect == "postgresql" and with_params and _DOLLAR_THEN_PARAMETER.search(sql):
        return "a ? right after '$' (the driver makes $? the start of a dollar quote)"
    # psqlODBC rewrites ODBC escapes ({d '…'}, {fn …}) by its own lexing, which is not
    # the server's (it takes e'…' for a plain string): one rewritten where the server
    # sees a string shifts every quote after it. Refused wherever it stands.
    if dialect == "postgresql" and _ODBC_ESCAPE.search(sql):
        return ("an ODBC escape ({d …}, {fn …}, …): the driver rewrites it before the server "
                "reads the text, even inside a string; write plain SQL")
    if not _may_be_refused(sql, dialect):
        return None
    with collector_paused():  # a long statement's tokens: many objects, no cycles
        return _refused_in_readings(readings(sql, dialect, quoting), dialect)


def _refused_in_readings(all_tokens: list[list[Token]], dialect: Dialect) -> str | None:
    for tokens in all_tokens:
        refused = _anywhere(tokens, dialect)
        for statement in _statements(tokens):
            refused = refused or _statement_refused(statement, dialect)
        if refused:
            return refused
    return None


_BRACES = (Token("other", "{"), Token("other", "}"))


def _statements(tokens: list[Token]) -> list[list[Token]]:
    """The statements of a text. An ODBC escape's braces count as a boundary too: MariaDB
    Connector/ODBC strips ``{…}`` around a statement (``{SET PASSWORD …}`` runs it), and
    ``{call …}`` is a statement of its own."""
    out: list[list[Token]] = [[]]
    for token in tokens:
        if token == _SEMICOLON or token in _BRACES:
            out.append([])
        else:
            out[-1].append(token)
    return [s for s in out if s]


def _words(tokens: list[Token]) -> list[str]:
    return [t.text for t in tokens if t.kind == "word"]


_MARIADB_STARTS = frozenset({"begin", "execute", "into"})
# MariaDB runs these as compound statements outside a stored program too; their bodies
# are statements that do not start after a semicolon of their own, so they are refused
# whole, as BEGIN NOT ATOMIC is.
_COMPOUND = frozenset({"if", "case", "while", "repeat", "loop", "for", "declare",
                       "iterate", "leave", "begin"})


def _anywhere(tokens: list[Token], dialect: Dialect) -> str | None:
    """What is refused wherever it stands: grants, LOAD, file functions, dynamic SQL."""
    into_targets = _into_targets(tokens) if dialect == "mariadb" else set()
    count = len(tokens)
    for index, (kind, text) in enumerate(tokens):
        if (kind, text) in (("other", "{"), ("other", "}")):
            return ("ODBC escapes ({fn …}, {oj …}, …): the driver rewrites them before the "
                    "server reads the text; write plain SQL")
        if kind == "uescape":
            return ("U&\"…\" and U&'…' (Unicode escapes could spell any name): write the "
                    "characters themselves")
        if kind == "other":
            continue
        after = tokens[index + 1] if index + 1 < count else _NOTHING
        if kind == "word" and text in ("grant", "revoke"):
            return f"{text.upper()} ({_LOGIN_CHANGE})"
        if kind == "word" and text == "load" and after.text.lower() in ("data", "xml"):
            return "LOAD DATA (it makes the hub send a file of its host)"
        if kind in ("word", "name"):
            refused = _name_refused(tokens, index, dialect)
            if refused:
                return refused
        if dialect == "mariadb" and (text in _MARIADB_STARTS or kind == "uservar"):
            refused = _mariadb_anywhere(tokens, index, index in into_targets)
            if refused:
                return refused
        if (dialect == "postgresql" and kind == "word" and text == "update"
                and any(t.text.lower() == "pg_settings" for t in tokens[index + 1:index + 4])):
            return "UPDATE pg_settings (it sets the role or the hub's webhub.* settings)"
    return None


def _name_refused(tokens: list[Token], index: int, dialect: Dialect) -> str | None:
    """A refused function named anywhere (called, or bound to an operator or a cast),
    or set_config() of what the hub owns."""
    name = tokens[index].text.lower()
    if name in _FILE_FUNCTIONS[dialect]:
        return f"the function {name}() (it reaches past the business tables)"
    if dialect == "postgresql" and name == "set_config":
        # Only set_config('plain literal', …) can be read: a name built at run time —
        # a concatenation, a column, E'\x72ole' — could be 'role'.
        shape = tokens[index + 1:index + 4]
        plain = (len(shape) == 3 and shape[0] == _OPEN and shape[1].kind == "string"
                 and shape[2] == _COMMA and "\\" not in shape[1].text)
        if not plain or shape[1].text.lower().startswith(_CONFIG_REFUSED):
            return "set_config() of the role or the hub's webhub.* settings"
    return None


def _mariadb_anywhere(tokens: list[Token], index: int, into_target: bool) -> str | None:
    words = [t.text if t.kind == "word" else "" for t in tokens[index:index + 3]]
    if words == ["begin", "not", "atomic"]:
        return f"BEGIN NOT ATOMIC ({_DYNAMIC})"
    if words[:2] == ["execute", "immediate"]:
        return f"EXECUTE IMMEDIATE ({_DYNAMIC})"
    if words[:1] == ["into"] and len(words) > 1 and words[1] in ("outfile", "dumpfile"):
        return f"INTO {words[1].upper()} (it writes a file on the database server)"
    if _is_hub_variable(tokens, index) and (into_target or _assigned(tokens, index)):
        return "assigning @webhub_… (the hub's staff id for the statement)"
    return None


def _is_hub_variable(tokens: list[Token], index: int) -> bool:
    """``@webhub_…`` at ``index``, however its name is quoted."""
    token = tokens[index]
    # A quoted name's backslash escapes are the server's to read ('web\\hub_…' is it).
    return token.kind == "uservar" and (token.text.startswith("webhub_") or "\\" in token.text)


def _assigned(tokens: list[Token], index: int) -> bool:
    """``@x := …`` anywhere, or ``@x = …`` where a SET (or its list) assigns."""
    following = [t.text for t in tokens[index + 1:index + 3]]
    if following == [":", "="]:
        return True
    before = tokens[index - 1] if index > 0 else _NOTHING
    return following[:1] == ["="] and before in (_SET, _COMMA)


def _into_targets(tokens: list[Token]) -> set[int]:
    """Each variable of a ``SELECT … INTO @a, @b`` list (one pass)."""
    targets: set[int] = set()
    index, count = 0, len(tokens)
    while index < count:
        if tokens[index] != _INTO:
            index += 1
            continue
        index += 1
        while index < count and tokens[index].kind == "uservar":
            targets.add(index)
            index += 1
            if index < count and tokens[index] == _COMMA:
                index += 1
    return targets


def _statement_refused(statement: list[Token], dialect: Dialect) -> str | None:
    """What is refused by a statement's first words."""
    words = _words(statement)
    if not words or statement[0].kind != "word":
        return None
    verb = words[0]
    if dialect == "mariadb":
        refused = _mariadb_statement(statement, words)
        if refused:
            return refused
    if dialect == "postgresql" and words[:2] == ["prepare", "transaction"]:
        return "PREPARE TRANSACTION (a prepared transaction outlives the run)"
    if verb in ("create", "alter", "drop", "rename", "reassign"):
        return _definition_refused(verb, words[1:], dialect)
    if verb == "set":
        return _set_refused(statement, words[1:], dialect)
    if verb == "reset" and (words[1:2] in (["role"], ["session_authorization"])
                            or words[1:3] == ["session", "authorization"]):
        return f"RESET {' '.join(words[1:3]).upper()} ({_LOGIN_CHANGE})"
    if dialect == "postgresql" and (words[:2] == ["discard", "all"] or (verb == "reset" and (
            words[1:2] == ["all"] or _names_hub_setting(statement)))):
        return f"{verb.upper()} (it would clear the hub's webhub.* settings)"
    if dialect == "postgresql" and "update" in words and "pg_settings" in [
            t.text.lower() for t in statement if t.kind in ("word", "name")]:
        return "UPDATE pg_settings (it sets the role or the hub's webhub.* settings)"
    if verb == "load":
        return "LOAD (it reads files or libraries into the database server)"
    return _verb_refused(verb, dialect)


def _names_hub_setting(statement: list[Token]) -> bool:
    return any(t.kind in ("word", "name") and t.text.lower().startswith("webhub")
               for t in statement[1:3])


_OTHER_SERVER_ENGINES = frozenset({"federated", "federatedx", "connect", "spider"})


def _mariadb_statement(statement: list[Token], words: list[str]) -> str | None:
    verb = words[0]
    if verb in ("create", "alter") and _engine_elsewhere(statement):
        return "a table ENGINE that reaches another server or files (FEDERATED, CONNECT, SPIDER)"
    if verb == "create" and "trigger" in words[1:4] and ["each", "row"] in (
            words[i:i + 2] for i in range(len(words))):
        # A trigger's body is one statement (or a compound one): read it as such too.
        body = _trigger_body(statement)
        if body:
            refused = _statement_refused(body, "mariadb")
            if refused:
                return f"{refused}, in a trigger's body"
    labelled = len(statement) > 1 and statement[1] == Token("other", ":")
    if (verb in _COMPOUND and not (verb == "begin" and words[1:2] in ([], ["work"])))\
            or labelled:
        return f"compound statements ({verb.upper()} …) ({_DYNAMIC})"
    if verb == "xa":
        return "XA transactions (a prepared one outlives the run)"
    if verb == "call" and any(_is_hub_variable(statement, i) for i in range(len(statement))):
        return "@webhub_… in a CALL (an OUT parameter would set the hub's staff id)"
    return None


def _engine_elsewhere(statement: list[Token]) -> bool:
    for index, token in enumerate(statement[:-1]):
        if token == Token("word", "engine"):
            after = [t for t in statement[index + 1:index + 3] if t.text != "="]
            if after and after[0].text.lower() in _OTHER_SERVER_ENGINES:
                return True
    return False


def _trigger_body(statement: list[Token]) -> list[Token]:
    """The tokens after ``FOR EACH ROW`` (and a FOLLOWS/PRECEDES clause)."""
    texts = [t.text for t in statement]
    for index in range(len(texts) - 2):
        if texts[index:index + 3] == ["for", "each", "row"]:
            body = statement[index + 3:]
            if body[:1] and body[0].text in ("follows", "precedes"):
                body = body[2:]
            return body
    return []


def _verb_refused(verb: str, dialect: Dialect) -> str | None:
    if dialect == "postgresql":
        refused = {"do": f"DO blocks ({_DYNAMIC})",
                   "copy": "COPY (it reads or writes files on the database server)",
                   "import": "IMPORT FOREIGN SCHEMA (it reaches another server)"}
        return refused.get(verb)
    if dialect == "mariadb":
        if verb in ("prepare", "execute", "deallocate"):
            return f"{verb.upper()} ({_DYNAMIC})"
        if verb in ("kill", "shutdown", "install", "uninstall"):
            return f"{verb.upper()} (it acts on the server, not on the business tables)"
    return None


def _definition_refused(verb: str, rest: list[str], dialect: Dialect) -> str | None:
    if verb == "reassign":
        return f"REASSIGN OWNED ({_LOGIN_CHANGE})"
    target = next((word for word in rest if word in _OBJECT_WORDS), None)
    if target is None:
        return None
    if dialect == "mariadb" and target == "schema":
        target = "database"  # MariaDB's SCHEMA is a database
    if target in _ROUTINES and verb in ("create", "alter"):
        return f"{verb.upper()} {target.upper()} (its body would run later, unread)"
    why = _REFUSED_OBJECTS.get(target)
    return f"{verb.upper()} {target.upper()} ({why})" if why else None


def _set_refused(statement: list[Token], rest: list[str], dialect: Dialect) -> str | None:
    if dialect == "mariadb" and any(
            _is_hub_variable(statement, i) for i in range(len(statement))):
        return "SET @webhub_… (the hub's staff id for the statement)"
    if dialect == "mariadb" and rest[:1] == ["statement"]:
        # SET STATEMENT … FOR <statement>: the first FOR, or the last (the values are
        # constants, so no other FOR can stand between).
        fors = [i for i, t in enumerate(statement) if t == Token("word", "for")]
        for at in {fors[0], fors[-1]} if fors else ():
            refused = _statement_refused(statement[at + 1:], dialect)
            if refused:
                return refused
    for item in _set_items(statement):  # MariaDB takes PASSWORD, ROLE… as any item
        refused = _set_item_refused(item, dialect)
        if refused:
            return refused
    return None


def _set_items(statement: list[Token]) -> list[list[Token]]:
    """A SET statement's items: its tokens after SET, split at top-level commas."""
    items: list[list[Token]] = [[]]
    depth = 0
    for token in statement[1:]:
        if token == _OPEN:
            depth += 1
        elif token == Token("other", ")"):
            depth = max(depth - 1, 0)
        if token == _COMMA and depth == 0:
            items.append([])
        else:
            items[-1].append(token)
    return items


def _set_item_refused(item: list[Token], dialect: Dialect) -> str | None:
    at = 0  # the target: after SESSION/LOCAL/GLOBAL; a user variable is none
    while at < len(item) - 1 and item[at].kind == "word" and item[at].text in _SET_MODIFIERS:
        at += 1
    target = item[at] if at < len(item) else NOTHING
    if target.kind not in ("word", "name"):
        return None
    name = target.text.lower()
    following = item[at + 1].text.lower() if at + 1 < len(item) else ""
    if name == "default" and following == "role":
        return f"SET DEFAULT ROLE ({_LOGIN_CHANGE})"
    if name in _SET_TARGETS:
        return f"{_SET_TARGETS[name]} ({_LOGIN_CHANGE})"
    if name == "session_authorization":
        return f"SET SESSION AUTHORIZATION ({_LOGIN_CHANGE})"
    if dialect != "mariadb" and name.startswith("webhub"):
        return "SET webhub.… (the hub's staff id for the statement)"
    return None
