"""MariaDB's client-side file loading, off for every business connection.

``LOAD DATA LOCAL INFILE`` lets a MariaDB server ask its *client* for a file, and for
``db.exec`` the client is the hub: a job could read any file the hub process can. The
hub refuses such statements by reading them first (:mod:`hub.outside.server_sql`), and
the connector is told never to send a file as well, so neither guard alone decides:

* Connector/ODBC 3.1.16 and later: ``NOLOCALINFILE=1`` in the connection string;
* older ones (Debian 12 ships 3.1.15, which ignores that key): the connector reads
  option files when ``OPTION`` has ``USE_MYCNF`` (65536), and Connector/C looks for
  ``my.cnf`` in ``MARIADB_HOME``, which the hub points at this folder, whose ``[odbc]``
  group says ``local-infile=0``. Connector/C reads that variable once, when the library
  first starts, so :func:`point_connector_here` runs when :mod:`hub.outside.database`
  is imported, before any connection of a hub process. An administrator's own
  ``MARIADB_HOME`` is kept; then their files decide, and the check below says so.

:func:`local_files_refused` verifies it on a live connection: the server refuses
``LOAD DATA LOCAL`` with error 4166 before it opens the table when the client has not
offered to send files (or the server's ``local_infile`` is off); any other answer
means this client would send one.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

__all__ = ["OPTION_FILE_DIR", "business_connection_string", "local_files_refused",
           "point_connector_here"]

OPTION_FILE_DIR = Path(__file__).resolve().parent
USE_MYCNF = 65536
# The connector's own splitting of a text into statements (its comments are not the
# server's: "--x" is one to it) would let a statement past the hub's reading.
MULTI_STATEMENTS = 67108864
LOCAL_INFILE_DISABLED = "4166"  # ER_LOAD_INFILE_CAPABILITY_DISABLED
_OPTION = re.compile(r"(?:^|;)\s*option\s*=\s*\{?(\d*)\}?\s*(?=;|$)", re.IGNORECASE)
_NOLOCAL = re.compile(r"(?:^|;)\s*nolocalinfile\s*=[^;]*(?=;|$)", re.IGNORECASE)
# The table name is never created: the server refuses the statement before opening it.
PROBE = "LOAD DATA LOCAL INFILE '/nonexistent/webhub-probe' INTO TABLE webhub_no_such_table"


def point_connector_here() -> None:
    """Let Connector/C find this folder's ``my.cnf`` (unless MARIADB_HOME is set)."""
    os.environ.setdefault("MARIADB_HOME", str(OPTION_FILE_DIR))


def business_connection_string(conn_str: str) -> str:
    """``conn_str`` with the connector's file loading off: ``USE_MYCNF`` added to its
    ``OPTION`` bits (and ``MULTI_STATEMENTS`` taken out) and ``NOLOCALINFILE=1`` in place
    of any value given."""
    match = _OPTION.search(conn_str)
    if match is None:
        out = conn_str.rstrip().rstrip(";") + f";OPTION={USE_MYCNF}"
    else:
        bits = (int(match.group(1) or 0) | USE_MYCNF) & ~MULTI_STATEMENTS
        start = match.start() + (1 if match.group().startswith(";") else 0)
        out = conn_str[:start] + f"OPTION={bits}" + conn_str[match.end():]
    out = _NOLOCAL.sub("", out)
    return out.rstrip().rstrip(";") + ";NOLOCALINFILE=1"


def local_files_refused(conn: Any, driver_error: type[Exception]) -> bool:
    """True when the server refuses ``LOAD DATA LOCAL`` on ``conn`` outright."""
    cursor = conn.cursor()
    try:
        cursor.execute(PROBE)
    except driver_error as exc:
        return f"({LOCAL_INFILE_DISABLED})" in str(exc)
    finally:
        cursor.close()
    return False

