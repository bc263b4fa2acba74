"""Masking a run's secret values (``***``) in what leaves the run.

A :class:`Redactor` is made from the values of the secrets a run was given. It
replaces each value, and its JSON-escaped forms (how it reads inside a JSON result
or a recorded call), wherever it occurs in text; :meth:`Redactor.deep` does the
same through JSON-like data (dict keys too). A text that was cut short may end
in the first part of a value: :meth:`Redactor.cut` also masks such a tail.
Values that are encoded otherwise (base64, hex, reversed) are not recognised.
"""

from __future__ import annotations

import builtins
import json
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["MASK", "NO_SECRETS", "Redactor"]

MASK = "***"
_DEPTH = 40


def _forms(value: str) -> set[str]:
    return {value, json.dumps(value, ensure_ascii=False)[1:-1],
            json.dumps(value, ensure_ascii=True)[1:-1]}


class Redactor:
    def __init__(self, values: Iterable[str] = ()) -> None:
        self.values = tuple(sorted({v for v in values if v}, key=len, reverse=True))
        forms = sorted({f for v in self.values for f in _forms(v)}, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, forms))) if forms else None
        # UTF-8 bytes of the longest form: how far past a cut a value can reach
        self.longest_bytes = max((len(f.encode("utf-8", errors="surrogatepass")) for f in forms),
                                 default=0)

    def __bool__(self) -> bool:
        return self._pattern is not None

    def text(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(MASK, text)

    def cut(self, text: str) -> str:
        """``text`` that was cut short: values masked, and a tail that begins a value too."""
        text = self.text(text)
        for value in self.values:
            # Only where the first character of ``value`` is can a tail that begins it
            # start; the first such place is the longest tail (linear, not quadratic).
            start = max(len(text) - len(value) + 1, 0)
            first = value[0]
            while (at := text.find(first, start)) != -1:
                if value.startswith(text[at:]):
                    return text[:at] + MASK
                start = at + 1
        return text

    def bytes(self, data: builtins.bytes) -> builtins.bytes:
        """``data`` (UTF-8, or not quite) with the values masked; other bytes kept."""
        if self._pattern is None or not data:
            return data
        text = data.decode("utf-8", errors="surrogateescape")
        return self.text(text).encode("utf-8", errors="surrogateescape")

    def deep(self, value: Any, depth: int = 0) -> Any:
        """``value`` with every string in it masked; other values as they are."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if depth > _DEPTH:
            return MASK
        if isinstance(value, dict):
            if value.get("type") == "string" and "truncated" in value:  # a debugger view
                return {**value, "value": self.cut(str(value.get("value", "")))}
            return {self.text(str(k)): self.deep(v, depth + 1) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.deep(v, depth + 1) for v in value)
        return value


NO_SECRETS = Redactor()
