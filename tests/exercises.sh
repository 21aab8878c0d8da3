#!/bin/bash
# The book's exercises that need the repository, as commands and as checks.
#   tests/exercises.sh run NAME     run one exercise (make exercise-NAME calls this)
#   tests/exercises.sh check        run the quick ones, compare with the expectations below
#   tests/exercises.sh check-slow   the same for the slow ones (minutes each)
#   tests/exercises.sh list         the exercises, quick or slow, and what each checks
#   tests/exercises.sh record NAME  run one and keep its output in figures/exercises/NAME.txt
# Each expectation is a literal that the exercise's output must contain and that the
# exercise's solution in book/solutions.nw must contain too (in the book's spelling, after
# the second bar, if it differs): the solution and the check read the same table, so they
# cannot drift apart. Where the solution prints a number as a macro \ex... (after the second
# bar), tools/numbers/exercises.sh reads the number from the literal here: the table is the
# one place where it is typed. Numbers of the recorded Multi30k run are read from
# figures/multi30k/ by both, and timings from the outputs that `record` keeps in
# figures/exercises/ (see its README.md). Scratch files go to build/exercises/ (SCRATCH).
set -euo pipefail
# The makes run here build copies of the repository on their own: they must not inherit the
# calling make's flags (.ci/run exports MAKEFLAGS=-j2), whose jobserver they cannot use and
# whose warning about it would land in the output the checks read.
unset MAKEFLAGS MFLAGS MAKELEVEL
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$ROOT/transformer
D=$ROOT/data/multi30k
SCRATCH=$ROOT/build/exercises

