"""The commit timeline.

Every action on a table is an *instant*, identified by its (requested) time and written as up to
three files in ``.hoodie/`` (table version 6) or ``.hoodie/timeline/`` (version 8+)::

    T.commit.requested   ->   T.inflight   ->   T.commit            (COW write)
    T.deltacommit.requested -> T.deltacommit.inflight -> T.deltacommit  (MOR write)

Only the completed file (the last one, created atomically and never overwritten) marks success;
readers see only completed instants, and a writer that finds a requested/inflight instant left
by a dead writer rolls it back before starting its own.
"""
