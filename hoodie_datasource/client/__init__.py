"""Write clients: a write session from start to commit, and the inline table services it runs after
(above ``services/``, which in turn uses the write primitives of ``write/``)."""
