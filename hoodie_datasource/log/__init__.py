"""Merge-on-read log files: block framing and block contents."""
