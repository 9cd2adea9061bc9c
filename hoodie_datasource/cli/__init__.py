"""The ``hoodie`` command line: a table's configuration, timeline, files and statistics, its table services
(compaction, cleaning, rollback) and a check of the whole table, over ``HoodieTable`` and Hudi's procedures, with
no Spark. ``app`` holds the command group, ``inspect_commands`` the read-only commands, ``service_commands`` those
that change or check the table, ``context`` what they share, ``output`` how they print."""
