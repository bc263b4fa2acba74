"""A real headless Chromium for browser tests: Debian's ``/usr/bin/chromium``,
driven by Playwright (the PyPI wheel carries its own driver; it never downloads a
browser here, so ``playwright install`` is never run).

``make setup`` installs Chromium with apt. A missing browser fails the test with
a message saying so; it is never a silent skip."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, sync_playwright

CHROMIUM = Path(os.environ.get("WEBHUB_TEST_CHROMIUM", "/usr/bin/chromium"))

# As root on a machine with no display and a closed network. Playwright adds
# --headless and a fresh --user-data-dir of its own (removed when it closes).
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

LAUNCH_TIMEOUT_MS = 30_000
ACTION_TIMEOUT_MS = 10_000      # a click, a fill, a wait for an element or a URL
NAVIGATION_TIMEOUT_MS = 15_000  # a page load, redirects included


@contextmanager
def chromium() -> Iterator[Browser]:
    """One headless Chromium, always closed afterwards."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(f"Chromium is not installed at {CHROMIUM}: the browser tests need it. "
                    "Run `make setup` (it runs `apt-get install chromium`), or point "
                    "WEBHUB_TEST_CHROMIUM at a Chromium binary.", pytrace=False)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=list(CHROMIUM_ARGS),
            timeout=LAUNCH_TIMEOUT_MS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def fresh_context(browser: Browser) -> Iterator[BrowserContext]:
    """A new cookie jar (like a private window) with bounded waits, closed afterwards."""
    context = browser.new_context()
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
    try:
        yield context
    finally:
        context.close()
