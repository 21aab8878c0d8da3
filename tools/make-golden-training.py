#!/usr/bin/python3
"""Golden values for the training pieces of the C Annotated Transformer.

Writes tests/golden/training.safetensors (relative to the repository root, found
from this file's location). The values come from PyTorch, computed in float64
and stored as float32 (F32) or int32 (I32). Covered: label smoothing with the
reference's LabelSmoothing + SimpleLossCompute, the warm-up learning-rate
schedule `rate`, and three steps of torch.optim.Adam driven by LambdaLR.

Run from anywhere, with Debian's system Python and python3-torch:

    /usr/bin/python3 tools/make-golden-training.py

The run is deterministic (fixed seeds, one thread). A second run writes the
same file byte for byte. The file layout is the one tools/make-golden.py uses,
and this script calls that file's write_safetensors / read_safetensors. The
layout is: an 8-byte little-endian header length N, then N bytes of JSON (keys
sorted, separators "," and ":", space-padded so that 8 + N is a multiple of 8),
then the tensors, little-endian and contiguous, in sorted-name order.

Label smoothing (reference code, float64):
    true_dist = fill(smoothing / (V - 2)); true_dist[r, target[r]] = 1 - smoothing;
    true_dist[:, pad] = 0; rows with target == pad are all 0;
    loss = nn.KLDivLoss(reduction="sum")(logprobs, true_dist) / ntokens,
    ntokens = number of targets != pad (SimpleLossCompute's norm).
  torch 1.13 evaluates KLDivLoss term by term as xlogy(t, t) - t * x. So a
  term with t = 0 and x = -inf gives 0 * -inf = nan, and the sum is nan. The
  "correct" values use the convention 0 log 0 = 0 and sum t (log t - x) over
  t > 0 only. Such a sum is +inf when some t > 0 meets x = -inf.
  Every loss is computed from the stored float32 logprobs (widened to float64),
  so the golden values agree exactly with the stored inputs.

  ls.course.*     V=5, pad 0, smoothing 0.4, targets [2,1,0,3,3]. Five
                  logprobs rows, each log([0, 0.2, 0.7, 0.1, 0]) (the course's
                  example_label_smoothing), with -inf where the probability is 0.
                  Stored: logprobs [5,5], targets [5], true_dist [5,5],
                  loss_torch [1] (the reference value, nan: 0*(-inf) at the
                  padding column; column 4 also gives +inf terms), and loss [1]
                  (correct convention, +inf: t = 0.4/3 > 0 meets x = -inf in
                  column 4). ntokens = 4.
  ls.finite.*     V=7, pad 0, smoothing 0.1, targets [3,1,0,6,2,0], logprobs =
                  log_softmax of seeded random logits [6,7]. Stored: logprobs,
                  targets, true_dist, loss [1] (ntokens 4), and grad [6,7] =
                  d loss / d logprobs by autograd (= -true_dist / 4).
  ls.nosmooth.*   the same logprobs and targets, smoothing 0. Stored:
                  true_dist, loss (= mean NLL over the 4 non-pad tokens), grad.
  ls.confident.*  the course's penalization figure: V=5, pad 0, smoothing 0.1,
                  one row, target 1. For x = 1..99, d = x + 3 (the course's
                  `d = x + 3 * 1`) and predict = [0, x/d, 1/d, 1/d, 1/d].
                  Stored: x I32 [99], logprobs F32 [99,5] (= log predict, -inf in
                  column 0), loss [99] (the reference criterion, ntokens 1: nan
                  for every x under torch 1.13, from 0*(-inf) in column 0), and
                  loss_correct [99] (0 log 0 = 0; finite).

Learning rate (the reference's rate, float64):
    rate(step, d, f, w) = f * d**-0.5 * min(step**-0.5, step * w**-1.5), step 0 -> 1
  rate.steps I32 [9] = [0,1,2,100,3999,4000,4001,10000,20000]
  rate.values F32 [9] (d=512, f=1, w=4000); rate.values_256 F32 [9] (d=256, f=1, w=4000)

Adam (torch.optim.Adam, betas (0.9, 0.98), eps 1e-9, no weight decay, no
amsgrad, float64 copy of the parameter). The learning rate comes from
LambdaLR(optimizer, lambda s: rate(s, 512, 1.0, 400)) with base lr 1.0, stepped
as the reference's run_epoch does: optimizer.step() and then scheduler.step().
LambdaLR sets lr = rate(0) at construction. So optimizer step k (k = 1, 2, 3)
uses lr = rate(k - 1): [rate(0), rate(1), rate(2)] = [rate(1), rate(1), rate(2)],
because rate treats step 0 as step 1.
  adam.param0 F32 [4,3], adam.grad1..3 F32 [4,3] (seeded), adam.lr F32 [3],
  after step k: adam.param{k}, adam.exp_avg{k}, adam.exp_avg_sq{k} F32 [4,3].
  Adam uses the float32 values of param0 and the grads, widened to float64.

Self-check, run after writing: the script reads the file back (layout checks
included) and compares every tensor. It recomputes true_dist and every loss in
numpy, independently of torch, checks grad = -true_dist / ntokens, recomputes
rate against a real LambdaLR run of 20000 steps (the course's
example_learning_schedule), and recomputes the Adam steps in numpy.
"""

