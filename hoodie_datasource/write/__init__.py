"""The write primitives: record keys, routing to file groups, bin-packing, file-group handles, rollback (the index
that places records is ``index/``; ``client/`` runs a whole write)."""
