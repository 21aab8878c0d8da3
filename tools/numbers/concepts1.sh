#!/bin/sh
# The numbers of the concept boxes and "Common mistakes" of Part I (the embeddings, attention
# and model chapters): \cpt... macros, computed from figures/concepts1/ (recorded runs: the
# copy task at several depths, the norms of the shipped model's table) and from cheap runs of
# the program itself (its positional-encoding table, its parameter counts, its random streams).
set -eu
T=${TRANSFORMER:-./transformer}
D=figures/concepts1
LIB="$(cat tools/numbers/lib.awk)
"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# --- Depth against width (model chapter): the copy task at N = 1, 2, 3, 6 and one wide layer.
# Per configuration: its parameters (the program's count), the final validation loss and the
# evaluation loss averaged over the seeds, and the exact copies of all seeds' decoded examples.
while read -r name macro layers d ff; do
  params=$("$T" figure-data architecture --layers "$layers" --d-model "$d" --d-ff "$ff" \
             --heads 2 --src-vocab 11 --tgt-vocab 11 | sed -n 's/.*archTotal}{\(.*\)}$/\1/p' | tr -d '\\,')
  for f in "$D"/depth-"$name"-seed*.txt; do
    csv=${f%.txt}.csv
    printf '%s %s %s\n' "$(tail -n 1 "$csv" | cut -d, -f4)" \
      "$(sed -n 's/^evaluation loss \([0-9.]*\) after \([0-9]*\) steps.*/\1 \2/p' "$f")" \
      "$(grep -c ' exact$' "$f" || true) $(grep -c ' decoded ' "$f" || true)"
  done | awk -v m="$macro" -v p="$params" -v layers="$layers" -v d="$d" -v ff="$ff" "$LIB"'
    { val += $1; ev += $2; steps = $3; exact += $4; total += $5; n++ }
    END { def("cptDepth" m "Layers", layers); def("cptDepth" m "DModel", d); def("cptDepth" m "Dff", ff)
          def("cptDepth" m "Parameters", grouped(p))
          def("cptDepth" m "Validation", fixed(val / n, 3)); def("cptDepth" m "Evaluation", fixed(ev / n, 3))
          def("cptDepth" m "Exact", exact); def("cptDepth" m "Decoded", total)
          if (m == "One") { def("cptDepthSeeds", n); def("cptDepthSteps", steps) } }'
done <<'RUNS'
n1 One 1 32 64
n2 Two 2 32 64
n3 Three 3 32 64
n6 Six 6 32 64
wide Wide 1 78 156
RUNS

# --- Weight tying (model chapter): the shared table of the shipped model and what sharing saves.
# The table's shape and norms from figures/concepts1/table-norms.txt; the untied count from
# the program (figure-data architecture counts a model with nothing tied).
V=$(awk '$1 == "rows" { print $2 }' "$D/table-norms.txt")
DM=$(awk '$1 == "d_model" { print $2 }' "$D/table-norms.txt")
untied=$("$T" figure-data architecture --layers 3 --d-model "$DM" --d-ff $((4 * DM)) --heads 8 \
           --src-vocab "$V" --tgt-vocab "$V" | sed -n 's/.*archTotal}{\(.*\)}$/\1/p' | tr -d '\\,')
awk -v V="$V" -v d="$DM" -v untied="$untied" "$LIB"'
  $1 == "entry_rms" { rms = $2 } $1 == "row_norm_median" { med = $2 }
  $1 == "row_norm_min" { lo = $2 } $1 == "row_norm_max" { hi = $2 }
  END {
    def("cptTieVocab", V); def("cptTieDModel", d)
    def("cptTieTableEntries", grouped(V * d))
    def("cptTieSaved", grouped(2 * V * d))
    def("cptTieUntied", grouped(untied)); def("cptTieTied", grouped(untied - 2 * V * d))
    def("cptTieSavedPercent", fixed(100 * 2 * V * d / untied, 0))
    def("cptTableEntryRms", fixed(rms, 3))
    def("cptTableRowMedian", fixed(med, 2)); def("cptTableRowMin", fixed(lo, 2))
    def("cptTableRowMax", fixed(hi, 2))
    def("cptTableRowMedianScaled", fixed(med * sqrt(d), 1))
  }' "$D/table-norms.txt"

