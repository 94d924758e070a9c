#!/usr/bin/env bash
# What a tool cell runs (issue 25, item 11): valgrind's own executable, never a #!/bin/sh wrapper (Debian's
# /usr/bin/valgrind adds LD_LIBRARY_PATH and GLIBCXX_FORCE_NEW for the measured process, then execs valgrind.bin),
# recorded in the db with its arguments and the environment entries a tool or the loader reads (tool_exec); a
# MLK_VALGRIND that is a script without its binary is an input error naming it.
source "$(dirname "$0")/lib.sh"
need_sqlite
command -v valgrind > /dev/null || { echo "SKIP: valgrind missing (Debian package valgrind)"; exit 77; }
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
real=$(/usr/bin/python3 -c 'import os, shutil; p = os.path.realpath(shutil.which("valgrind")); print(p if open(p, "rb").read(4) == b"\x7fELF" else p + ".bin")')
cat > "$work/t.yaml" <<'YAML'
name: tool-exec
engine: ref
model: {generate: mlp, mlp_hidden: 16}
pipeline: [compile_model, create_request, infer, release_request, release_compiled]
tool: memcheck
tool_iterations: 2
YAML

# A valgrind in PATH that is a wrapper script (as Debian's is), its binary beside it: the script must never run.
mkdir "$work/vg"
printf '#!/bin/sh\ntouch "%s/wrapper-ran"\nexport GLIBCXX_FORCE_NEW=1 LD_LIBRARY_PATH=/usr/lib/debug\nexec "$0.bin" "$@"\n' "$work" > "$work/vg/valgrind"
chmod +x "$work/vg/valgrind"
ln -s "$real" "$work/vg/valgrind.bin"
db="$work/t.db"
set +e
PATH="$work/vg:$PATH" "$bin/memleak-run" --db "$db" --quiet "$work/t.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "a memcheck cell passes" eq "$code" 0
[ "$code" = 0 ] || sed 's/^/    /' "$work/out.txt" | tail -5
check "the wrapper script never ran" test ! -e "$work/wrapper-ran"
check "tool_exec: the program is the binary beside the script" eq "$(q 'SELECT program FROM tool_exec')" "$work/vg/valgrind.bin"
check "tool_exec: the arguments" eq "$(q "SELECT instr(args, '--tool=memcheck') > 0 AND instr(args, '--xml=yes') > 0 FROM tool_exec")" 1
check "tool_exec: the keep library preloaded" eq "$(q "SELECT env LIKE '%LD_PRELOAD=%libmemleak_keep.so%' FROM tool_exec")" 1
check "tool_exec: no GLIBCXX_FORCE_NEW or LD_LIBRARY_PATH added" eq "$(q "SELECT instr(env, 'GLIBCXX_FORCE_NEW') + instr(env, 'LD_LIBRARY_PATH') FROM tool_exec")" 0
check "tool_exec: nothing else of the environment" eq "$(q "SELECT instr(env, 'PATH=') + instr(env, 'HOME=') FROM tool_exec")" 0
# The user's own LD_LIBRARY_PATH reaches the worker as any cell's would, and is recorded.
set +e
LD_LIBRARY_PATH=/nonexistent-mlk "$bin/memleak-run" --db "$db" --quiet "$work/t.yaml" > "$work/out.txt" 2>&1
set -e
check "tool_exec: the program is valgrind's binary" eq "$(q 'SELECT program FROM tool_exec ORDER BY cell_id DESC LIMIT 1')" "$real"
check "tool_exec: the user's LD_LIBRARY_PATH recorded" eq "$(q "SELECT instr(env, 'LD_LIBRARY_PATH=/nonexistent-mlk') > 0 FROM tool_exec ORDER BY cell_id DESC LIMIT 1")" 1

# A wrapper without its binary, through MLK_VALGRIND: exit 2 naming it, nothing run.
printf '#!/bin/sh\nexec valgrind "$@"\n' > "$work/vg/other"
chmod +x "$work/vg/other"
set +e
MLK_VALGRIND="$work/vg/other" "$bin/memleak-run" --db "$db" --quiet --dry-run "$work/t.yaml" > "$work/out.txt" 2>&1
code=$?
set -e
check "a script without its binary: exit 2" eq "$code" 2
check "a script without its binary: named" grep -q "valgrind $work/vg/other is not an executable file, but a script" "$work/out.txt"
finish
