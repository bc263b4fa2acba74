"""The Owner console (PySide6). Arrives with the console issue; talks to a hub only over HTTP."""
