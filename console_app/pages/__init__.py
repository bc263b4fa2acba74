"""The main window's pages; each takes a HubSession and asks for other screens via session.nav."""