# --- The scale of the embedding (embeddings chapter): a row of the table at initialization
# (Xavier: entries of standard deviation sqrt(2/(V + d))) and after training (the shipped
# model's median row), with and without sqrt(d_model), against a row of the program's
# positional encoding of the same width.
for first in $(seq 0 8 $((DM - 8))); do
  "$T" figure-data pe --positions 11 --d-model "$DM" --first "$first" --count 8 | grep -v '^#'
done | awk -v V="$V" -v d="$DM" -v med="$(awk '$1 == "row_norm_median" { print $2 }' "$D/table-norms.txt")" "$LIB"'
  $1 == 10 { for (i = 2; i <= NF; i++) s += $i * $i }
  END {
    sd = sqrt(2 / (V + d)); row = sd * sqrt(d)
    def("cptEmbInitStd", fixed(sd, 4)); def("cptEmbInitRow", fixed(row, 2))
    def("cptEmbInitRowScaled", fixed(row * sqrt(d), 1)); def("cptEmbSqrtD", fixed(sqrt(d), 0))
    def("cptPeRowNorm", fixed(sqrt(s), 1))
    def("cptEmbInitShare", fixed(row * sqrt(d) / sqrt(s), 2))
    def("cptEmbInitUnscaledShare", fixed(row / sqrt(s), 3))
    def("cptEmbUnscaledShare", fixed(med / sqrt(s), 2))
    def("cptEmbScaledRatio", fixed(med * sqrt(d) / sqrt(s), 1))
  }'

# --- Positional encoding (embeddings chapter): the table of width 512 for positions 0 to 99,
# from the program, 8 dimensions a call. (1) Equal steps are not equal differences:
# |PE(p+k) - PE(p)| against |PE(p+2k) - PE(p+k) - (PE(p+k) - PE(p))| for p = 10, k = 5.
# (2) PE(p+k) = M_k PE(p), each pair of dimensions turned by the angle k w_i: the largest error.
# (3) Absolute position: the smallest distance between the encodings of two different positions.
PW=512 PP=10 PK=5 PN=50
for first in $(seq 0 8 $((PW - 8))); do
  "$T" figure-data pe --positions $PN --d-model $PW --first "$first" --count 8 | grep -v '^#' \
    | awk -v f="$first" '{ for (i = 2; i <= NF; i++) print $1, f + i - 2, $i }'
done > "$tmp/pe"
awk -v W=$PW -v p=$PP -v k=$PK -v N=$PN "$LIB"'
  { e[$1, $2] = $3 }
  function sci(x,    ex) { ex = int(log(x) / log(10)); if (x < 1) ex--
                          return "\\ensuremath{" fixed(x / 10^ex, 1) "\\cdot 10^{" ex "}}" }
  END {
    for (i = 0; i < W; i++) {
      a = e[p + k, i] - e[p, i]; b = e[p + 2 * k, i] - e[p + k, i]
      da += a * a; db += b * b; dd += (b - a) * (b - a)
    }
    for (i = 0; 2 * i < W; i++) {
      w = exp(-2 * i / W * log(10000)); c = cos(k * w); s = sin(k * w)
      x = s * e[p, 2 * i + 1] + c * e[p, 2 * i]        # sin(a + b) = sin a cos b + cos a sin b
      y = c * e[p, 2 * i + 1] - s * e[p, 2 * i]        # cos(a + b) = cos a cos b - sin a sin b
      err = x - e[p + k, 2 * i]; if (err < 0) err = -err; if (err > worst) worst = err
      err = y - e[p + k, 2 * i + 1]; if (err < 0) err = -err; if (err > worst) worst = err
    }
    near = 1e30
    for (u = 0; u < N; u++) for (v = u + 1; v < N; v++) {
      t = 0; for (i = 0; i < W; i++) { z = e[u, i] - e[v, i]; t += z * z }
      if (t < near) { near = t; nu = u; nv = v }
    }
    def("cptPeWidth", W); def("cptPePos", p); def("cptPeStep", k); def("cptPePositions", N)
    def("cptPeFirstStep", fixed(sqrt(da), 3)); def("cptPeSecondStep", fixed(sqrt(db), 3))
    def("cptPeStepDifference", fixed(sqrt(dd), 3))
    def("cptPeStepDifferencePercent", fixed(100 * sqrt(dd) / sqrt(da), 0))
    def("cptPeRotationError", sci(worst))
    def("cptPeNearest", fixed(sqrt(near), 2)); def("cptPeNearestFirst", nu); def("cptPeNearestSecond", nv)
  }' "$tmp/pe"

