"""What a save wrote: a file's or a folder's bytes and (st_dev, st_ino) identities, an open stream's growth."""

import os
import stat


def unknown():
    """A save's size or files when nothing says where it wrote."""
    return None


def measure(measure):
    try:
        value = measure()
    except Exception:
        return None
    return None if value is None else int(value)


def scan(path, since=None):
    """(bytes, {(st_dev, st_ino)}) of a file, or of a folder: the bytes of the files under it, and the
    folder, its subfolders and files (those modified at or after `since`); None if absent."""
    path = os.fspath(path)
    try:
        info = os.stat(path)
    except OSError:
        return None
    found = {(info.st_dev, info.st_ino)}
    if not stat.S_ISDIR(info.st_mode):
        return (info.st_size if stat.S_ISREG(info.st_mode) else None), found
    total = 0
    for folder, subfolders, names in os.walk(path):
        for name in subfolders + names:
            try:
                info = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            if since is None or info.st_mtime >= since:
                found.add((info.st_dev, info.st_ino))
                if stat.S_ISREG(info.st_mode):
                    total += info.st_size
    return total, found


def file_of_stream(stream):
    """{(st_dev, st_ino)} of an open file object's file; None for a stream without one (BytesIO)."""
    try:
        info = os.fstat(stream.fileno())
    except Exception:
        return None
    return {(info.st_dev, info.st_ino)}


def tell(stream):
    try:
        return stream.tell()
    except Exception:
        return None


def written_since(stream, start):
    end = tell(stream)
    return None if start is None or end is None else max(0, end - start)
