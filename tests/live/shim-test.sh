#!/bin/sh
# The WASI shim of the live edition (tools/live/wasi.js), run by node on a small C program
# compiled for wasm32-wasi: arguments, both output streams, exit status, clocks, random
# bytes, the in-memory files (given ones read-only, new ones written and read back) must
# come through as the program expects.
#   tests/live/shim-test.sh [--self-test]
# --self-test plants faults in a copy of the shim and shows that this test fails on each.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
clang --target=wasm32-wasi -O2 -std=c11 -Wall -o "$W/shim.wasm" "$HERE/shim-test.c"
printf 'hello from a file\n' > "$W/hello.txt"

# run SHIM_DIR: 0 when the program's outputs through that copy of the shim are right.
run() {
  status=0
  node "$1/run.js" --file /data/hello.txt="$W/hello.txt" "$W/shim.wasm" one "zwei drei" \
    > "$W/out" 2> "$W/err" || status=$?
  cat > "$W/expected" <<'END'
argument 1: one
argument 2: zwei drei
monotonic: yes
realtime after 2020: yes
random bytes: yes
file: hello from a file
missing file: refused
writing: refused
new file: a,b
1,2
END
  grep -v ExperimentalWarning "$W/err" | grep -v trace-warnings > "$W/err2" || true
  [ "$status" = 3 ] && cmp -s "$W/out" "$W/expected" &&
    [ "$(cat "$W/err2")" = "to standard error: ä" ]
}

if [ "${1:-}" != "--self-test" ]; then
  run "$ROOT/tools/live" || { echo "shim-test: FAIL"; diff "$W/expected" "$W/out"; exit 1; }
  echo "shim-test: ok"
  exit 0
fi
# Each fault: a sed expression applied to a copy of wasi.js.
for fault in 's/this.stderr += text/this.stdout += text/' \
             's/return e.status;/return 0;/' \
             's/if (oflags !== 0) return ERRNO.ROFS;//' \
             's/this.bytes().set(chunk, at);//' \
             's/getRandomValues(this.bytes().subarray(at, at + length))/length/' \
             's/if (oflags === 9 \&\& !this.given.has(name))/if (oflags === 9)/' \
             's/grown.set(file.data);//'; do
  rm -rf "$W/live"; cp -r "$ROOT/tools/live" "$W/live"
  sed -i "$fault" "$W/live/wasi.js"
  cmp -s "$ROOT/tools/live/wasi.js" "$W/live/wasi.js" && { echo "fault not planted: $fault"; exit 1; }
  if run "$W/live"; then echo "self-test: fault not caught: $fault"; exit 1; fi
done
run "$ROOT/tools/live" || { echo "self-test: the clean shim fails"; exit 1; }
echo "shim-test self-test: ok (7 faults caught)"
