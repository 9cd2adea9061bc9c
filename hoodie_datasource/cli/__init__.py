"""The ``hoodie`` command line: a table's configuration, timeline, files and statistics, its table services
(compaction, clustering, cleaning, rollback, savepoints and restore) and a check of the whole table, over
``HoodieTable`` and Hudi's procedures, with no Spark. ``app`` holds the command group, ``inspect_commands`` the
read-only commands, ``service_commands``, ``clustering_commands`` and ``savepoint_commands`` those that change or
check the table (``plan_runs`` runs a service's plans), ``context`` what they share, ``output`` how they print."""
