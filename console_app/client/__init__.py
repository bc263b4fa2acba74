"""Plain-Python talk to a hub over HTTP: no Qt here, so it is testable alone."""
