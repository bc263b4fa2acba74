"""``python -m console_app``: the same as ``webjobs-console``."""

from console_app.app import main

raise SystemExit(main())
