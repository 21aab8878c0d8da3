#!/bin/sh
# The attention chapter's experiment on the scale 1/sqrt(d_k) ("Why sqrt(d_k)"): a query and
# ten keys with standard normal components of width 64, ROWS times, from the program's own
# seeded normal stream (transformer random --normal, seed 42); for each row the softmax of the
# ten scores with and without the scale, its largest weight and the Frobenius norm of its
# Jacobian diag(p) - p p^T. Prints \attScale... macros: medians, shares and a decile.
set -eu
T=${TRANSFORMER:-./transformer}
LIB="$(cat tools/numbers/lib.awk)
"
ROWS=20000 D=64 KEYS=10
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$T" random --normal --count $((ROWS * (KEYS + 1) * D)) | awk -v D=$D -v K=$KEYS '
  function stats(scale,    j, m, z, p, sum2, sum4, diag, big) {
      m = -1e30; for (j = 1; j <= K; j++) if (s[j] * scale > m) m = s[j] * scale
      z = 0; for (j = 1; j <= K; j++) { e[j] = exp(s[j] * scale - m); z += e[j] }
      big = 0; sum2 = 0; sum4 = 0; diag = 0
      for (j = 1; j <= K; j++) { p = e[j] / z; if (p > big) big = p
                                 sum2 += p * p; sum4 += p ^ 4; diag += (p - p * p) ^ 2 }
      return big " " sqrt(diag + sum2 * sum2 - sum4)
  }
  { i = (NR - 1) % ((K + 1) * D); c = i % D
    if (i < D) q[c] = $1; else { k = int(i / D); if (c == 0) s[k] = 0; s[k] += q[c] * $1 }
    if (i == (K + 1) * D - 1) print stats(1 / sqrt(D)), stats(1) }' > "$tmp/rows"
# columns: largest weight and Jacobian norm with the scale, then without
for col in 1 2 3 4; do cut -d' ' -f$col "$tmp/rows" | sort -g > "$tmp/c$col"; done
awk -v n=$ROWS "$LIB"'
  FILENAME ~ /c1$/ { a[FNR] = $1 } FILENAME ~ /c2$/ { b[FNR] = $1 }
  FILENAME ~ /c3$/ { c[FNR] = $1; if ($1 > 0.99) over++ } FILENAME ~ /c4$/ { d[FNR] = $1 }
  END {
    m = int(n / 2)
    def("attScaleRows", grouped(n))
    def("attScaleMaxMedianWithout", fixed(c[m], 2)); def("attScaleMaxMedianWith", fixed(a[m], 2))
    def("attScaleMaxOverWithoutPercent", fixed(100 * over / n, 0))
    def("attScaleMaxLargestWith", fixed(a[n], 2))
    def("attScaleJacobianMedianWith", fixed(b[m], 2)); def("attScaleJacobianMedianWithout", fixed(d[m], 2))
    e = d[int(n / 10)]; x = int(log(e) / log(10)) - 1
    def("attScaleJacobianDecileWithout", "\\ensuremath{" fixed(e / 10^x, 1) "\\cdot 10^{" x "}}")
  }' "$tmp/c1" "$tmp/c2" "$tmp/c3" "$tmp/c4"