import importlib.util
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import LambdaLR

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_PATH = os.path.join(ROOT, "tests", "golden", "training.safetensors")

FINITE_SEED = 3001   # logits of the finite / nosmooth cases
ADAM_SEED = 3002     # adam.param0 and adam.grad1..3

RATE_STEPS = [0, 1, 2, 100, 3999, 4000, 4001, 10000, 20000]
ADAM_SCHEDULE = (512, 1.0, 400)       # model_size, factor, warmup
ADAM_BETAS = (0.9, 0.98)
ADAM_EPS = 1e-9


def load_make_golden():
    """tools/make-golden.py as a module (for write_safetensors / read_safetensors)."""
    path = os.path.join(ROOT, "tools", "make-golden.py")
    spec = importlib.util.spec_from_file_location("make_golden", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------
# Reference code (the Annotated Transformer), unchanged apart from dtype handling
# ---------------------------------------------------------------------------

class LabelSmoothing(nn.Module):
    "Implement label smoothing."

    def __init__(self, size, padding_idx, smoothing=0.0):
        super().__init__()
        self.criterion = nn.KLDivLoss(reduction="sum")
        self.padding_idx = padding_idx
        self.confidence = 1.0 - smoothing
        self.smoothing = smoothing
        self.size = size
        self.true_dist = None

    def forward(self, x, target):
        assert x.size(1) == self.size
        true_dist = x.data.clone()
        true_dist.fill_(self.smoothing / (self.size - 2))
        true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
        true_dist[:, self.padding_idx] = 0
        mask = torch.nonzero(target.data == self.padding_idx)
        if mask.dim() > 0:
            true_dist.index_fill_(0, mask.squeeze(), 0.0)
        self.true_dist = true_dist
        return self.criterion(x, true_dist.clone().detach())


def rate(step, model_size, factor, warmup):
    """
    we have to default the step to 1 for LambdaLR function
    to avoid zero raising to negative power.
    """
    if step == 0:
        step = 1
    return factor * (
        model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5))
    )


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def f32_round(a):
    """float64 numpy array -> the float64 value of its float32 rounding."""
    return np.asarray(a, dtype=np.float64).astype(np.float32).astype(np.float64)


def reference_loss(logprobs, targets, size, pad, smoothing, want_grad=False):
    """SimpleLossCompute's sloss = criterion(x, y) / norm, in float64 torch.

    Returns (loss float, true_dist ndarray, grad ndarray or None)."""
    x = torch.tensor(logprobs, dtype=torch.float64, requires_grad=want_grad)
    y = torch.tensor(targets, dtype=torch.long)
    norm = int((y != pad).sum())
    crit = LabelSmoothing(size, pad, smoothing)
    sloss = crit(x, y) / norm
    grad = None
    if want_grad:
        sloss.backward()
        grad = x.grad.detach().numpy().copy()
    return float(sloss.item()), crit.true_dist.detach().numpy().copy(), grad


def np_true_dist(n_rows, size, targets, pad, smoothing):
    """Independent numpy construction of the smoothed target distribution."""
    t = np.empty((n_rows, size), dtype=np.float64)
    for r in range(n_rows):
        for c in range(size):
            if targets[r] == pad or c == pad:
                t[r, c] = 0.0
            elif c == targets[r]:
                t[r, c] = 1.0 - smoothing
            else:
                t[r, c] = smoothing / (size - 2)
    return t


