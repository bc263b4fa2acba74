"""Run history: what every run did, kept in one of three stores (local SQLite file,
the shared hub database, MongoDB) behind :class:`hub.history.base.HistoryStore`."""
