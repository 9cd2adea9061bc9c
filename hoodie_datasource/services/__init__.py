"""Table services: compaction, cleaning and archival, each taking a table and returning the table it left
(``service_run``); rollback, which writes need too, is ``write.rollback``."""
