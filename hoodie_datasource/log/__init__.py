"""Hudi merge-on-read log files: ``log_format`` frames blocks; ``data_block``, ``delete_block`` and
``command_block`` read and write their contents (``avro_codec`` is the Avro record codec)."""