def np_kl_correct(true_dist, logprobs, ntokens):
    """sum over t > 0 of t (log t - x), / ntokens; 0 log 0 = 0; +inf if x = -inf meets t > 0."""
    total = 0.0
    for t, x in zip(true_dist.ravel(), logprobs.ravel()):
        if t > 0:
            total += t * (math.log(t) - x)     # x = -inf gives +inf
    return total / ntokens


def log_or_neg_inf(p):
    out = np.full(p.shape, -np.inf)
    np.log(p, out=out, where=p > 0)
    return out


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------

def case_course(tensors, info):
    V, pad, smoothing = 5, 0, 0.4
    targets = np.array([2, 1, 0, 3, 3], dtype=np.int64)
    predict = np.array([[0, 0.2, 0.7, 0.1, 0]] * 5, dtype=np.float64)
    logprobs = f32_round(log_or_neg_inf(predict))
    loss_torch, true_dist, _ = reference_loss(logprobs, targets, V, pad, smoothing)
    ntokens = int((targets != pad).sum())
    loss = np_kl_correct(true_dist, logprobs, ntokens)

    # independent checks
    assert np.array_equal(true_dist, np_true_dist(5, V, targets, pad, smoothing))
    elem = nn.KLDivLoss(reduction="none")(torch.tensor(logprobs), torch.tensor(true_dist)).numpy()
    info["course_nan_at"] = [tuple(int(i) for i in ix) for ix in np.argwhere(np.isnan(elem))]
    info["course_inf_at"] = [tuple(int(i) for i in ix) for ix in np.argwhere(np.isinf(elem))]
    info["course_loss_torch"] = loss_torch
    info["course_loss"] = loss

    tensors["ls.course.logprobs"] = ("F32", logprobs)
    tensors["ls.course.targets"] = ("I32", targets)
    tensors["ls.course.true_dist"] = ("F32", true_dist)
    tensors["ls.course.loss_torch"] = ("F32", np.array([loss_torch]))
    tensors["ls.course.loss"] = ("F32", np.array([loss]))


def case_finite(tensors, info):
    V, pad = 7, 0
    targets = np.array([3, 1, 0, 6, 2, 0], dtype=np.int64)
    g = torch.Generator().manual_seed(FINITE_SEED)
    logits = 2.0 * torch.randn(6, V, generator=g, dtype=torch.float64)
    logprobs = f32_round(torch.log_softmax(logits, dim=-1).numpy())
    ntokens = int((targets != pad).sum())
    assert ntokens == 4
    tensors["ls.finite.logprobs"] = ("F32", logprobs)
    tensors["ls.finite.targets"] = ("I32", targets)

    for name, smoothing in (("finite", 0.1), ("nosmooth", 0.0)):
        loss, true_dist, grad = reference_loss(logprobs, targets, V, pad, smoothing, want_grad=True)
        # independent checks
        assert np.array_equal(true_dist, np_true_dist(6, V, targets, pad, smoothing)), name
        want = np_kl_correct(true_dist, logprobs, ntokens)
        assert abs(loss - want) <= 1e-13 * abs(want), (name, loss, want)
        assert np.allclose(grad, -true_dist / ntokens, rtol=1e-15, atol=1e-17), name
        if smoothing == 0.0:
            nll = -sum(logprobs[r, targets[r]] for r in range(6) if targets[r] != pad) / ntokens
            assert abs(loss - nll) <= 1e-13 * abs(nll), (loss, nll)
        info[name + "_loss"] = loss
        tensors["ls.%s.true_dist" % name] = ("F32", true_dist)
        tensors["ls.%s.loss" % name] = ("F32", np.array([loss]))
        tensors["ls.%s.grad" % name] = ("F32", grad)


