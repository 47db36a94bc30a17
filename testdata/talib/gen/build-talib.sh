#!/usr/bin/env bash
# Build the talib native addon (and the TA-Lib C library it bundles) from source.
#
# Why this script exists: talib@2.0.5 on npm ships stale macOS (Mach-O arm64)
# objects and archives under src/lib/temp/csr and src/lib/lib; make sees them
# as up to date, so its own install script links them on Linux and fails with
# "archive has no index". Installs therefore run with ignore-scripts (.npmrc),
# and this script cleans, recompiles TA-Lib C with gcc, then builds the Node
# addon against the local Node headers (no download needed).
#
# The four TA-Lib sub-makes share one object directory, so they must run one
# after another (a top-level `make -j` races on the same .o files); each one
# is parallel inside.
set -euo pipefail
cd "$(dirname "$0")/node_modules/talib"
MK=src/lib/make/csr/linux/g++
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
fail() { echo "build-talib: $1 failed; last lines:" >&2; tail -40 "$LOG" >&2; exit 1; }
make -C "$MK" clean >"$LOG" 2>&1 || fail "make clean"
for d in ta_common ta_func ta_abstract ta_libc; do
  make -C "$MK/$d" -j"$(nproc)" >>"$LOG" 2>&1 || fail "make $d"
done
rm -rf build
node-gyp rebuild >>"$LOG" 2>&1 || fail "node-gyp rebuild"
node -e "const t=require('./build/Release/talib.node'); console.log('talib addon built (binding ' + t.version + '); TA-Lib C sources 0.6.0-dev')"
