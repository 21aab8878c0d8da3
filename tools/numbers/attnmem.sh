#!/bin/sh
# What this program keeps of attention for the backward pass (the attention chapter, "What
# attention costs in memory"), beside the least that training must keep, which memory.sh
# gives (the attention probabilities alone, h n^2 floats an attention at length n): the
# [B][h][T_q][T_k] arrays that add_attention_acts lays out for every attention, counted in
# tangled/model.c (probs, probs_keep, probs_dropped: the probabilities, their dropout pattern
# as floats, the probabilities after dropout). \memKeptArrays: how many, as a word;
# \memTrKept...: the shipped translator at its max_len (heads, layers and max_len read from
# the model file, as memory.sh does); \memBaseKept...: the paper's base model (h = 8, N = 6)
# on sequences of 512 tokens.
set -eu
LIB="$(cat tools/numbers/lib.awk)
"
arrays=$(awk '/^static AttentionActs add_attention_acts\(/ { inside = 1 }
              inside && /add_act\(a, prefix, "probs/ { n++ }
              inside && /^}/ { inside = 0 }
              END { print n + 0 }' tangled/model.c)
header=$(od -An -t u8 -N8 data/multi30k-de-en.safetensors | tr -d ' ')
head -c $((8 + header)) data/multi30k-de-en.safetensors | tail -c "$header" \
  | grep -o '"\(heads\|layers\|max_len\)":"[0-9]*"' | tr -d '"' \
  | awk -F: -v arrays="$arrays" "$LIB"'
  { v[$1] = $2 }
  END {
    if (arrays < 1 || arrays > 9) {
      print "attnmem.sh: add_attention_acts of tangled/model.c lays out " arrays " arrays of probabilities" > "/dev/stderr"; exit 1 }
    if (!v["heads"] || !v["layers"] || !v["max_len"]) {
      print "attnmem.sh: the model file lacks heads, layers or max_len" > "/dev/stderr"; exit 1 }
    split("one two three four five six seven eight nine", word, " ")
    def("memKeptArrays", word[arrays])
    # Per layer: the encoder self-attention, the decoder self-attention and cross-attention.
    n = v["max_len"]; w = arrays * 3 * v["layers"] * v["heads"] * n * n
    def("memTrKeptFloats", grouped(w)); def("memTrKeptMegabytes", fixed(w * 4 / 1e6, 2))
    wb = arrays * 3 * 6 * 8 * 512 * 512
    def("memBaseKeptMegabytes", fixed(wb * 4 / 1e6, 0))
  }'
