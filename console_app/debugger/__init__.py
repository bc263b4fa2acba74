"""The graphical step debugger (a debug run, a replay, or a live page session)."""

from console_app.debugger.window import DebuggerWindow

__all__ = ["DebuggerWindow"]
