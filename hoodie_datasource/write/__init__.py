"""The write primitives: tagging, bin-packing, file-group handles, rollback (``client/`` runs a whole write)."""
