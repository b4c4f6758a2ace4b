"""One line on the job's stderr, ds-analyzer's prefix: the checkpoint layer's only output besides its events."""

import sys

_warned = set()


def warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        say(message)


def say(message):
    sys.stderr.write(f"ds-analyzer: {message}\n")
