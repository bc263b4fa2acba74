"""The console's shell: the connect dialog, the main window around the pages, the
status bar, the connection monitor, the theme. Pages and other windows plug in
through registries (:mod:`console_app.shell.pages`, :mod:`console_app.shell.screens`)."""
