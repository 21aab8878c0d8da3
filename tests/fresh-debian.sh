#!/bin/bash
# The README's commands, exactly, on a bare Debian root: the proof that `make` and
# `make check` need nothing a fresh machine lacks. .ci/run calls it at each landing (as root:
# debootstrap and chroot need it); never `make check`:
#
#   sudo tests/fresh-debian.sh [--ci] [--keep] [--record] [DIRECTORY]
#
# 1. debootstrap --variant=minbase builds a minimal Debian root in DIRECTORY (default
#    build/fresh-debian) from the mirror and release this machine's apt is configured with;
# 2. inside it, as root and with an empty environment (no OPENBLAS_CORETYPE, no locale: what
#    a new machine has), it runs the README's bootstrap line, clones this repository's
#    committed HEAD, and runs `make` and `make check`;
# 3. with --ci it also runs `bash .ci/run` in a second fresh clone, as CI does (whose own
#    call of this script is skipped inside the root).
# It prints each step's wall time and the last line of `make check`, and writes the run's
# record (the commit, the machine, each step's seconds and status) to DIRECTORY/record.txt;
# --record also copies it to figures/fresh-debian/record.txt, from which
# tools/fresh-debian-table writes the README's table and the book its provenance row.
# Logs stay in DIRECTORY. --keep leaves the root in place (removed at the end otherwise; ~2.5 GB).
set -euo pipefail

run_ci=false keep=false record=false
while [ $# -gt 0 ]; do
  case "$1" in
    --ci) run_ci=true; shift ;;
    --keep) keep=true; shift ;;
    --record) record=true; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) echo "fresh-debian.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=$(realpath -m "${1:-$repo/build/fresh-debian}")
root=$work/root
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian.sh: run as root (debootstrap, chroot)" >&2; exit 2; }

# The configured mirror and release: the first Debian URI in apt's sources (deb822 or
# one-line format), the release from os-release.
mirror=$(sed -n 's/^URIs:[[:space:]]*\(http[^[:space:]]*debian\)[[:space:]]*$/\1/p' \
           /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb[[:space:]]\+\(http[^[:space:]]*debian\)[[:space:]].*/\1/p' \
                               /etc/apt/sources.list 2>/dev/null | head -1)
[ -n "$mirror" ] || {
  echo "fresh-debian.sh: no Debian mirror in apt's sources (/etc/apt/sources.list.d/*.sources," >&2
  echo "fresh-debian.sh: /etc/apt/sources.list): configure apt first; this script names none" >&2
  exit 2; }
. /etc/os-release
suite=${VERSION_CODENAME:-bookworm}

"$repo/tools/install-deps" --fresh-debian

mkdir -p "$work"
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
  if ! $keep && [ -d "$root" ]; then rm -rf --one-file-system "$root"; fi
  rm -rf "$work/origin.git"
}
trap cleanup EXIT

# What the clones take: this repository's committed HEAD as it is now, as CI clones main (a
# bare copy, so that commits made while the run goes on do not reach its second clone).
rm -rf "$work/origin.git"
git clone -q --bare "$repo" "$work/origin.git"

# The record: what was run, on what, then a line per step (seconds, status, name).
rec=$work/record.txt
{ echo "run: tests/fresh-debian.sh$($run_ci && echo ' --ci')"
  echo "commit: $(git -C "$work/origin.git" rev-parse --short=7 HEAD)"
  echo "debian: ${VERSION_ID:-?} ($suite)"
  "$repo/tools/machine-info"
  echo "started: $(date -u +%Y-%m-%dT%H:%MZ)"; } > "$rec"

timings=()
step() {   # step NAME LOG COMMAND...: run, log, time, record
  local name=$1 log=$2; shift 2
  local start=$SECONDS status=0
  echo "== $name (log: $log)"
  "$@" >"$log" 2>&1 || status=$?
  local seconds=$((SECONDS - start))
  timings+=("$(printf '%-34s %4d min %02d s  status %d' "$name" $((seconds / 60)) $((seconds % 60)) $status)")
  echo "   ${timings[-1]}"
  echo "step: $seconds $status $name" >> "$rec"
  if [ $status -ne 0 ]; then tail -30 "$log" >&2; return $status; fi
}

rm -rf --one-file-system "$root"
step "debootstrap --variant=minbase" "$work/debootstrap.log" \
  debootstrap --variant=minbase "$suite" "$root" "$mirror"

# The root gets the host's apt sources (the same mirror, with security updates) and name
# resolution; /dev, /proc and /sys as a booted machine has them (the tests write /dev/full).
if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
  rm -f "$root/etc/apt/sources.list"
  grep -l -i 'debian' /etc/apt/sources.list.d/*.sources | xargs -r cp -t "$root/etc/apt/sources.list.d/"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
for fs in dev dev/pts proc sys; do
  mount --bind "/$fs" "$root/$fs"; mounted+=("$root/$fs")
done
# The repository to clone: the bare copy of this one's committed HEAD made at the start.
mkdir -p "$root/mnt/origin"
mount --bind -o ro "$work/origin.git" "$root/mnt/origin"; mounted+=("$root/mnt/origin")

in_root() {   # a login shell of root in the new system, with nothing from this one (but the
              # mark that tells .ci/run not to start this script again inside it)
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TERM=dumb FRESH_DEBIAN_ROOT=1 /bin/bash -euo pipefail -c "$1"
}

# The README's commands, word for word (the bootstrap line, the clone, the two commands).
step "bootstrap: apt-get install make git" "$work/bootstrap.log" \
  in_root 'apt-get update && apt-get install -y make git'
step "git clone" "$work/clone.log" \
  in_root 'cd /root && git clone /mnt/origin transformer'
step "make" "$work/make.log" in_root 'cd /root/transformer && make'
step "make check" "$work/check.log" in_root 'cd /root/transformer && make check'
summary=$(grep -E '^[0-9]+%: Checks:' "$work/check.log" | tail -1)
echo "make check: $summary" >> "$rec"
if $run_ci; then
  step "bash .ci/run (a second clone)" "$work/ci.log" \
    in_root 'cd /root && git clone /mnt/origin ci && cd ci && bash .ci/run'
fi
echo "ended: $(date -u +%Y-%m-%dT%H:%MZ)" >> "$rec"
if $record; then
  mkdir -p "$repo/figures/fresh-debian" && cp "$rec" "$repo/figures/fresh-debian/record.txt"
fi

echo
echo "fresh-debian.sh: Debian $suite, $(nproc) cores, $(git -C "$work/origin.git" rev-parse --short=7 HEAD)"
printf '  %s\n' "${timings[@]}"
echo "  make check: $summary"
