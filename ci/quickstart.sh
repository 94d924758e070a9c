#!/usr/bin/env bash
# Installs dependencies, builds memleak and runs scenarios/quickstart.yaml, then says where the results are.
# It must never need anything installed by hand: setup.sh provides every package.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/ci/setup.sh"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$root/build" -j "$(nproc)"

out="${MLK_QUICKSTART_DIR:-$root/build/quickstart}"
mkdir -p "$out"
db="$out/memleak.db"
set +e
"$root/build/bin/memleak-run" --db "$db" "$root/scenarios/quickstart.yaml"
code=$?
set -e
cat <<MSG

Results are in $db (SQLite). For example:
  sqlite3 -header -column $db "SELECT idx, axes, status, detail FROM cells ORDER BY id DESC LIMIT 8"
  sqlite3 -header -column $db "SELECT step, count(*), max(vm_hwm_kib) FROM samples GROUP BY step"
Try the planted faults: build/bin/memleak-run --db $db scenarios/leak-demo.yaml
MSG
exit "$code"
