#!/bin/sh
# The numbers of the concept boxes and "Common mistakes" of Parts II and III:
#   \conceptsCopy...  the copy-task runs of figures/concepts2/ (its README names each command,
#                     the trainer's commit and the machine): the reference's recipe and the
#                     course practical's differences that the program has switches for;
#   \conceptsPlan...  the batches of the translation chapter's starting recipe (words,
#                     budget 2000 padded tokens), cut from data/multi30k/train.{de,en}
#                     tokenized by the program itself, as batch_plan cuts them;
#   \conceptsOrder... the same pairs in batches of 128 in the corpus's order, each padded to
#                     its longest (the practical's batches, without its shuffle);
#   \conceptsFixed... every sentence padded to 72 tokens (the course's Multi30k run);
#   \conceptsMean...  the worked example of the epoch's loss: the plan's shortest and
#                     longest batch (in target tokens) with two given per-token losses;
#   \conceptsFloat... the float constant behind a log-softmax computed as log(softmax).
set -eu
T=${TRANSFORMER:-./transformer}
D=figures/concepts2
M=data/multi30k
LIB="$(cat tools/numbers/lib.awk)
"

# The copy-task runs: the last row of each log (the validation loss after 400 steps) and the
# number of decoded sequences marked exact, for seeds 1 and 2.
for name in ref post cold gentle unscaled adam fixed fixedunscaled fixedadam practical; do
  for seed in 1 2; do
    printf '%s %s %s %s\n' "$name" "$seed" \
      "$(tail -n 1 $D/$name-s$seed.csv | cut -d, -f4)" "$(grep -c ' exact$' $D/$name-s$seed.txt || true)"
  done
done | awk "$LIB"'
  { loss[$1, $2] = $3; copied[$1, $2] = $4 }
  END {
    split("ref post cold gentle unscaled adam fixed fixedunscaled fixedadam practical", names, " ")
    split("Ref Post Cold Gentle Unscaled Adam Fixed FixedUnscaled FixedAdam Practical", macro, " ")
    for (i = 1; i <= 10; i++) {
      n = names[i]
      def("conceptsCopy" macro[i] "Losses", fixed(loss[n, 1], 3) ", " fixed(loss[n, 2], 3))
      def("conceptsCopy" macro[i] "Copied", copied[n, 1] ", " copied[n, 2])
    }
    # The factor of the gentle runs (a setting, computed as run.sh computes it): the first
    # update without warm-up is f / sqrt(32) = 1e-3.
    f = 1e-3 * sqrt(32)
    def("conceptsCopyGentleFactor", fixed(f, 4))
  }'
# The gentle runs' rate at their last update (the log's learning_rate, seed 1).
tail -n 1 $D/gentle-s1.csv | awk -F, "$LIB"'{ split(sprintf("%.1e", $5), m, "e")
  def("conceptsCopyGentleLastRate", m[1] "\\cdot 10^{" (m[2] + 0) "}") }'

# The batches of Multi30k's training set: lengths with <s> and </s>, as the program
# tokenizes (lowercased, each language its rules); the plan sorts by target length, source
# length, position, and adds a pair while (pairs + 1) * max(S, T) <= 2000.
"$T" tokenize --language de --lowercase < $M/train.de | awk '{ print NF + 2 }' > "${TMPDIR:-/tmp}/concepts2.$$.de"
"$T" tokenize --language en --lowercase < $M/train.en | awk '{ print NF + 2 }' |
paste "${TMPDIR:-/tmp}/concepts2.$$.de" - | awk "$LIB"'
  function pct(x) { return fixed(100 * x, x < 0.01 ? 1 : 0) }
  { n++; s[n] = $1; t[n] = $2; key[n] = sprintf("%05d %05d %07d", $2, $1, n) }
  END {
    m = asort(key, k); i = 1; budget = 2000
    while (i <= m) {
      cnt = 0; S = 0; T = 0; rt = 0
      while (i <= m) {
        split(k[i], f, " "); p = f[3] + 0
        ss = S > s[p] ? S : s[p]; tt = T > t[p] ? T : t[p]
        if (cnt > 0 && (cnt + 1) * (ss > tt ? ss : tt) > budget) break
        cnt++; S = ss; T = tt; rs += s[p]; rt += t[p] - 1; i++
      }
      # the decoder reads T - 1 positions and predicts T - 1 targets
      batches++; padS += cnt * S; padT += cnt * (T - 1); realT += rt
      if (batches == 1 || rt < minT) minT = rt; if (rt > maxT) maxT = rt
    }
    def("conceptsPlanBatches", batches)
    def("conceptsPlanSrcPad", pct(1 - rs / padS)); def("conceptsPlanTgtPad", pct(1 - realT / padT))
    def("conceptsPlanTgtMin", grouped(minT)); def("conceptsPlanTgtMax", grouped(maxT))
    for (b = 1; b <= n; b += 128) {
      S = 0; T = 0; c = 0
      for (j = b; j < b + 128 && j <= n; j++) {
        c++; if (s[j] > S) S = s[j]; if (t[j] > T) T = t[j]; qs += s[j]; qt += t[j] - 1
      }
      PS += c * S; PT += c * (T - 1)
    }
    def("conceptsOrderSrcPad", pct(1 - qs / PS)); def("conceptsOrderTgtPad", pct(1 - qt / PT))
    for (j = 1; j <= n; j++) { ms += s[j]; mt += t[j] }
    def("conceptsFixedSrcPad", pct(1 - ms / n / 72)); def("conceptsFixedTgtPad", pct(1 - mt / n / 72))
    # The worked example: the shortest batch at a per-token loss of 3, the longest at 2 (the
    # two losses are given in the text).
    short = 3.0; long = 2.0
    def("conceptsMeanBatches", fixed((short + long) / 2, 2))
    def("conceptsMeanTokens", fixed((minT * short + maxT * long) / (minT + maxT), 2))
    def("conceptsMeanShortShare", pct(minT / (minT + maxT)))
  }'
rm -f "${TMPDIR:-/tmp}/concepts2.$$.de"

# Single precision: the smallest positive float is 2^-149, so a probability below
# e^-(149 ln 2) rounds to zero and its logarithm is -infinity; the largest is
# (2 - 2^-23) 2^127, so exp(z) overflows for z above its logarithm.
awk "$LIB"'BEGIN { def("conceptsFloatLogMin", fixed(149 * log(2), 1))
                   def("conceptsFloatLogMax", fixed(127 * log(2) + log(2 - 2 ^ -23), 1)) }'

# The epoch's loss measured: the validation loss of the last epoch of the starting recipe's
# recorded run (figures/batch-mean/, its README), per token (4th column) and as a mean over
# the validation batches (8th), and the trainer's commit.
B=figures/batch-mean
tail -n 1 $B/start-recipe.csv | awk -F, "$LIB"'{
  def("conceptsBatchMeanPerToken", fixed($4, 3)); def("conceptsBatchMeanBatches", fixed($8, 3))
  def("conceptsBatchMeanWhich", $8 > $4 ? "higher" : "lower") }'
sed -n 's/^commit: //p' $B/start-recipe.run.txt | awk "$LIB"'{ def("conceptsBatchMeanCommit", $1) }'
