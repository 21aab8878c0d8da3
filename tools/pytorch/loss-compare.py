#!/usr/bin/python3
# The loss of the book (Chapter "Label smoothing, Adam and the learning-rate schedule") and
# PyTorch's losses, side by side on one small batch: which are equal, up to which constant,
# with which gradients. The appendix "The same model in PyTorch" quotes the output, recorded
# in figures/pytorch/loss-compare.txt (see figures/pytorch/README.md); tests/pytorch-loss.sh
# runs it again.
#
# One batch of the copy task's sizes, fixed by a seed: vocabulary V = 11, padding token 0 (the
# copy task's), 3 sentences of 7 target positions, the last two padded. Random logits
# z: [3, 7, 11] in float64, and
#   (a) nn.CrossEntropyLoss(ignore_index=pad, reduction="sum") on the raw logits;
#   (b) the reference's LabelSmoothing: log_softmax, then nn.KLDivLoss(reduction="sum")
#       against the smoothed target t (eps over V - 2 words), with eps = 0 and eps = 0.1;
#   (c) nn.CrossEntropyLoss(label_smoothing=eps): eps / V over ALL V words, padding included.
# It prints "key: value" lines and checks, to within TOLERANCE (absolute, in float64):
#   eps = 0:  (a) == (b), and their gradients with respect to the logits are equal;
#   eps > 0:  (b) == cross-entropy against the same t minus the entropy of t, equal gradients,
#             and that entropy == tokens * (-(1-eps) ln(1-eps) - eps ln(eps/(V-2)));
#   (c) == cross-entropy against q = (1-eps) onehot + eps/V, and its gradient minus (b)'s is
#             exactly t - q (not zero: the two smoothings differ).
# Exit status: 0 when every check holds, 1 otherwise (each failure is named on stderr).
#
# Usage: /usr/bin/python3 tools/pytorch/loss-compare.py > figures/pytorch/loss-compare.txt
import math
import sys

import torch
import torch.nn as nn

TOLERANCE = 1e-10      # absolute, float64: the sums here are round-off apart, about 1e-14
SEED = 0
V, PAD, EPS = 11, 0, 0.1
B, T = 3, 7
LENGTHS = [7, 5, 3]    # real target tokens of each sentence; the rest is padding

failures = []


def out(key, value):
    if isinstance(value, float):
        print("%s: %.12f" % (key, value))
    else:
        print("%s: %s" % (key, value))


def check(name, difference):
    print("%s: %.1e" % (name, difference))
    if not difference <= TOLERANCE:
        failures.append("%s = %.3g > %g" % (name, difference, TOLERANCE))


def smoothed_target(target, size, padding_idx, smoothing):
    """The reference's LabelSmoothing.forward, its true_dist: [N, V]."""
    true_dist = torch.zeros(target.size(0), size, dtype=torch.float64)
    true_dist.fill_(smoothing / (size - 2))
    true_dist.scatter_(1, target.unsqueeze(1), 1.0 - smoothing)
    true_dist[:, padding_idx] = 0
    mask = torch.nonzero(target == padding_idx)
    if mask.dim() > 0:
        true_dist.index_fill_(0, mask.squeeze(), 0.0)
    return true_dist


def loss_and_grad(function, logits):
    """function(z) and its gradient with respect to z, for a fresh leaf z = logits."""
    z = logits.clone().requires_grad_(True)
    loss = function(z)
    loss.backward()
    return loss.item(), z.grad


def entropy(t):
    """-sum t log t over the entries with t > 0."""
    return torch.special.entr(t).sum().item()


torch.manual_seed(SEED)
logits = 2.0 * torch.randn(B, T, V, dtype=torch.float64)        # [B, T, V]
y = torch.randint(1, V, (B, T))                                  # [B, T], no padding yet
for b, n in enumerate(LENGTHS):
    y[b, n:] = PAD
z2 = logits.view(-1, V)                                          # [B*T, V], as the reference
y1 = y.view(-1)                                                  # [B*T]
tokens = int((y1 != PAD).sum().item())

out("torch", torch.__version__)
out("dtype", "float64")
out("tolerance", "%g" % TOLERANCE)
out("seed", SEED)
out("vocab", V)
out("pad", PAD)
out("batch", B)
out("length", T)
out("tokens", tokens)
out("epsilon", "%g" % EPS)

