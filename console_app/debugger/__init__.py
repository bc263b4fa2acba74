"""The graphical step debugger (a debug run, a replay, or a live page session).

The window is imported on first use: the Manage page imports only ``launch``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from console_app.debugger.window import DebuggerWindow

__all__ = ["DebuggerWindow"]


def __getattr__(name: str) -> Any:
    if name == "DebuggerWindow":
        from console_app.debugger.window import DebuggerWindow

        return DebuggerWindow
    raise AttributeError(name)
