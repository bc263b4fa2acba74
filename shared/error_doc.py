"""The README's error-code table, written from the classes in shared/errors.py.

``python -m shared.error_doc`` prints it; ``--write README.md`` puts it between the
README's markers. A code, once given out, keeps its meaning and is never reused for
another (HUB-002 to HUB-006 were never given out).
"""

from __future__ import annotations

import sys

from shared.doc_tables import table_command
from shared.errors import known_error_classes

BEGIN = "<!-- error codes: written by `python -m shared.error_doc --write README.md` -->"
END = "<!-- end of the error codes -->"


def error_table() -> str:
    lines = ["| Code | Status | Meaning |", "|---|---|---|"]
    lines += [f"| `{cls.code}` | {cls.http_status} | {cls.meaning} |"
              for cls in known_error_classes()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return table_command("python -m shared.error_doc", error_table, BEGIN, END, argv)


if __name__ == "__main__":  # pragma: no cover - python -m shared.error_doc
    sys.exit(main())