def case_confident(tensors, info):
    V, pad, smoothing = 5, 0, 0.1
    xs = np.arange(1, 100, dtype=np.int64)
    logprobs = np.empty((len(xs), V))
    loss_ref = np.empty(len(xs))
    loss_ok = np.empty(len(xs))
    nan_cols = set()
    for i, x in enumerate(xs):
        d = x + 3 * 1
        predict = np.array([[0, x / d, 1 / d, 1 / d, 1 / d]], dtype=np.float64)
        lp = f32_round(log_or_neg_inf(predict))
        logprobs[i] = lp[0]
        loss_ref[i], true_dist, _ = reference_loss(lp, np.array([1]), V, pad, smoothing)
        assert np.array_equal(true_dist, np_true_dist(1, V, [1], pad, smoothing))
        loss_ok[i] = np_kl_correct(true_dist, lp, 1)
        # the same value from the torch terms, with nan terms (0 * -inf) dropped
        elem = nn.KLDivLoss(reduction="none")(torch.tensor(lp), torch.tensor(true_dist)).numpy()
        nan_cols.update(int(c) for c in np.argwhere(np.isnan(elem))[:, 1])
        scale = sum(t * (abs(math.log(t)) + abs(v))          # size of the cancelling parts
                    for t, v in zip(true_dist.ravel(), lp.ravel()) if t > 0)
        assert abs(np.nansum(elem) - loss_ok[i]) <= 1e-14 * scale, (x, loss_ok[i])
        assert np.isfinite(loss_ok[i])
    info["confident_nan_count"] = int(np.isnan(loss_ref).sum())
    info["confident_nan_cols"] = sorted(nan_cols)
    info["confident_loss"] = loss_ref
    info["confident_loss_correct"] = loss_ok
    tensors["ls.confident.x"] = ("I32", xs)
    tensors["ls.confident.logprobs"] = ("F32", logprobs)
    tensors["ls.confident.loss"] = ("F32", loss_ref)
    tensors["ls.confident.loss_correct"] = ("F32", loss_ok)


def case_rate(tensors, info):
    steps = np.array(RATE_STEPS, dtype=np.int64)
    v512 = np.array([rate(int(s), 512, 1, 4000) for s in steps])
    v256 = np.array([rate(int(s), 256, 1, 4000) for s in steps])

    # independent check: closed form, and a real LambdaLR run as in the course's
    # example_learning_schedule (lr recorded before each optimizer.step()).
    for vals, size in ((v512, 512), (v256, 256)):
        for s, v in zip(steps, vals):
            s1 = max(int(s), 1)
            want = (1.0 / math.sqrt(size)) * (1.0 / math.sqrt(s1) if s1 >= 4000
                                              else s1 / 4000.0 ** 1.5)
            assert abs(v - want) <= 1e-15 * want, (size, s, v, want)
        dummy = torch.nn.Linear(1, 1)
        opt = torch.optim.Adam(dummy.parameters(), lr=1, betas=ADAM_BETAS, eps=ADAM_EPS)
        sched = LambdaLR(optimizer=opt, lr_lambda=lambda step: rate(step, size, 1, 4000))
        trace = []
        for _ in range(max(RATE_STEPS) + 1):
            trace.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        for s, v in zip(steps, vals):
            assert trace[s] == v, (size, s, trace[s], v)

    info["rate_values"] = v512
    info["rate_values_256"] = v256
    tensors["rate.steps"] = ("I32", steps)
    tensors["rate.values"] = ("F32", v512)
    tensors["rate.values_256"] = ("F32", v256)


def case_adam(tensors, info):
    g = torch.Generator().manual_seed(ADAM_SEED)
    param0 = f32_round(torch.randn(4, 3, generator=g, dtype=torch.float64).numpy())
    grads = [f32_round(torch.randn(4, 3, generator=g, dtype=torch.float64).numpy())
             for _ in range(3)]

    p = torch.nn.Parameter(torch.tensor(param0, dtype=torch.float64))
    opt = torch.optim.Adam([p], lr=1.0, betas=ADAM_BETAS, eps=ADAM_EPS,
                           weight_decay=0, amsgrad=False)
    sched = LambdaLR(optimizer=opt, lr_lambda=lambda step: rate(step, *ADAM_SCHEDULE))
    lrs, states = [], []
    for k in range(3):
        p.grad = torch.tensor(grads[k], dtype=torch.float64)
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        opt.zero_grad(set_to_none=True)
        sched.step()
        st = opt.state[p]
        states.append((p.detach().numpy().copy(), st["exp_avg"].numpy().copy(),
                       st["exp_avg_sq"].numpy().copy()))

    # independent checks: the lr follows LambdaLR's rate(k - 1); numpy Adam
    want_lrs = [rate(k, *ADAM_SCHEDULE) for k in range(3)]
    assert lrs == want_lrs, (lrs, want_lrs)
    b1, b2 = ADAM_BETAS
    w, m, v = param0.copy(), np.zeros_like(param0), np.zeros_like(param0)
    for k in range(3):
        t = k + 1
        m = b1 * m + (1 - b1) * grads[k]
        v = b2 * v + (1 - b2) * grads[k] * grads[k]
        m_hat = m / (1 - b1 ** t)
        v_hat = v / (1 - b2 ** t)
        w = w - lrs[k] * m_hat / (np.sqrt(v_hat) + ADAM_EPS)
        tp, tm, tv = states[k]
        assert np.allclose(tp, w, rtol=1e-14, atol=0), k
        assert np.allclose(tm, m, rtol=1e-14, atol=0), k
        assert np.allclose(tv, v, rtol=1e-14, atol=0), k
        assert not np.array_equal(tp, param0)

    info["adam_lr"] = lrs
    tensors["adam.param0"] = ("F32", param0)
    tensors["adam.lr"] = ("F32", np.array(lrs))
    for k in range(3):
        tensors["adam.grad%d" % (k + 1)] = ("F32", grads[k])
        tensors["adam.param%d" % (k + 1)] = ("F32", states[k][0])
        tensors["adam.exp_avg%d" % (k + 1)] = ("F32", states[k][1])
        tensors["adam.exp_avg_sq%d" % (k + 1)] = ("F32", states[k][2])


