#!/bin/sh
# ds-analyzer's launcher in a release tarball (docs/install.md): runs the bundled
# node on the bundled CLI, so the machine needs neither node nor npm. It
# follows its own symlinks first, so a link such as
# /usr/local/bin/ds-analyzer -> /opt/ds-analyzer/bin/ds-analyzer still finds
# the files beside the real script. POSIX sh only: GPU servers' /bin/sh is dash.
self=$0
while [ -L "$self" ]; do
  link=$(readlink "$self")
  case $link in
    /*) self=$link ;;
    *) self=$(dirname "$self")/$link ;;
  esac
done
root=$(cd "$(dirname "$self")/.." && pwd -P) || exit 2
exec "$root/runtime/node" "$root/bin/ds-analyzer.js" "$@"