# name | literal in the output | the same in book/solutions.nw (if spelled differently)
EXPECTATIONS=$(cat <<'END'
intro-tangle|unexpected root: <<Grow the table of views if it is full>>|an unexpected root
intro-rebuild|objects recompiled: 21|all the object files but those of
intro-rebuild|objects recompiled after a change of prose: 0|no object is rebuilt
intro-layer|encoder layer 3152384|\archEncoderLayer
intro-layer|decoder layer 4204032|\archDecoderLayer
intro-layer|feed-forward 2099712|\archFeedForward
rng-first-value|0.630310178|
rng-first-value|0.481566668|
rng-first-value|0.727008045|
normal-moments|mean within 0.005: yes|$\pm 0.005$
normal-moments|variance within 0.007: yes|$1 \pm 0.007$
mask-count|figures/mask-subsequent.dat 210|210
mask-count|figures/mask-batch-1.dat 36|36
mask-count|figures/mask-batch-2.dat 30|$15 + 15 = 30$
mask-count|figures/mask-batch-3.dat 30|$15 + 15 = 30$
cli-exit-status|statuses 2 2 2|status 2
cli-atoi|refused (status 2): [12abc] [abc] [] [1e3] [99999999999999999999] [-5]|[[-5]]
cli-atoi|accepted (status 0): [+2] [ 3]|[[+2]]
pe-values|0.157827 0.987467|$\mathit{PE}_{1,4} = \sin 0.15849 = 0.157827$
pe-values|0.157827 0.987467|$\mathit{PE}_{1,5} = \cos 0.15849 = 0.987467$
attention-scale|mean 0.09 variance 63.8|a mean of 0.09 and a variance of 63.8
attention-temperature|d_k 16, tau 1: 0.75; tau 4: 1.93|\exTempSmallScaled
attention-temperature|d_k 256, tau 1: 0.17; tau 16: 1.92|\exTempLargeScaled
model-count|parameters 14731787|give \exModelParameters
model-activations|activations 45522560 floats|\exModelActivations{} floats
gradcheck-run|largest e of the model: encoder.layers.0.|the encoder's first
gradcheck-bug|softmax: FAILED|[[softmax]] fails
gradcheck-bug|attention: FAILED|[[attention]]
gradcheck-bug|linear: passed|do not use the softmax still pass
gelu|chapters 6, generated files 9|\exGeluChapters{} chapters
gelu|feed-forward-gelu: passed|[[feed-forward-gelu]] passes
gelu|GELU model, resumed from its checkpoint: identical|checkpoint bit for bit
gelu|config.activation is gelu in the checkpoint but relu in this run|
gelu|a checkpoint of the program without the patch: resumed|the patch resumes
gelu|the shipped model: the same translations|the shipped model translates as before
st-header|decoder.layers.0.feed_forward.w_1.bias|
st-header|data start at byte 19880|$8 + 19\,872 = 19\,880$
st-corrupt|data_offsets outside the data (truncated file?)|
rate-peak|4000 0.000698771 0.000247053 0.000988212|6.99\cdot 10^{-4}$ at step 4000
rate-peak|8000 0.000494106 0.000494106 0.000698771|4.94\cdot 10^{-4}$ at step 8000
rate-copy|last line: 400 0.00110485 0.00220971|[[400 0.00110485 0.00220971]]
rate-copy|legend 1: '$f = 0.5$'|$f = 0.5$ and $f = 1$
rate-copy|legend 2: '$f = 1$'|$f = 0.5$ and $f = 1$
rate-copy|under the chart: transformer figure-data lr --curve d=512,f=0.5,w=400|the command that printed the
copy-start|copied exactly: 0 of 8|none of the eight
copy-small|d_model 32: all eight: yes|suffice for an exact copy
copy-small|d_model 16: all eight: no, at most one: yes|$d_\mathrm{model} = 16$ copies at most one
copy-small|d_model 8: all eight: no, at most one: yes|$d_\mathrm{model} = 8$ at most one
copy-reverse|copied exactly: 8 of 8|reverses all eight examples
ckpt-resume|2 threads: identical|prints [[identical]]
ckpt-resume|1 thread for the resumed part: differ|the files differ
text-amp|identical: 28984 of 29000 lines (99.945%)|\texttt{\exTextAmpSummary}
text-amp|patched: identical: 29000 of 29000 lines (100.000%)|is reproduced: \exTextAmpPatched{} of
text-roundtrip|lines that differ: 1|One line differs
text-roundtrip|Rock ' n ' roll at the 1990 's party .|
text-unknown|validation tokens 13308|\exUnknownTokens{} tokens
text-unknown|min-freq 1: 10214 entries, 168 unknown|(\exUnknownEntriesOne{} entries) \exUnknownOne{} of them
text-unknown|min-freq 2: 5920 entries, 274 unknown|(\exUnknownEntriesTwo{}
text-unknown|min-freq 3: 4567 entries, 351 unknown|(\exUnknownEntriesThree{} entries) \exUnknownThree{}
text-nbsp|de: 12,500 Euro|German gives \texttt{12,500 Euro}
text-nbsp|en: 12.500 Euro|English \texttt{12.500 Euro}
text-nbsp|plain space: 12 500 Euro|\texttt{12 500 Euro}
text-subwords|subwords 2000: 1986 tokens, 1.370 pieces a token, 80.6% whole|\exSubwordsTokensTwo{} tokens, \exSubwordsPiecesTwo{} pieces
text-subwords|subwords 8000: 7722 tokens, 1.104 pieces a token, 93.4% whole|\exSubwordsTokensEight{} tokens, \exSubwordsPiecesEight{} pieces and
text-subwords|subwords 16000: 14964 tokens, 1.045 pieces a token, 96.8% whole|\exSubwordsTokensSixteen{} tokens, \exSubwordsPiecesSixteen{} pieces
text-subwords|fünf leute in win@@ ter@@ jack@@ en mit schnee@@ mo@@ bil@@ en .|
text-subwords|fünf leute in winterjacken mit schnee@@ mobilen .|
beam-reorder|failed: beam_beats_greedy_on_the_models beam_sums_equal_forward small_beam_search_is_exhaustive|[[beam_sums_equal_forward]]
beam-reorder|passed: beam_of_one_is_greedy|[[beam_of_one_is_greedy]] still passes
bleu-copy|BLEU = 0.48 11.6/|\exBleuCopyCased~BLEU, $p_1 = \exBleuCopyCasedOne$
bleu-copy|BLEU = 0.75 14.0/|\exBleuCopyLower, $p_1 = \exBleuCopyLowerOne$
bleu-tokenized|BLEU = 100.00 |Still \exBleuTokenized
bleu-tokenized|BLEU = 97.87 98.7/98.2/97.6/97.0 (BP = 1.000 ratio = 1.009 hyp_len = 13407 ref_len = 13289)|gives \exBleuHyphens{} (\exBleuHyphensPrecisions, $\mathit{hyp\_len} = \exBleuHyphensHypLen
bleu-brevity|BLEU = 20.18 |BLEU $= \exBleuBrevity$
bleu-brevity|hyp_len = 5110 ref_len = 13289|$\mathit{hyp\_len} = \exBleuBrevityHypLen$, $\mathit{ref\_len} = \exBleuBrevityRefLen$
bleu-order|BLEU = 0.00 100.0/100.0/100.0/0.0|[[BLEU = 0.00 100.0/100.0/100.0/0.0]]
bleu-sentence-mean|BLEU = 41.11 |= 41.11$
bleu-paired|p = 0.0010: significant at 0.05|$p = 1/1001 \approx 0.0010$
bleu-paired|p = 0.0099: significant at 0.05|$1/101 \approx 0.0099$
greedy-beam-bleu|case:lc|\exGreedyBleu~BLEU (\exGreedyPrecisions
greedy-beam-bleu|case:lc|\exBeamBleu{} (\exBeamPrecisions
beam-differences|lines that differ: |In \exBeamDifferences{} lines
token-budget|batches in the first epoch: |29\,000/\exBatchesPerEpoch
cooldown-rate|last rate: |\texttt{\exCooldownLastRate}
step-flops|flops_per_step=294246285312|$F_{\mathrm{step}} = 294\,246\,285\,312$
dist-gpu|50 ms, 10 Gbit/s: step 0.400 s|a step of \exDistGpuStepTen~s
dist-gpu|50 ms, 10 Gbit/s: efficiency 0.125|an efficiency of \exDistGpuEffTen{}
dist-gpu|50 ms, 100 Gbit/s: step 0.088 s|\exDistGpuStepHundred~s and
dist-gpu|50 ms, 100 Gbit/s: efficiency 0.566|and \exDistGpuEffHundred{} over
dist-gpu|3150 ms, 10 Gbit/s: efficiency 0.900|the last row shows \exDistGpuEffNinety
END
)
# The slow ones (minutes each on two cores): `make exercises` checks them after the quick
# ones; `make check` runs only the quick ones.
SLOW_EXPECTATIONS=$(cat <<'END'
copy-epochs|lr 1.10e-03|$1.1\cdot 10^{-3}$
copy-epochs|lr 9.03e-04|$9.0\cdot 10^{-4}$
attention-no-scale|the run without the scale ends above the scaled run: yes|ends far above
norm-experiment|pre-norm, warm-up 50 against 400 over seeds 1-3: lower|Both learn faster
norm-experiment|post-norm, warm-up 50 against 400 over seeds 1-3: lower|Both learn faster
END
)
# Exercises with a command or target but no check in `make exercises`, and why.
UNCHECKED=$(cat <<'END'
reference-kernel|timings depend on the machine (about 30 s); the solution reads figures/exercises/reference-kernel.txt (record)
gradcheck-h|the solution describes a trend, not numbers (about 20 s)
ckpt-crash|a random kill; the test cli_kill_9_leaves_a_loadable_checkpoint checks it in make check
decode-speedup|timings depend on the machine (about 40 s); the solution reads figures/exercises/decode-speedup.txt (record)
dist-speed|timings depend on the machine and its load (bench/distributed.sh, about 3 min)
copy-multi30k|three or more training runs on Multi30k, half an hour or more each on one quiet core; the book records seed 1 of every arm and seed 2 of two post-norm arms, so seed 3 is the reader's
profile|a profile depends on the machine, its load and perf; the solution states an order, not shares
spin|timings on an idle and on a busy machine
bandwidth|the machine's memory bandwidth and decoding speed
ckpt-python|needs PyTorch (python3-torch), which make check does not install; tests/pytorch-loss.sh is the test that uses it
beam-fairseq|the student changes the beam search: no single right program to compare
beam-worse|the student writes a table of probabilities of their own: many answers
text-lowercase|the student extends to_lowercase: the check line is the exercise's own
END
)

solution_of() {   # the text of exercise $1's solution
  awk -v label="{ex:$1}" '
    index($0, label) && /^(\\paragraph|\\item)/ { on = 1; print; next }
    on && /^(\\paragraph|\\item|\\section|\\end\{enumerate\})/ { exit }
    on { print }' "$ROOT/book/solutions.nw"
}

# A copy of the repository in build/exercises/NAME/tree, with its objects (their times kept,
# so make rebuilds only what the patch changes), and the exercise's patch applied.
patched_tree() {
  local name=$1 tree=$SCRATCH/$1/tree
  rm -rf "$tree"; mkdir -p "$tree/build"
  cp -a "$ROOT/Makefile" "$ROOT/book" "$ROOT/tools" "$ROOT/tangled" "$ROOT/tests" "$ROOT/data" \
        "$ROOT/figures" "$tree/"
  [ -e "$ROOT/transformer" ] && cp -a "$ROOT/transformer" "$tree/"
  cp -a "$ROOT/build/tangle.stamp" "$ROOT"/build/*.o "$ROOT"/build/*.d "$ROOT/build/src" "$tree/build/"
  [ -d "$ROOT/build/tests" ] && cp -a "$ROOT/build/tests" "$tree/build/"
  [ -e "$ROOT/build/run-tests" ] && cp -a "$ROOT/build/run-tests" "$tree/build/"
  (cd "$tree" && patch -s -p1 < "$ROOT/tests/exercises/$name.patch")
  echo "$tree"
}

copied() { grep -c ' exact$' || true; }

ex_intro-tangle() {
  local tree; tree=$(patched_tree intro-tangle)
  cd "$tree" && make -s build/tangle.stamp 2>&1 | grep -v '^make' || true
}
# make build with a compiler that only says what it would compile: make's own decisions,
# without the time of compiling.
would_build() {
  make build CC="echo would-run" > would.out 2>&1 || true
  echo "$(grep -c -- '^would-run .* -c -o build/' would.out || true)"
}
ex_intro-rebuild() {
  local tree; tree=$(patched_tree intro-rebuild)
  cd "$tree"
  patch -s -R -p1 < "$ROOT/tests/exercises/intro-rebuild.patch"   # first a word of prose
  make -s build/tangle.stamp build
  sed -i 's/shows it for \$T = 20\$, as the reference does;/draws it for $T = 20$, as the reference does;/' book/masks.nw
  grep -q 'draws it for' book/masks.nw || { echo "the sentence to change is gone"; return 1; }
  echo "objects recompiled after a change of prose: $(would_build)"
  patch -s -p1 < "$ROOT/tests/exercises/intro-rebuild.patch"      # then the comment
  echo "objects recompiled: $(would_build)"
  sed -n 's/^would-run .* -c -o \(build\/[a-z]*\.o\) .*/  \1/p' would.out
}
ex_rng-first-value() { "$T" random --seed 42 --stream 54 --count 3; }
ex_normal-moments() {
  "$T" random --normal --count 1000000 | awk '{ s += $1; q += $1 * $1 } END {
    m = s / NR; v = q / NR - m * m
    printf "mean %.5f  variance %.5f  (N = %d)\n", m, v, NR
    printf "mean within 0.005: %s\nvariance within 0.007: %s\n",
           (m < 0.005 && m > -0.005) ? "yes" : "no", (v - 1 < 0.007 && 1 - v < 0.007) ? "yes" : "no" }'
}
ex_reference-kernel() {
  for n in 100 250 500 512 1000 1200; do
    for k in reference blas; do "$T" time-matmul --size $n --kernel $k; done
  done
}
ex_mask-count() {
  cd "$ROOT"
  for f in figures/mask-subsequent.dat figures/mask-batch-1.dat figures/mask-batch-2.dat \
           figures/mask-batch-3.dat; do
    echo "$f $(grep -v '^#' $f | tr ' ' '\n' | grep -c '^1$' || true)"
  done
}
ex_cli-exit-status() {
  local s1=0 s2=0 s3=0
  "$T" figure-data mask subsequent --size 0 || s1=$?
  "$T" fgure-data || s2=$?
  TRANSFORMER_MATMUL=fast "$T" demo || s3=$?
  echo "statuses $s1 $s2 $s3"
}
ex_cli-atoi() {
  local refused="" accepted="" a s
  for a in 12abc abc "" 1e3 99999999999999999999 -5 +2 " 3"; do
    s=0; "$T" figure-data mask subsequent --size "$a" > /dev/null 2>&1 || s=$?
    if [ $s -eq 2 ]; then refused+=" [$a]"; elif [ $s -eq 0 ]; then accepted+=" [$a]"; fi
  done
  echo "refused (status 2):$refused"; echo "accepted (status 0):$accepted"
}
ex_pe-values() {
  "$T" figure-data pe | grep -v '^#' | sed -n 2p
  "$T" figure-data pe | awk '/^1 / { printf "%.6f %.6f\n", $2, $3 }'
}
# The mean entropy of figure-data temperature's queries at tau = 1 and tau = sqrt(d_k), for
# d_k = 16 and 256 (the third block of its data: tau, tau / sqrt(d_k), entropy).
ex_attention-temperature() {
  for dk in 16 256; do
    "$T" figure-data temperature --dk $dk --tau 1,$(awk -v d=$dk 'BEGIN { print sqrt(d) }') |
      awk -v d=$dk '/^# at the temperatures/ { on = 1; next }
        on && NF == 3 { printf "%s tau %s: %.2f", n++ ? ";" : "d_k " d ",", $1, $3 }
        END { print "" }'
  done
}
ex_attention-scale() {
  "$T" random --normal --count 1280000 | awk '
    { if (NR % 2) q = $1; else d += q * $1 }
    NR % 128 == 0 { n++; s += d; s2 += d * d; d = 0 }
    END { printf "mean %.2f variance %.1f\n", s / n, s2 / n - (s / n)^2 }'
}
activations() {
  mkdir -p "$SCRATCH"
  make -s -C "$ROOT" build/exercises/activations > /dev/null
  "$SCRATCH/activations"
}
ex_intro-layer() {
  "$T" figure-data architecture --layers 1 | awk -F'[{}]' '
    /archEncoderLayer/ { gsub(/\\,/, "", $4); print "encoder layer " $4 }
    /archDecoderLayer/ { gsub(/\\,/, "", $4); print "decoder layer " $4 }
    /archFeedForward}/ { gsub(/\\,/, "", $4); print "feed-forward " $4 }'
}
ex_model-count() { activations | grep parameters; }
ex_model-activations() { activations | grep activations; }
ex_gradcheck-run() {
  "$T" gradcheck --layer attention
  "$T" gradcheck --layer model | tee "$SCRATCH/gradcheck-run.out"
  awk '/e = / { e = $4 + 0; if (e > worst) { worst = e; name = $1 } }
       END { print "largest e of the model: " name }' "$SCRATCH/gradcheck-run.out"
}
ex_gradcheck-h() {
  # a step that fails the check exits 1; the exercise wants both steps' errors all the same
  for h in 1e-4 1e-1; do
    echo "step $h:"; { "$T" gradcheck --layer model --step $h || true; } | tail -n 1
  done
}
ex_gradcheck-bug() {
  local tree; tree=$(patched_tree gradcheck-bug)
  cd "$tree" && make -s transformer > /dev/null
  for layer in linear softmax attention cross-attention layernorm feed-forward model; do
    echo "$layer: $(./transformer gradcheck --layer $layer | tail -n 1 | sed 's/.*: //')"
  done
}
ex_gelu() {   # the patch's size, its gradient check, a GELU checkpoint, the files of before
  local tree; tree=$(patched_tree gelu)
  cd "$tree" && make -s transformer > /dev/null
  echo "chapters $(grep -c '^+++ b/book/' "$ROOT/tests/exercises/gelu.patch")," \
       "generated files $(diff -rq "$ROOT/tangled" tangled | wc -l)"
  echo "feed-forward-gelu: $(./transformer gradcheck --layer feed-forward-gelu | tail -n 1 | sed 's/.*: //')"
  local c="./transformer copy --d-model 32 --d-ff 64 --heads 2 --epochs 1"
  rm -f a.st b.st r.st
  $c --activation gelu --checkpoint a.st --stop-after 20 > /dev/null || true
  $c --activation gelu --checkpoint b.st --stop-after 10 > /dev/null || true
  $c --activation gelu --resume b.st --stop-after 20 > /dev/null || true
  echo "GELU model, resumed from its checkpoint: $(cmp -s a.st b.st && echo identical || echo differ)"
  local said; said=$($c --resume b.st --stop-after 20 2>&1 || true)   # a ReLU run
  grep -o 'config.activation is .*' <<< "$said" || echo "a ReLU run resumed it"
  "$T" copy --d-model 32 --d-ff 64 --heads 2 --epochs 1 --checkpoint r.st --stop-after 10 > /dev/null || true
  $c --resume r.st --stop-after 20 > /dev/null \
    && echo "a checkpoint of the program without the patch: resumed" || echo "an old checkpoint: refused"
  head -n 5 "$D/test2016.de" > five.de
  ./transformer translate --beam 1 < five.de > patched.en
  "$T" translate --beam 1 < five.de > unpatched.en
  cmp -s patched.en unpatched.en && echo "the shipped model: the same translations" \
    || echo "the shipped model: other translations"
}
ex_st-header() {
  head -c 300 "$ROOT/tests/golden/model-pre-standard.safetensors" | tail -c +9; echo
  local n; n=$(head -c 8 "$ROOT/tests/golden/model-pre-standard.safetensors" | od -An -tu8 | tr -d ' ')
  echo "header of $n bytes: data start at byte $((8 + n))"
}
ex_st-corrupt() {
  local f=model-pre-standard.safetensors
  head -c -1 "$ROOT/tests/golden/$f" > "$f"
  "$T" translate --model "$f" < /dev/null 2>&1 || true
}
ex_dist-gpu() {
  "$T" figure-data scaling --base-ms 50 | awk '$1 == 64 {
    printf "64 processes, 50 ms, 10 Gbit/s: step %.3f s\n", $2
    printf "64 processes, 50 ms, 10 Gbit/s: efficiency %.3f\n", $3
    printf "64 processes, 50 ms, 100 Gbit/s: step %.3f s\n", $4
    printf "64 processes, 50 ms, 100 Gbit/s: efficiency %.3f\n", $5 }'
  "$T" figure-data scaling --base-ms 3150 | awk '$1 == 64 {
    printf "64 processes, 3150 ms, 10 Gbit/s: efficiency %.3f\n", $3 }'
}
ex_dist-speed() { cd "$ROOT" && bench/distributed.sh 1; }
ex_rate-peak() { "$T" figure-data lr --every 1000 | sed -n '/^# learning/p; /^4000 /p; /^8000 /p'; }
ex_rate-copy() {
  make -s -C "$ROOT" figure NAME=learning-rate \
    ARGS="--curve d=512,f=0.5,w=400 --curve f=1,w=400 --steps 400 --every 1"
  local data=$ROOT/build/figure/learning-rate/learning-rate.dat
  sed -n 's/^#gp title\([0-9]\) = /legend \1: /p' "$data"
  echo "last line: $(tail -n 1 "$data")"
  echo "under the chart: $(pdftotext "$ROOT/build/figure/learning-rate.pdf" - | grep figure-data)"
}
ex_copy-start() {
  local tree; tree=$(patched_tree copy-start)
  cd "$tree" && make -s transformer > /dev/null
  ./transformer copy --d-model 32 --d-ff 64 --heads 2 --batch-size 40 | tee copy.out | tail -n 9 || true
  echo "copied exactly: $(copied < copy.out) of 8"
}
ex_copy-small() {
  # Which of the eight a borderline model gets right differs between processors (OpenBLAS
  # picks its kernels by CPU, and the rounding differs), so the check reads the summary line.
  local d n
  for d in 32 16 8; do
    n=$("$T" copy --d-model $d --d-ff $((2 * d)) --heads 2 --batch-size 40 | copied)
    echo "d_model $d: copied exactly $n of 8"
    echo "d_model $d: all eight: $([ "$n" = 8 ] && echo yes || echo no), at most one: $([ "$n" -le 1 ] && echo yes || echo no)"
  done
}
ex_attention-no-scale() {
  "$T" copy --precision fp32 --log "$SCRATCH/scaled.csv" > /dev/null || true
  "$T" copy --precision fp32 --no-scale --log "$SCRATCH/unscaled.csv" > /dev/null || true
  paste -d, "$SCRATCH/scaled.csv" "$SCRATCH/unscaled.csv" \
    | awk -F, 'NR == 1 { print "epoch  validation (scaled)  validation (no scale)"; next }
               { u = NF / 2 + 4   # the validation loss of the second log, whatever the width
                 printf "%5d  %19.4f  %21.4f\n", $1, $4, $u; scaled = $4; unscaled = $u }
               END { printf "the run without the scale ends above the scaled run: %s\n",
                            (unscaled > scaled) ? "yes" : "no" }'
}
ex_norm-experiment() {   # the small copy model, each placement, warm-up 400 and 50, seeds 1-3
  local norm w seed
  for norm in pre post; do
    for w in 400 50; do
      for seed in 1 2 3; do
        "$T" copy --d-model 32 --d-ff 64 --heads 2 --batch-size 40 --norm $norm --warmup $w \
          --seed $seed --log "$SCRATCH/norm-experiment/$norm-w$w-s$seed.csv" > /dev/null || true
        tail -n 1 "$SCRATCH/norm-experiment/$norm-w$w-s$seed.csv" | cut -d, -f4
      done | awk -v norm=$norm -v w=$w '{ s += $1 } END { printf "%s %s %.4f\n", norm, w, s / NR }'
    done
  done | awk '{ mean[$1, $2] = $3; print }
              END { for (n = 1; n <= 2; n++) { norm = n == 1 ? "pre" : "post"
                      printf "%s-norm, warm-up 50 against 400 over seeds 1-3: %s\n", norm,
                             mean[norm, 50] < mean[norm, 400] ? "lower" : "not lower" } }'
}
ex_copy-epochs() { "$T" copy --epochs 30 || true; }
ex_copy-reverse() {
  local tree; tree=$(patched_tree copy-reverse)
  cd "$tree" && make -s transformer > /dev/null
  ./transformer copy --d-model 32 --d-ff 64 --heads 2 --batch-size 40 | tee copy.out | tail -n 9 || true
  echo "copied exactly: $(copied < copy.out) of 8"
}
ex_ckpt-resume() {
  local c="$T copy --d-model 32 --d-ff 64 --heads 2 --epochs 1"
  rm -f a.st b.st
  $c --checkpoint a.st --stop-after 20 > /dev/null
  $c --checkpoint b.st --stop-after 10 > /dev/null
  $c --resume b.st --stop-after 20 > /dev/null
  cmp -s a.st b.st && echo "2 threads: identical" || echo "2 threads: differ"
  $c --checkpoint b.st --stop-after 10 > /dev/null
  OMP_NUM_THREADS=1 $c --resume b.st --stop-after 20 > /dev/null
  cmp -s a.st b.st && echo "1 thread for the resumed part: identical" \
                   || echo "1 thread for the resumed part: differ"
}
ex_ckpt-crash() {
  rm -f c.st c.st.lock c.st.??????
  "$T" copy --d-model 32 --d-ff 64 --heads 2 --checkpoint c.st --checkpoint-every 1 > /dev/null &
  local pid=$!
  sleep 2; kill -9 $pid; wait $pid 2>/dev/null || true
  ls -l c.st*
  "$T" copy --d-model 32 --d-ff 64 --heads 2 --resume c.st --stop-after 1 > /dev/null 2>&1 \
    && echo "c.st loads" || echo "c.st does not load"
}
ex_decode-speedup() { for n in 8 16 32 64; do "$T" time-decode --len $n; done; }
ex_text-amp() {
  "$T" tokenize --lowercase --compare "$D/train.lc.norm.tok.en" < "$D/train.en" | tail -n 7
  local tree; tree=$(patched_tree text-amp)
  cd "$tree" && make -s transformer > /dev/null
  echo "patched: $(./transformer tokenize --lowercase --compare "$D/train.lc.norm.tok.en" \
                   < "$D/train.en" | tail -n 1)"
}
ex_text-roundtrip() {
  "$T" tokenize < "$D/val.en" | "$T" tokenize --detokenize | diff "$D/val.en" - > roundtrip.diff || true
  cat roundtrip.diff
  echo "lines that differ: $(grep -c '^<' roundtrip.diff || true)"
  printf "Rock 'n' roll at the 1990's party.\n" | "$T" tokenize
  printf "Rock 'n' roll at the 1990's party.\n" | "$T" tokenize | "$T" tokenize --detokenize
}
ex_text-unknown() {
  echo "validation tokens $("$T" tokenize --lowercase < "$D/val.en" | wc -w)"
  for m in 1 2 3; do
    "$T" vocab --lowercase --min-freq $m --save v.en "$D/train.en" > /dev/null
    echo "min-freq $m: $(wc -l < v.en) entries, $("$T" tokenize --lowercase < "$D/val.en" \
          | tr ' ' '\n' | grep -cvxFf v.en) unknown"
  done
}
ex_text-nbsp() {
  echo "de: $(printf '12\xc2\xa0500 Euro\n' | "$T" tokenize --language de)"
  echo "en: $(printf '12\xc2\xa0500 Euro\n' | "$T" tokenize --language en)"
  echo "plain space: $(printf '12 500 Euro\n' | "$T" tokenize --language en)"
}
ex_text-subwords() {
  local n
  for n in 2000 8000 16000; do
    "$T" vocab --lowercase --subwords $n --save s$n.txt "$D/train.de" "$D/train.en" > s$n.out
    echo "subwords $n: $(sed -n 's/^vocabulary: \([0-9]*\) .*/\1 tokens/p' s$n.out)," \
         "$(sed -n 's/.*pieces (\([0-9.]*\) a token; \([0-9.]*%\) .*/\1 pieces a token, \2 whole/p' s$n.out)"
    echo "  $(printf 'Fünf Leute in Winterjacken mit Schneemobilen.\n' \
              | "$T" tokenize --language de --lowercase --subwords s$n.txt)"
  done
}
ex_beam-reorder() {
  local tree; tree=$(patched_tree beam-reorder)
  cd "$tree" && make -s build/run-tests > /dev/null
  CK_RUN_SUITE=beam CK_DEFAULT_TIMEOUT=120 build/run-tests > beam.out 2>&1 || true
  grep -E '^[0-9]+%|:F:|:E:' beam.out | cut -c1-160
  echo "failed: $(sed -n 's/.*:[FE]:[^:]*:\([a-z_0-9]*\):.*/\1/p' beam.out | sort -u | tr '\n' ' ' | sed 's/ $//')"
  local t; for t in beam_of_one_is_greedy; do
    grep -q ":$t:" beam.out || echo "passed: $t"
  done
}
ex_bleu-copy() {
  "$T" bleu "$D/test2016.de" "$D/test2016.en"
  "$T" bleu "$D/test2016.de" "$D/test2016.en" --lowercase
}
ex_bleu-tokenized() {
  sed "s/[.]/ ./g; s/,/ ,/g" "$D/val.en" > tok.en
  "$T" bleu tok.en "$D/val.en"
  sed "s/-/ - /g" "$D/val.en" > hyphens.en
  "$T" bleu hyphens.en "$D/val.en"
}
ex_bleu-brevity() {
  cut -d" " -f1-5 "$D/val.en" > short.en
  "$T" bleu short.en "$D/val.en"
}
ex_bleu-order() { printf 'a b c\n' > abc.txt; "$T" bleu abc.txt abc.txt; }
ex_bleu-sentence-mean() {
  printf 'the cat sat\none two three four\n' > hyp.txt
  printf 'the cat sat\nfive six seven eight\n' > ref.txt
  "$T" bleu hyp.txt ref.txt
}
ex_bleu-paired() {
  local m=$ROOT/figures/multi30k
  "$T" bleu --paired-bs "$m/shipped.test2016.beam4.en" "$m/shipped.test2016.greedy.en" "$D/test2016.en"
  "$T" bleu --paired-bs --resamples 100 "$m/shipped.test2016.beam4.en" \
    "$m/shipped.test2016.greedy.en" "$D/test2016.en"
}
ex_greedy-beam-bleu() {
  "$T" bleu "$ROOT/figures/multi30k/test2016.greedy.en" "$D/test2016.en" --lowercase
  "$T" bleu "$ROOT/figures/multi30k/test2016.beam4.en" "$D/test2016.en" --lowercase
}
ex_beam-differences() {
  paste -d '\t' "$ROOT/figures/multi30k/test2016.greedy.en" "$ROOT/figures/multi30k/test2016.beam4.en" \
    | awk -F '\t' '$1 != $2 { n++ } END { print "lines that differ: " n }'
}
ex_token-budget() {
  awk -F, 'NR == 2 { print "batches in the first epoch: " $2 }' "$ROOT/figures/multi30k/log.csv"
}
ex_cooldown-rate() {
  awk -F, 'END { print "last rate: " $5 }' "$ROOT/figures/multi30k/log.csv"
}
ex_step-flops() {
  "$T" benchmark train --layers 6 --d-model 512 --d-ff 2048 --heads 8 --vocab 8000 \
    --batch 32 --len 32 --steps 1 --warmup-steps 1
}

