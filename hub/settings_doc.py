"""The README's settings table, written from the declarations (hub/setting_list.py).

``python -m hub.settings_doc`` prints it; ``--write README.md`` puts it between the
README's two markers. tests/hub/test_settings_doc.py keeps the README equal to it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hub.setting_list import DECLARED
from shared.doc_tables import replace_between

BEGIN = "<!-- settings table: written by `python -m hub.settings_doc --write README.md` -->"
END = "<!-- end of the settings table -->"


def settings_table() -> str:
    lines = ["| Setting | Default | Meaning |", "|---|---|---|"]
    lines += [f"| `{d.name}` | {d.default} | {d.meaning} |" for d in DECLARED]
    return "\n".join(lines)


def with_table(readme: str) -> str:
    """``readme`` with the text between the markers replaced by the table."""
    return replace_between(readme, BEGIN, END, settings_table())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hub.settings_doc")
    parser.add_argument("--write", type=Path, metavar="README", help="update this file")
    args = parser.parse_args(argv)
    if args.write is None:
        print(settings_table())
        return 0
    args.write.write_text(with_table(args.write.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
