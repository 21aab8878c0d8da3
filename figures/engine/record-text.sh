#!/bin/sh
# Records the text chapter's measurements over data/multi30k/ into figures/engine/text/:
# run from the repository's top, after `make build`:  sh figures/engine/record-text.sh
# (about half a minute of one core). tools/numbers/engine.sh reads what it writes.
set -eu
T=./transformer D=data/multi30k O=figures/engine/text
mkdir -p $O
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# The tokenizer against Moses: transformer tokenize --compare, each split and language.
for s in train val test2016; do
    for l in de en; do
        $T tokenize --language $l --lowercase --compare $D/$s.lc.norm.tok.$l < $D/$s.$l \
            > $O/compare-$s-$l.txt || true
    done
done
# The round trip of the raw English lines: tokenized (original case) and detokenized, each
# line compared with the raw one; the lines that do not come back, classified.
for s in train val test2016; do
    $T tokenize --language en < $D/$s.en | $T tokenize --language en --detokenize > $tmp/$s.detok
    paste -d '\n' $D/$s.en $tmp/$s.detok | awk -v set=$s '
        NR % 2 == 1 { raw = $0; next }
        { lines++; if ($0 == raw) same++
          else if (raw ~ /&amp;/) amp++
          else if (raw ~ /["”][.,]/) quote++
          else other++ }
        END { printf "%s: %d of %d lines come back; differ: %d with &amp;, %d with . or , after a closing quote, %d other\n",
                     set, same, lines, amp, quote, other }'
done > $O/roundtrip.txt
# The vocabularies of words: transformer vocab, lowercased and cased, train and train+val.
for l in de en; do
    $T vocab --language $l --lowercase $D/train.$l > $O/vocab-train-lc-$l.txt
    $T vocab --language $l $D/train.$l > $O/vocab-train-cased-$l.txt
    $T vocab --language $l $D/train.$l $D/val.$l > $O/vocab-trainval-cased-$l.txt
done
# The subwords: transformer vocab --subwords 8000 over both training files (lowercased).
$T vocab --lowercase --subwords 8000 --save $tmp/subwords.txt $D/train.de $D/train.en \
    > $O/subwords.txt
# Unknown tokens of test2016: words outside the lowercased training vocabulary of words,
# and pieces <unk> with the subwords; and the pieces a token of each training file becomes.
for l in de en; do
    $T vocab --language $l --lowercase --save $tmp/words.$l $D/train.$l > /dev/null
    $T tokenize --language $l --lowercase < $D/test2016.$l > $tmp/test.$l
    $T tokenize --language $l --lowercase --subwords $tmp/subwords.txt < $D/test2016.$l \
        > $tmp/test-pieces.$l
    awk -v l=$l 'FNR == NR { known[$0] = 1; next }
        { for (i = 1; i <= NF; i++) { n++; if (!($i in known)) unk++ } }
        END { printf "%s test2016: %d tokens, %d outside the vocabulary of words\n", l, n, unk }' \
        $tmp/words.$l $tmp/test.$l
    awk -v l=$l '{ for (i = 1; i <= NF; i++) { n++; if ($i == "<unk>") unk++ } }
        END { printf "%s test2016: %d pieces, %d <unk>\n", l, n, unk }' $tmp/test-pieces.$l
    $T tokenize --language $l --lowercase < $D/train.$l | wc -w | sed "s/^/$l train tokens: /"
    $T tokenize --language $l --lowercase --subwords $tmp/subwords.txt < $D/train.$l | wc -w \
        | sed "s/^/$l train pieces: /"
done > $O/unknown.txt
