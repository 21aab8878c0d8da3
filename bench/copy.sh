#!/bin/bash
# The copy task, C against PyTorch, side by side: `./transformer copy` and
# bench/copy_pytorch.py (the Annotated Transformer's code, restated) run the same recipe
# in turns, R times each, and a table gives the medians and the ratio C/PyTorch.
# Run by hand from anywhere, never by `make check`. See bench/README.md.
#
#   bench/copy.sh [--repeats R] [--threads T] [--reduced] [--binary PATH] [--seed N]
#                 [--omp-wait-policy P] [--unset-openblas-env] [--out DIR] [-- FLAGS...]
#
#   --repeats R            runs of each side (default 3). Repeat r runs C first when r is
#                          odd and PyTorch first when r is even.
#   --threads T            threads on both sides (default 2, the machine's cores):
#                          OPENBLAS_NUM_THREADS=T for both processes (both call the same
#                          pthread OpenBLAS for their matrix products) and
#                          torch.set_num_threads(T) (OpenMP) in PyTorch.
#   --omp-wait-policy P    OMP_WAIT_POLICY for both processes (default PASSIVE; "unset"
#                          removes it, and libgomp's default applies). Only PyTorch uses
#                          OpenMP. Under libgomp's default, idle OpenMP workers spin
#                          before they sleep, and they take the cores from OpenBLAS's
#                          workers: 2+2 threads on 2 cores then train about 3 times
#                          slower than 1 thread (see README).
#   --unset-openblas-env   run both sides without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
#                          (the default leaves them as they are in the environment).
#   --reduced              the demo's configuration: --d-model 64 --d-ff 256 --heads 4
#                          --epochs 30 (further FLAGS after -- still apply).
#   --binary PATH          the C trainer (default: ./transformer of this repository). It is
#                          copied into the output directory first, so that a rebuild
#                          during the benchmark does not change it.
#   --seed N               the seed of both sides (default 1): torch.manual_seed for
#                          PyTorch, `transformer copy --seed` for C.
#   --out DIR              where to keep every run's output (default: a new /tmp dir).
#   -- FLAGS...            copy flags for both sides: --epochs --batches --batch-size
#                          --layers --d-model --d-ff --heads.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
python=/usr/bin/python3
repeats=3 threads=2 policy=PASSIVE unset_openblas=0 binary=$root/transformer seed=1 out=""
flags=()

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }
need() { [[ $# -ge 2 && -n $2 ]] || { echo "copy.sh: $1 needs a value" >&2; exit 2; }; }
while [[ $# -gt 0 ]]; do
    case $1 in
        --repeats) need "$@"; repeats=$2; shift 2 ;;
        --threads) need "$@"; threads=$2; shift 2 ;;
        --omp-wait-policy) need "$@"; policy=$2; shift 2 ;;
        --unset-openblas-env) unset_openblas=1; shift ;;
        --reduced) flags+=(--d-model 64 --d-ff 256 --heads 4 --epochs 30); shift ;;
        --binary) need "$@"; binary=$2; shift 2 ;;
        --seed) need "$@"; seed=$2; shift 2 ;;
        --out) need "$@"; out=$2; shift 2 ;;
        -h|--help) usage 0 ;;
        --) shift; flags+=("$@"); break ;;
        *) echo "copy.sh: unknown option '$1' (copy flags go after --)" >&2; usage 2 >&2 ;;
    esac
done
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "copy.sh: --repeats must be a positive integer" >&2; exit 2; }
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "copy.sh: --threads must be a positive integer" >&2; exit 2; }
[[ -x $binary ]] || { echo "copy.sh: no trainer at $binary (make build, or --binary PATH)" >&2; exit 2; }
[[ -x $python ]] || { echo "copy.sh: $python not found (Debian python3 with python3-torch)" >&2; exit 2; }

if [[ -z $out ]]; then out=$(mktemp -d /tmp/copy-bench.XXXXXX); else mkdir -p "$out"; fi
cp "$binary" "$out/transformer"

