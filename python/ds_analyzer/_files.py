"""The hook's per-process record files: one whole line appended with one write."""

import os


def append_line(path, text):
    """Appends `text` (a line, newline included) to `path` with one O_APPEND write, so a reader never sees
    half of it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
