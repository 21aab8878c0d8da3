#!/bin/sh
# The numbers of the appendix "The same model in PyTorch": PyTorch's losses beside the
# reference's on one small batch, recorded by tools/pytorch/loss-compare.py in
# figures/pytorch/loss-compare.txt ("key: value" lines; figures/pytorch/README.md names the
# command, date, torch version and machine). Prints \pt... macros.
set -eu
F=figures/pytorch/loss-compare.txt
LIB="$(cat tools/numbers/lib.awk)
"
awk -F': ' "$LIB"'
  # sci(x): x as a power of ten with two digits, 1.2 times ten to the -14 (0 as 0).
  function sci(x,    e, m) {
      if (x == 0) return "0"
      e = int(log(x) / log(10)); if (10 ^ e > x) e--
      m = x / 10 ^ e
      return sprintf("\\ensuremath{%.1f\\cdot 10^{%d}}", m, e)
  }
  { v[$1] = $2 }
  /^(diff_|grad_diff_)/ || $1 == "grad_maxdiff_ce_kl_eps0" || $1 == "grad_maxdiff_xent_kl" {
      if ($2 + 0 > worst) worst = $2 + 0; checked++ }
  END {
      if (v["checks"] != "passed") { print "pytorch.sh: the recorded checks did not pass" > "/dev/stderr"; exit 1 }
      split(v["torch"], version, ".")
      def("ptTorchVersion", version[1] "." version[2])
      def("ptVocab", v["vocab"]); def("ptPad", v["pad"])
      def("ptBatch", v["batch"]); def("ptLength", v["length"]); def("ptTokens", v["tokens"])
      def("ptEpsilon", v["epsilon"])
      split(v["tolerance"], tol, "e")
      def("ptTolerance", "\\ensuremath{10^{" (tol[2] + 0) "}}")
      def("ptChecks", checked)
      def("ptWorstDifference", sci(worst))
      def("ptCeSum", fixed(v["ce_sum"], 4))
      def("ptCePerToken", fixed(v["ce_per_token"], 3))
      def("ptKlSumZero", fixed(v["kl_sum_eps0"], 4))
      def("ptKlSum", fixed(v["kl_sum"], 4))
      def("ptXentSum", fixed(v["xent_sum"], 4))
      def("ptEntropySum", fixed(v["entropy_sum"], 4))
      def("ptEntropyPerToken", fixed(v["entropy_per_token"], 4))
      def("ptTorchLsSum", fixed(v["torch_ls_sum"], 4))
      def("ptTorchLsEntropySum", fixed(v["torch_ls_entropy_sum"], 4))
      def("ptTorchLsMinusXent", fixed(v["torch_ls_minus_xent"], 4))
      def("ptGradMaxDiffLs", fixed(v["grad_maxdiff_torch_ls_kl"], 5))
      def("ptEpsOverV", fixed(v["eps_over_v"], 5))
      def("ptDoubleSoftmaxPerToken", fixed(v["double_softmax_per_token"], 3))
      def("ptDoubleSoftmaxLow", fixed(v["double_softmax_low"], 3))
      def("ptDoubleSoftmaxHigh", fixed(v["double_softmax_high"], 3))
      def("ptGradMaxCe", fixed(v["grad_max_ce"], 4))
      def("ptGradMaxDoubleSoftmax", fixed(v["grad_max_double_softmax"], 4))
      def("ptNllOnLogitsSum", fixed(v["nll_on_logits_sum"], 4))
      def("ptNllOnLogprobsSum", fixed(v["nll_on_logprobs_sum"], 4))
  }' "$F"
