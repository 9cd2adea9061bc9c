"""Apache Hudi's SQL procedures (``CALL``), over the ``HoodieTable`` facade and so beside it, above the
table services: ``procedure`` (its arguments and result columns), ``call`` (run it on a table by path) and
``run_procedure`` (on a ``HoodieTable`` already open). The registry is
in ``registry``, a procedure's definition and argument binding in ``procedure``, the procedures in
``timeline_procedures``, ``commit_procedures``, ``stats_procedures``, ``fs_procedures`` and ``metadata_procedures``."""

from hoodie_datasource.procedures.registry import call, procedure, run_procedure

__all__ = ["call", "procedure", "run_procedure"]
