"""The hub's schema revisions, oldest first (``0001`` is the schema the hub made before
it had migrations). A revision never changes once released: a change is a new one."""