run() {   # run exercise $1 in its scratch directory
  declare -F "ex_$1" > /dev/null || { echo "tests/exercises.sh: no exercise '$1'" >&2; exit 2; }
  mkdir -p "$SCRATCH/$1" && cd "$SCRATCH/$1" && "ex_$1"
}

check() {   # the exercises of $TABLE (default: the quick ones), or those named
  local table=${TABLE:-$EXPECTATIONS}
  local names; names=$(echo "$table" | sed -n 's/^\([a-z0-9-]*\)|.*/\1/p' | uniq)
  [ $# -gt 0 ] && names="$*"
  local passed=0 failed=0 name
  for name in $names; do
    local out="$SCRATCH/$name.out" ok=1 start=$SECONDS
    mkdir -p "$SCRATCH"
    (run "$name") > "$out" 2>&1 || true
    local solution; solution=$(solution_of "$name")
    [ -n "$solution" ] || { echo "  $name: no solution labelled ex:$name in book/solutions.nw"; ok=0; }
    while IFS='|' read -r n literal book; do
      [ "$n" = "$name" ] || continue
      grep -qF -- "$literal" "$out" || { echo "  $name: the output lacks '$literal'"; ok=0; }
      grep -qF -- "${book:-$literal}" <<< "$solution" \
        || { echo "  $name: the solution lacks '${book:-$literal}'"; ok=0; }
    done <<< "$table"
    if [ $ok = 1 ]; then passed=$((passed + 1)); echo "ok    $name ($((SECONDS - start)) s)"
    else failed=$((failed + 1)); echo "FAIL  $name (output in ${out#$ROOT/})"; fi
  done
  echo "exercises: $passed passed, $failed failed"
  [ $failed = 0 ]
}

record() {   # run exercise $1, keep its output in figures/exercises/$1.txt with how it was made
  local out=$ROOT/figures/exercises/$1.txt
  mkdir -p "$ROOT/figures/exercises"
  { echo "# tests/exercises.sh record $1${OMP_NUM_THREADS:+, with OMP_NUM_THREADS=$OMP_NUM_THREADS}"
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), trainer $(git -C "$ROOT" rev-parse --short HEAD)," \
         "$(lscpu | sed -n 's/^Model name: *//p'), $(nproc --all) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    (run "$1")
  } > "$out.new"
  mv "$out.new" "$out"
  echo "${out#$ROOT/}"
}

case "${1:-}" in
  record) [ $# = 2 ] || { echo "usage: tests/exercises.sh record NAME" >&2; exit 2; }; record "$2" ;;
  run) [ $# = 2 ] || { echo "usage: tests/exercises.sh run NAME" >&2; exit 2; }; run "$2" ;;
  check) shift; check "$@" ;;
  check-slow) shift; TABLE=$SLOW_EXPECTATIONS check "$@" ;;
  list)
    echo "checked by make exercises (and make check):"
    echo "$EXPECTATIONS" | sed -n 's/^\([a-z0-9-]*\)|.*/  \1/p' | uniq
    echo "checked by make exercises after the others (minutes each):"
    echo "$SLOW_EXPECTATIONS" | sed -n 's/^\([a-z0-9-]*\)|.*/  \1/p' | uniq
    echo "not checked (run them with make exercise-NAME):"
    echo "$UNCHECKED" | sed -n 's/^\([a-z0-9-]*\)|\(.*\)/  \1: \2/p' ;;
  *) echo "usage: tests/exercises.sh run NAME | check [NAME...] | check-slow [NAME...] | list | record NAME" >&2; exit 2 ;;
esac
