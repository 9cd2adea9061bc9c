"""Hudi merge-on-read log files: ``log_format`` frames blocks, ``log_blocks`` reads and writes their contents."""