# (a) cross-entropy on raw logits, padding ignored.
ce = nn.CrossEntropyLoss(ignore_index=PAD, reduction="sum")
ce_sum, ce_grad = loss_and_grad(lambda z: ce(z, y1), z2)
out("ce_sum", ce_sum)

# (b) the reference: log-softmax, then KL divergence against the smoothed target.
kl = nn.KLDivLoss(reduction="sum")
t0 = smoothed_target(y1, V, PAD, 0.0)                            # one-hot rows, padding rows 0
kl0_sum, kl0_grad = loss_and_grad(lambda z: kl(z.log_softmax(dim=-1), t0), z2)
out("kl_sum_eps0", kl0_sum)
out("entropy_sum_eps0", entropy(t0))
check("diff_ce_kl_eps0", abs(ce_sum - kl0_sum))
check("grad_maxdiff_ce_kl_eps0", (ce_grad - kl0_grad).abs().max().item())

t = smoothed_target(y1, V, PAD, EPS)                             # [B*T, V]
kl_sum, kl_grad = loss_and_grad(lambda z: kl(z.log_softmax(dim=-1), t), z2)
soft = nn.CrossEntropyLoss(reduction="sum")                      # probability targets
xent_sum, xent_grad = loss_and_grad(lambda z: soft(z, t), z2)
h = entropy(t)
per_token = -(1 - EPS) * math.log(1 - EPS) - EPS * math.log(EPS / (V - 2))
out("kl_sum", kl_sum)
out("xent_sum", xent_sum)
out("entropy_sum", h)
out("entropy_per_token", per_token)
check("diff_entropy_formula", abs(h - tokens * per_token))
check("diff_xent_kl_entropy", abs(xent_sum - kl_sum - h))
check("grad_maxdiff_xent_kl", (xent_grad - kl_grad).abs().max().item())

# (c) PyTorch's own label smoothing: eps / V on every word, the padding word included.
ls = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=EPS, reduction="sum")
ls_sum, ls_grad = loss_and_grad(lambda z: ls(z, y1), z2)
q = (1 - EPS) * nn.functional.one_hot(y1, V).double() + EPS / V  # [B*T, V]
q[y1 == PAD] = 0.0
q_sum, _ = loss_and_grad(lambda z: soft(z, q), z2)
out("torch_ls_sum", ls_sum)
out("torch_ls_entropy_sum", entropy(q))
out("torch_ls_minus_xent", ls_sum - xent_sum)
check("diff_torch_ls_soft_q", abs(ls_sum - q_sum))
check("grad_diff_torch_ls_kl_vs_t_minus_q", ((ls_grad - kl_grad) - (t - q)).abs().max().item())
out("grad_maxdiff_torch_ls_kl", (ls_grad - kl_grad).abs().max().item())
out("eps_over_v", EPS / V)
out("pad_column_torch_ls", q[y1 != PAD][:, PAD].max().item())
out("pad_column_reference", t[:, PAD].max().item())

# The classic bugs. Probabilities fed into CrossEntropyLoss (a second softmax): the loss of
# one row lies between ln(1 + (V-1)/e) and ln(V - 1 + e), whatever the model does.
bug_sum, bug_grad = loss_and_grad(lambda z: ce(z.softmax(dim=-1), y1), z2)
out("double_softmax_sum", bug_sum)
out("double_softmax_per_token", bug_sum / tokens)
out("double_softmax_low", math.log(1 + (V - 1) / math.e))
out("double_softmax_high", math.log(V - 1 + math.e))
out("ce_per_token", ce_sum / tokens)
out("grad_max_ce", ce_grad.abs().max().item())
out("grad_max_double_softmax", bug_grad.abs().max().item())
# Logits fed into NLLLoss (which expects log-probabilities): minus the sum of the target
# logits, no normalization at all, unbounded below.
nll = nn.NLLLoss(ignore_index=PAD, reduction="sum")
out("nll_on_logits_sum", nll(z2, y1).item())
out("nll_on_logprobs_sum", nll(z2.log_softmax(dim=-1), y1).item())

if not (math.log(1 + (V - 1) / math.e) <= bug_sum / tokens <= math.log(V - 1 + math.e)):
    failures.append("double softmax per token outside its bounds")
for failure in failures:
    print("loss-compare: %s" % failure, file=sys.stderr)
out("checks", "failed" if failures else "passed")
sys.exit(1 if failures else 0)
