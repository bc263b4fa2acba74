"""The README's settings table, written from the declarations (hub/setting_list.py).

``python -m hub.settings_doc`` prints it; ``--write README.md`` puts it between the
README's two markers. tests/hub/test_settings_doc.py keeps the README equal to it.
"""

from __future__ import annotations

import sys

from hub.setting_list import DECLARED
from shared.doc_tables import replace_between, table_command

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
    return table_command("python -m hub.settings_doc", settings_table, BEGIN, END, argv)


if __name__ == "__main__":
    sys.exit(main())
