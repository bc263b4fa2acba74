"""The main window's pages, by name, as factories taking a :class:`HubSession`.

Each page lives in its own module, written separately. :func:`default_pages`
imports them by name and stands a placeholder in for any that cannot be imported
yet, so the shell runs (and is tested) whatever state the pages are in."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from console_app.session import HubSession

log = logging.getLogger(__name__)

PageFactory = Callable[[HubSession], QWidget]


@dataclass(frozen=True)
class PageSpec:
    name: str     # shown in the navigation, and the registry key
    module: str
    attr: str     # the page class, called as attr(session)


PAGE_SPECS = (
    PageSpec("Manage", "console_app.pages.manage", "ManagePage"),
    PageSpec("Scheduler", "console_app.pages.scheduler", "SchedulerPage"),
    PageSpec("History", "console_app.pages.history", "HistoryPage"),
    PageSpec("Metrics", "console_app.pages.metrics", "MetricsPage"),
    PageSpec("Secrets", "console_app.pages.secrets", "SecretsPage"),
)


class PlaceholderPage(QLabel):
    """Stands in for a page whose module is not there (yet)."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(f"<h3>{name}</h3><p>{why}</p>")
        self.setObjectName(f"placeholder-{name.lower()}")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)
        self.why = why


def load_attr(module: str, attr: str) -> tuple[object | None, str]:
    """``module.attr`` (dotted attr allowed), or None and why not.

    Only the module itself missing counts as 'not written yet'; an error inside
    an existing module is reported with its message, never raised into the GUI."""
    try:
        found: object = importlib.import_module(module)
        for part in attr.split("."):
            found = getattr(found, part)
    except ModuleNotFoundError as err:
        if err.name and module.startswith(err.name):
            return None, f"{module} is not part of this console yet."
        return None, f"{module} could not load: {err}"
    except AttributeError:
        return None, f"{module} has no {attr} yet."
    except Exception as err:  # a broken page must not take the shell down with it
        log.info("page module %s failed to import", module, exc_info=True)
        return None, f"{module} could not load: {type(err).__name__}: {err}"
    return found, ""


def placeholder_factory(name: str, why: str) -> PageFactory:
    return lambda _session: PlaceholderPage(name, why)


def default_pages() -> dict[str, PageFactory]:
    pages: dict[str, PageFactory] = {}
    for spec in PAGE_SPECS:
        found, why = load_attr(spec.module, spec.attr)
        pages[spec.name] = (found if callable(found)  # type: ignore[assignment]
                            else placeholder_factory(spec.name, why))
    return pages
