#!/usr/bin/env bash
# Builds release/ds-analyzer-<version>-linux-x64.tar.gz: node itself (the one
# running this script), the built CLI, its production dependencies and the
# Python hook, with bin/ds-analyzer as the launcher. A GPU server with python3
# but no node, compiler or network runs it after one `tar x` (docs/install.md).
# A tarball rather than a single executable: Node 20's SEA is experimental,
# takes one CommonJS file, and cannot carry koffi's or @napi-rs/canvas's native
# .node files without extracting them at run time (docs/install.md).
# Started from /work/shared/device/pack.sh, the packing proven on the GPU server.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd -P); cd "$top"

[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || { echo "make-release: builds linux-x64 only, on linux-x64 (this is $(uname -s)-$(uname -m)): its node and native modules are this machine's" >&2; exit 2; }
[ -d node_modules ] || { echo "make-release: node_modules is missing: run npm ci first" >&2; exit 2; }

version=$(node -p 'require("./package.json").version')
name="ds-analyzer-$version-linux-x64"
out="${DSA_RELEASE_DIR:-$top/release}"
node_bin=$(readlink -f "$(command -v node)")

[ "${DSA_RELEASE_SKIP_BUILD:-0}" = 1 ] || npm run build >/dev/null

t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
d="$t/$name"
mkdir -p "$d/bin" "$d/runtime" "$d/dist"
cp "$node_bin" "$d/runtime/node"
cp bin/ds-analyzer.js "$d/bin/"
cp scripts/release/launcher.sh "$d/bin/ds-analyzer"
chmod 755 "$d/bin/ds-analyzer" "$d/runtime/node"
cp -r dist/src "$d/dist/"
cp -r python package.json package-lock.json LICENSE "$d/"
find "$d/python" -name __pycache__ -prune -exec rm -rf {} +
sed -e "s/@VERSION@/$version/g" -e "s/@NODE_VERSION@/$(node --version)/g" scripts/release/INSTALL.md > "$d/INSTALL.md"
cp -r node_modules "$d/"
(cd "$d" && npm prune --omit=dev --offline --no-audit --no-fund >/dev/null 2>&1)
rm -f "$d/package-lock.json"
# koffi ships a prebuilt binding for every platform; this tarball is linux-x64 only.
k="$d/node_modules/koffi/build/koffi"
[ -d "$k" ] && find "$k" -mindepth 1 -maxdepth 1 ! -name linux_x64 -exec rm -rf {} +
# Sources and type declarations are not needed to run.
find "$d/node_modules" \( -name '*.d.ts' -o -name '*.d.cts' -o -name '*.d.mts' -o -name '*.map' \) -type f -delete

mkdir -p "$out"
# gzip's default level; the suite's test asks for level 1 (DSA_RELEASE_GZIP_LEVEL), half the CPU of the packing.
tar cf - --owner=0 --group=0 -C "$t" "$name" | gzip -"${DSA_RELEASE_GZIP_LEVEL:-6}" > "$out/$name.tar.gz"
echo "$out/$name.tar.gz $(du -k "$out/$name.tar.gz" | cut -f1) KiB"
