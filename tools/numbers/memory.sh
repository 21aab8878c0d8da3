#!/bin/sh
# What attention keeps in memory (the attention chapter, "What attention costs in memory"):
# the attention probabilities of every head of every attention, h n^2 floats a sentence at length n, the least kept for
# the backward pass, against one activation of n x d_model. \memTr...: the shipped
# translator (its heads, layers, width and max_len read from the model file); \memBase...:
# the paper's base model (h = 8, N = 6, d_model = 512) on sequences of 512 tokens.
set -eu
LIB="$(cat tools/numbers/lib.awk)
"
header=$(od -An -t u8 -N8 data/multi30k-de-en.safetensors | tr -d ' ')
head -c $((8 + header)) data/multi30k-de-en.safetensors | tail -c "$header" \
  | grep -o '"\(heads\|layers\|d_model\|max_len\)":"[0-9]*"' | tr -d '"' | awk -F: "$LIB"'
  { v[$1] = $2 }
  END {
    if (!v["heads"] || !v["layers"] || !v["d_model"] || !v["max_len"]) {
      print "memory.sh: the model file lacks heads, layers, d_model or max_len" > "/dev/stderr"; exit 1 }
    h = v["heads"]; N = v["layers"]; d = v["d_model"]; n = v["max_len"]
    # Per layer: the encoder self-attention, the decoder self-attention and cross-attention.
    w = 3 * N * h * n * n
    def("memTrHeads", h); def("memTrLayers", N); def("memTrAttentions", 3 * N)
    def("memTrDk", d / h); def("memTrMaxLen", n)
    def("memTrWeights", grouped(w)); def("memTrMegabytes", fixed(w * 4 / 1e6, 2))
    def("memTrActivation", grouped(n * d))
    hb = 8; Nb = 6; db = 512; nb = 512; wb = 3 * Nb * hb * nb * nb
    def("memBaseAttentions", 3 * Nb); def("memBaseWeights", grouped(wb))
    def("memBaseMegabytes", fixed(wb * 4 / 1e6, 0)); def("memBaseActivation", grouped(nb * db))
    def("memBaseActivationMegabytes", fixed(nb * db * 4 / 1e6, 1))
  }'
