#!/usr/bin/env bash
# Regenerates the TA-Lib C reference fixtures in testdata/talib and
# strategy/ta/htsincos_table.go (make talib-fixtures).
# Needs node (20+), npm, gcc/g++, make, python3 and the Node headers; the npm
# registry must be reachable for the first `npm ci`. Not part of `make test`:
# the tests read the committed fixtures.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -f node_modules/talib/build/Release/talib.node ]; then
  npm ci
  bash build-talib.sh
fi
L=node_modules/talib/src/lib
gcc -O1 -I"$L/include" bounds.c -o bounds "$L/lib/libta_abstract_csr.a" "$L/lib/libta_func_csr.a" "$L/lib/libta_common_csr.a" -lm
./bounds > ../bounds.json
node fixtures.mjs ../bounds.json ..
node million.mjs ..
gcc -O1 htsincos.c -o htsincos -lm
./htsincos > ../../../strategy/ta/htsincos_table.go
gofmt -w ../../../strategy/ta/htsincos_table.go
