"""Qt adapter models: thin QAbstractItemModel subclasses over plain-Python state."""
