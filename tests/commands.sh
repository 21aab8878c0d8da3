#!/bin/sh
# Every program that the build and the tests run comes from Debian's essential packages or
# from one that tools/install-deps installs (tools/check-commands). Then the check is shown
# to fail: a planted shell test and a planted test in C that call pgrep (procps, which
# neither is) must each be named, and the same tests calling sed (essential) must pass.
set -eu
cd "$(dirname "$0")/.."
tools/check-commands > build/commands.out 2>&1 || { cat build/commands.out >&2; exit 1; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/tests"
plant() {   # plant PROGRAM: a shell test and a C test that run it
  printf '#!/bin/sh\nset -eu\nn=$(%s -c transformer || true)\necho "$n"\n' "$1" > "$dir/tests/planted.sh"
  printf 'int planted(void)\n{\n    return system("%s -c transformer > /dev/null");\n}\n' "$1" \
    > "$dir/tests/planted.c"
}
plant sed
tools/check-commands "$dir" > "$dir/clean.out" 2>&1 || {
  echo "commands.sh: the check refused a planted test that calls sed:" >&2; cat "$dir/clean.out" >&2; exit 1; }
plant pgrep
if tools/check-commands "$dir" > "$dir/planted.out" 2>&1; then
  echo "commands.sh: the check passed a planted test that calls pgrep" >&2; exit 1
fi
grep -q '^check-commands: tests/planted.sh:3: pgrep: ' "$dir/planted.out" \
  && grep -q '^check-commands: tests/planted.c:3: pgrep: ' "$dir/planted.out" || {
  echo "commands.sh: the check failed on the plant but did not name both planted lines:" >&2
  cat "$dir/planted.out" >&2; exit 1; }
echo "commands: $(sed 's/^check-commands: //' build/commands.out); a planted pgrep is caught" \
     "($(sed -n 's/^check-commands: tests\/planted.sh:3: pgrep: //p' "$dir/planted.out"))"