# The environment of both commands, alike.
# env reads its -u options before the assignments.
envargs=()
((unset_openblas)) && envargs+=(-u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
[[ $policy == unset ]] && envargs+=(-u OMP_WAIT_POLICY)
envargs+=(OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads")
[[ $policy == unset ]] || envargs+=(OMP_WAIT_POLICY="$policy")

now() { date +%s.%N; }
run_side() {   # side repeat: run one side, keep its output and its wall time
    local side=$1 r=$2 t0 t1 status=0
    local log=$out/$side-$r.txt
    t0=$(now)
    if [[ $side == c ]]; then
        env "${envargs[@]}" "$out/transformer" copy --seed "$seed" "${flags[@]}" >"$log" 2>"$out/$side-$r.err" || status=$?
    else
        env "${envargs[@]}" "$python" "$here/copy_pytorch.py" --threads "$threads" --seed "$seed" \
            "${flags[@]}" >"$log" 2>"$out/$side-$r.err" || status=$?
    fi
    t1=$(now)
    echo "$status $(awk "BEGIN { print $t1 - $t0 }")" >"$out/$side-$r.wall"
    # status 1 means "not every decoding exact": a result, not a failure
    if ((status > 1)) || ! grep -q '^evaluation loss' "$log"; then
        echo "copy.sh: the $side run $r failed (status $status); see $out/$side-$r.err" >&2
        cat "$out/$side-$r.err" >&2
        exit 1
    fi
    printf '  %-7s run %d: %s  (%s s wall)\n' "$([[ $side == c ]] && echo C || echo PyTorch)" "$r" \
        "$(grep '^evaluation loss' "$log")" "$(printf '%.1f' "$(cut -d' ' -f2 "$out/$side-$r.wall")")"
}

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
commit=$(git -C "$root" log -1 --format=%h 2>/dev/null || echo '?')
git -C "$root" diff --quiet -- book tangled 2>/dev/null || commit+=" with uncommitted edits in book/ or tangled/"
built=$(date -u -r "$binary" '+%Y-%m-%d %H:%M UTC')
torch_version=$("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo '?')
openblas=$(dpkg-query -W -f='${Package} ${Version}' libopenblas0-pthread 2>/dev/null || echo '?')
if ((unset_openblas)); then openblas_env=unset
else openblas_env="as set (${OPENBLAS_CORETYPE:-unset}/${OPENBLAS_L2_SIZE:-unset})"; fi
{
    echo "copy task benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "  machine: $(nproc) cores, $cpu, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "  C: $binary (file dated $built, sha256 $(sha256sum "$binary" | cut -c1-12);" \
         "repository at $commit)"
    echo "  PyTorch: $torch_version, seed $seed"
    echo "  OpenBLAS: $openblas (both sides)"
    echo "  threads: $threads (OPENBLAS_NUM_THREADS and OMP_NUM_THREADS both sides," \
         "torch.set_num_threads($threads))"
    echo "  OMP_WAIT_POLICY: $policy; OPENBLAS_CORETYPE/L2_SIZE: $openblas_env"
    echo "  flags: ${flags[*]:-(the full recipe)}"
    echo "  repeats: $repeats; outputs in $out"
    awk '$1 > 0.5 { print "  warning: load average " $1 " before the first run:" \
                          " the timings share the cores" }' /proc/loadavg
} | tee "$out/header.txt"

for ((r = 1; r <= repeats; r++)); do
    if ((r % 2)); then run_side c "$r"; run_side py "$r"; else run_side py "$r"; run_side c "$r"; fi
done
echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/header.txt"

"$python" - "$out" "$repeats" "${flags[@]}" <<'EOF' | tee "$out/summary.txt"
import re, statistics, sys

out, repeats, flags = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
batch_size = 80
for i, f in enumerate(flags[:-1]):
    if f == "--batch-size":
        batch_size = int(flags[i + 1])
LEN = 10

def parse(side, r):
    text = open("%s/%s-%d.txt" % (out, side, r)).read()
    status, wall = open("%s/%s-%d.wall" % (out, side, r)).read().split()
    epochs = re.findall(r"^epoch \d+  .*  ([0-9.]+) s$", text, re.M)
    m = re.search(r"^evaluation loss (\S+) after (\d+) steps in ([0-9.]+) s$", text, re.M)
    lines = re.findall(r"^  source (.*?) decoded (.*?) (exact|DIFFERENT)$", text, re.M)
    train = float(epochs[-1])   # seconds from the start of training to the last epoch's end
    steps = int(m.group(2))
    return dict(train=train, wall=float(wall), steps=steps, loss=float(m.group(1)),
                rate=steps * batch_size * (LEN - 1) / train,   # the C progress line's rate
                exact=sum(l[2] == "exact" for l in lines), n=len(lines),
                wrong=[(" ".join(l[0].split()), " ".join(l[1].split()))
                       for l in lines if l[2] != "exact"])

runs = {s: [parse(s, r) for r in range(1, repeats + 1)] for s in ("c", "py")}
names = {"c": "C", "py": "PyTorch"}
med = lambda s, k: statistics.median(x[k] for x in runs[s])

print()
print("per run (train s: start of training to the end of the last epoch; wall s: the whole process)")
print("| run | side | train s | wall s | target tokens/s | eval loss | exact |")
print("|---|---|---|---|---|---|---|")
for r in range(repeats):
    for s in ("c", "py"):
        x = runs[s][r]
        print("| %d | %s | %.1f | %.1f | %.0f | %.4f | %d/%d |"
              % (r + 1, names[s], x["train"], x["wall"], x["rate"], x["loss"], x["exact"], x["n"]))
print()
print("medians of %d runs (tokens/s = steps x batch %d x %d target tokens / train s)"
      % (repeats, batch_size, LEN - 1))
print("| side | train s | wall s | target tokens/s | eval loss (median; all) | runs all exact | sequences exact |")
print("|---|---|---|---|---|---|---|")
for s in ("c", "py"):
    print("| %s | %.1f | %.1f | %.0f | %.4f; %s | %d/%d | %d/%d |" % (
        names[s], med(s, "train"), med(s, "wall"), med(s, "rate"), med(s, "loss"),
        " ".join("%.4f" % x["loss"] for x in runs[s]),
        sum(x["exact"] == x["n"] for x in runs[s]), repeats,
        sum(x["exact"] for x in runs[s]), sum(x["n"] for x in runs[s])))
print("| C/PyTorch | %.2f | %.2f | %.2f | | | |" % (
    med("c", "train") / med("py", "train"), med("c", "wall") / med("py", "wall"),
    med("c", "rate") / med("py", "rate")))
print()
print("tokens/s ratio C/PyTorch: %.2f (> 1: C is faster)" % (med("c", "rate") / med("py", "rate")))
for s in ("c", "py"):
    for r, x in enumerate(runs[s]):
        for src, dec in x["wrong"]:
            print("%s run %d: source %s decoded %s" % (names[s], r + 1, src, dec))
EOF