# --- Score and weight (attention chapter): a query and ten keys of width d_k = 64 with standard
# normal components, ROWS times, from the program's seeded normal stream; the entropy of the
# softmax of the ten scores at temperature sqrt(d_k) (the scaled scores) and at temperature 1
# (without the scale), and its largest possible value, log 10.
ROWS=2000 DK=64 KEYS=10
"$T" random --normal --seed 7 --count $((ROWS * (KEYS + 1) * DK)) | awk -v D=$DK -v K=$KEYS -v n=$ROWS "$LIB"'
  function entropy(tau,    j, m, z, h, p) {
      m = -1e30; for (j = 1; j <= K; j++) if (s[j] / tau > m) m = s[j] / tau
      z = 0; for (j = 1; j <= K; j++) { e[j] = exp(s[j] / tau - m); z += e[j] }
      h = 0; for (j = 1; j <= K; j++) { p = e[j] / z; if (p > 0) h -= p * log(p) }
      return h
  }
  { i = (NR - 1) % ((K + 1) * D); c = i % D
    if (i < D) q[c] = $1; else { k = int(i / D); if (c == 0) s[k] = 0; s[k] += q[c] * $1 }
    if (i == (K + 1) * D - 1) { hs += entropy(sqrt(D)); hu += entropy(1); hh += entropy(2 * sqrt(D)) } }
  END {
    def("cptTempRows", grouped(n)); def("cptTempKeys", K); def("cptTempDk", D)
    def("cptTempEntropyScaled", fixed(hs / n, 2)); def("cptTempEntropyUnscaled", fixed(hu / n, 2))
    def("cptTempEntropyHot", fixed(hh / n, 2))
    def("cptTempEntropyMax", fixed(log(K), 2))
    def("cptTempKeysScaled", fixed(exp(hs / n), 1)); def("cptTempKeysUnscaled", fixed(exp(hu / n), 1))
  }'

# --- Dropout's two conventions (attention chapter): a unit of value 1 under the rule of
# dropout_mask (kept when a uniform number of the program's stream is at least p), DRAWS times:
# its mean in training under inverted dropout (kept units times 1/(1-p)) and under the
# original convention (kept units unscaled), and what each gives at inference.
DRAWS=100000 P=0.1
"$T" random --uniform --seed 3 --count $DRAWS | awk -v p=$P -v n=$DRAWS "$LIB"'
  { if ($1 >= p) { kept++; inv += 1 / (1 - p); orig += 1 } }
  END {
    def("cptDropDraws", grouped(n)); def("cptDropP", p)
    def("cptDropKeptPercent", fixed(100 * kept / n, 2))
    def("cptDropInvertedMean", fixed(inv / n, 4)); def("cptDropOriginalMean", fixed(orig / n, 4))
    def("cptDropOriginalInference", fixed(1 - p, 4))
  }'