# ---------------------------------------------------------------------------

def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    mg = load_make_golden()

    tensors, info = {}, {}
    case_course(tensors, info)
    case_finite(tensors, info)
    case_confident(tensors, info)
    case_rate(tensors, info)
    case_adam(tensors, info)

    metadata = {"generator": "tools/make-golden-training.py", "torch": torch.__version__,
                "ls_course": "V=5 pad=0 smoothing=0.4 ntokens=4",
                "ls_finite": "V=7 pad=0 smoothing=0.1 ntokens=4",
                "ls_nosmooth": "V=7 pad=0 smoothing=0.0 ntokens=4",
                "ls_confident": "V=5 pad=0 smoothing=0.1 target=1 d=x+3 ntokens=1",
                "rate": "model_size=512|256 factor=1 warmup=4000",
                "adam": "betas=(0.9,0.98) eps=1e-9 schedule=rate(k-1,512,1.0,400)"}
    os.makedirs(os.path.dirname(OUT_PATH), exist_ok=True)
    mg.write_safetensors(OUT_PATH, tensors, metadata)

    # read back: layout, names, dtypes, bit-exact contents
    meta_back, back = mg.read_safetensors(OUT_PATH)
    assert meta_back == metadata
    assert sorted(back) == sorted(tensors)
    for name, (dtype, array) in tensors.items():
        want = np.ascontiguousarray(array, dtype=mg.DTYPES[dtype])
        assert same_bits(back[name], want), name
    # the stored float32 values against the float64 results (nan/inf preserved)
    assert np.isnan(back["ls.course.loss_torch"][0])
    assert np.isposinf(back["ls.course.loss"][0])
    assert np.isnan(back["ls.confident.loss"]).all()
    assert np.isfinite(back["ls.confident.loss_correct"]).all()
    assert np.array_equal(back["ls.finite.grad"], -back["ls.finite.true_dist"] / np.float32(4))

    size = os.path.getsize(OUT_PATH)
    print("wrote %s (%d bytes, %d tensors); self-check passed"
          % (os.path.relpath(OUT_PATH, ROOT), size, len(tensors)))
    for name in sorted(back):
        print("  %-26s %s %s" % (name, tensors[name][0], list(back[name].shape)))
    print("ls.course.loss_torch = %r   (nan terms at %s, +inf terms at %s)"
          % (info["course_loss_torch"], info["course_nan_at"], info["course_inf_at"]))
    print("ls.course.loss       = %r" % info["course_loss"])
    print("ls.finite.loss = %.9g   ls.nosmooth.loss = %.9g"
          % (info["finite_loss"], info["nosmooth_loss"]))
    print("ls.confident.loss: %d of 99 nan (0*(-inf) in column(s) %s); first 5 %s"
          % (info["confident_nan_count"], info["confident_nan_cols"],
             list(info["confident_loss"][:5])))
    print("ls.confident.loss_correct first 5: %s"
          % ["%.9g" % v for v in info["confident_loss_correct"][:5]])
    print("rate.steps      %s" % RATE_STEPS)
    print("rate.values     %s" % ["%.9g" % v for v in info["rate_values"]])
    print("rate.values_256 %s" % ["%.9g" % v for v in info["rate_values_256"]])
    print("adam.lr         %s  (= rate(0), rate(1), rate(2) of (512, 1.0, 400))"
          % ["%.9g" % v for v in info["adam_lr"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
