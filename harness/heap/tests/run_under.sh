#!/bin/sh
# run_under.sh: runs a heap-shim test program with libmemleak_heap.so preloaded before the named allocator.
# It must never let a test pass when the allocator asked for is not the one running: it skips (77) instead.
# usage: run_under.sh glibc|jemalloc|tcmalloc|mimalloc SHIM.so PROGRAM [ARGS...]
set -u
alloc=$1 shim=$2
shift 2
libdir=/usr/lib/x86_64-linux-gnu
case "$alloc" in
  glibc) lib=libc.so.6 preload=$shim ;;
  jemalloc) lib=$libdir/libjemalloc.so.2 ;;
  tcmalloc) lib=$libdir/libtcmalloc_minimal.so.4 ;;
  mimalloc) lib=$libdir/libmimalloc.so.2 ;;
  *) echo "run_under.sh: unknown allocator '$alloc'" >&2; exit 2 ;;
esac
if [ "$alloc" != glibc ]; then
  if [ ! -e "$lib" ]; then
    echo "SKIP: $alloc not installed ($lib missing)"
    exit 77
  fi
  preload="$shim $lib"
fi
[ -e "$shim" ] || { echo "run_under.sh: no shim at $shim" >&2; exit 2; }

# The shim only writes to stderr when something is wrong (an allocator function missing, the shim not
# first): any such note fails the test.
err=$(mktemp) || exit 2
LD_PRELOAD="$preload" MLK_HEAP_ALLOCATOR="$alloc" MLK_HEAP_ALLOCATOR_LIB="$lib" "$@" 2>"$err"
rc=$?
cat "$err" >&2
if grep -q "memleak_heap: note" "$err"; then
  echo "run_under.sh: the shim reported a problem under $alloc" >&2
  [ "$rc" -eq 0 ] && rc=1
fi
rm -f "$err"
exit "$rc"
