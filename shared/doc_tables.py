"""README tables written from the code that declares what they list (settings, error
codes): the text between two HTML-comment markers is replaced, so a test can check the
README against the code, and a change to one cannot leave the other behind."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def replace_between(text: str, begin: str, end: str, body: str) -> str:
    """``text`` with what lies between the lines ``begin`` and ``end`` replaced by ``body``."""
    head, found_begin, rest = text.partition(begin)
    _, found_end, tail = rest.partition(end)
    if not found_begin or not found_end:
        raise ValueError(f"no '{begin}' ... '{end}' markers")
    return f"{head}{begin}\n{body}\n{end}{tail}"


def write_between(path: Path, begin: str, end: str, body: str) -> None:
    path.write_text(replace_between(path.read_text(encoding="utf-8"), begin, end, body),
                    encoding="utf-8")


def table_command(prog: str, table: Callable[[], str], begin: str, end: str,
                  argv: list[str] | None = None) -> int:
    """``prog`` prints the table; ``prog --write README.md`` puts it between the markers."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--write", type=Path, metavar="README", help="update this file")
    args = parser.parse_args(argv)
    if args.write is None:
        print(table())
    else:
        write_between(args.write, begin, end, table())
    return 0
