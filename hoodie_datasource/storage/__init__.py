"""Where a table's files live: one ``Storage`` per table base URI, a backend per URI scheme.

``storage.storage`` defines the interface every module above uses (paths relative to the table's
base), ``storage.local`` and ``storage.object_store`` implement it, ``storage.uri`` parses table URIs,
``storage.options`` resolves credentials and endpoints, and ``storage.registry`` opens (and caches)
the storage for a URI.
"""
