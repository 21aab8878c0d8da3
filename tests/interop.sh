#!/bin/sh
# The model file as an interchange format (issue 36), both ways, with plain PyTorch:
# 0. tools/transformer_torch.py tokenizes as the program does: the German of test2016 and val
#    as `transformer tokenize --language de --lowercase` (what translate does to its input),
#    and joins the English tokens of test2016 back as `transformer tokenize --detokenize`,
#    byte for byte;
# 1. it loads the shipped model into the Annotated Transformer's modules and translates the
#    first 100 lines of test2016 greedily, raw German in and English text out: the same 100
#    translations as `transformer translate --beam 1` (the log-probabilities are compared in
#    the Check test model_file_read_by_pytorch, within 1e-4);
# 2. a small Annotated Transformer trained in PyTorch for a few steps and saved by the
#    reader's save() translates with `transformer translate --model`, to the reader's own
#    greedy translations of it.
# Skipped, with status 0 and a line that says so, where /usr/bin/python3 has no torch
# (tools/install-deps --bench installs python3-torch).
set -eu
cd "$(dirname "$0")/.."
T=${TRANSFORMER:-./transformer}
PY=/usr/bin/python3
if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "interop: skipped (python3-torch is not installed; tools/install-deps --bench installs it)"
  exit 0
fi
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT

# 0. The tokenizer and the detokenizer, in Python.
for f in test2016.de val.de; do
  "$T" tokenize --language de --lowercase < "data/multi30k/$f" > "$W/program.tok"
  "$PY" tools/transformer_torch.py tokenize de --lowercase < "data/multi30k/$f" > "$W/pytorch.tok"
  if ! cmp -s "$W/program.tok" "$W/pytorch.tok"; then
    diff "$W/program.tok" "$W/pytorch.tok" | head -20 >&2
    echo "interop: $f tokenized otherwise in Python" >&2
    exit 1
  fi
done
f=data/multi30k/test2016.lc.norm.tok.en
"$T" tokenize --language en --detokenize < "$f" > "$W/program.txt"
"$PY" tools/transformer_torch.py detokenize en < "$f" > "$W/pytorch.txt"
if ! cmp -s "$W/program.txt" "$W/pytorch.txt"; then
  diff "$W/program.txt" "$W/pytorch.txt" | head -20 >&2
  echo "interop: $f detokenized otherwise in Python" >&2
  exit 1
fi
echo "interop: test2016.de ($(wc -l < data/multi30k/test2016.de) lines) and val.de ($(wc -l < data/multi30k/val.de)) tokenized, and $(wc -l < "$f") lines of English detokenized, in Python as by the program"

# 1. The shipped model, read by PyTorch: raw German in, English text out.
head -100 data/multi30k/test2016.de > "$W/t.de"
"$T" translate --beam 1 < "$W/t.de" > "$W/program.en"
"$PY" tools/transformer_torch.py translate data/multi30k-de-en.safetensors --raw \
  < "$W/t.de" > "$W/pytorch.en"
same=$(paste -d '\n' "$W/program.en" "$W/pytorch.en" | awk 'NR % 2 { a = $0; next } a == $0' | wc -l)
if ! cmp -s "$W/program.en" "$W/pytorch.en"; then
  diff "$W/program.en" "$W/pytorch.en" | head -20 >&2
  echo "interop: the shipped model: $same of 100 translations identical in PyTorch" >&2
  exit 1
fi
echo "interop: the shipped model in PyTorch: $same of 100 greedy translations identical"

# 2. A model trained in PyTorch, saved by the reader, translated by the program.
head -300 data/multi30k/train.de | "$T" tokenize --language de --lowercase > "$W/train.de"
head -300 data/multi30k/train.en | "$T" tokenize --language en --lowercase > "$W/train.en"
"$PY" - "$W" <<'EOF'
import collections, sys
import torch
sys.path.insert(0, "tools")
import transformer_torch as tt

w = sys.argv[1]
pairs = list(zip(open(w + "/train.de").read().split("\n"), open(w + "/train.en").read().split("\n")))[:300]
def vocabulary(lines):
    counts = collections.Counter(t for line in lines for t in line.split())
    return tt.SPECIALS + sorted(t for t, n in counts.items() if n >= 2 and t not in tt.SPECIALS)
src_vocab, tgt_vocab = vocabulary(p[0] for p in pairs), vocabulary(p[1] for p in pairs)
s = dict(src_vocab=len(src_vocab), tgt_vocab=len(tgt_vocab), layers=1, d_model=32, d_ff=64,
         heads=4, max_len=64, pre_norm=True, annotated=False, epsilon=1e-6, tied=True,
         tied_source=False)
torch.manual_seed(1)
model = tt.EncoderDecoder(s)
model.generator.proj.weight = model.tgt_embed[0].lut.weight        # tied, as the file says
si = {t: i for i, t in enumerate(src_vocab)}
ti = {t: i for i, t in enumerate(tgt_vocab)}
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
for step in range(30):
    for src_line, tgt_line in pairs[step * 10 % 300:][:10]:
        src = torch.tensor([tt.numbered(src_line, si, False, 64)])
        tgt = torch.tensor([tt.numbered(tgt_line, ti, False, 64)])
        n = tgt.size(1) - 1
        memory = model.encode(src, torch.ones(1, 1, src.size(1), dtype=torch.bool))
        out = model.decode(memory, torch.ones(1, 1, src.size(1), dtype=torch.bool), tgt[:, :-1],
                           torch.tril(torch.ones(1, n, n, dtype=torch.bool)))
        loss = -model.generator(out).gather(-1, tgt[:, 1:].unsqueeze(-1)).sum()
        optimizer.zero_grad(); loss.backward(); optimizer.step()
tt.save(model, src_vocab, tgt_vocab, w + "/pytorch.safetensors")
print("interop: a model trained in PyTorch for 30 steps (last loss %.2f), saved" % loss.item())
EOF
head -20 data/multi30k/val.de > "$W/v.de"
"$T" translate --model "$W/pytorch.safetensors" --beam 1 < "$W/v.de" > "$W/program2.en"
"$PY" tools/transformer_torch.py translate "$W/pytorch.safetensors" --raw < "$W/v.de" \
  > "$W/pytorch2.en"
"$PY" tools/transformer_torch.py check "$W/pytorch.safetensors" > /dev/null
if ! cmp -s "$W/program2.en" "$W/pytorch2.en" || [ "$(wc -l < "$W/program2.en")" -ne 20 ]; then
  diff "$W/program2.en" "$W/pytorch2.en" | head -20 >&2
  echo "interop: the PyTorch-saved model translates otherwise with the program" >&2
  exit 1
fi
echo "interop: the PyTorch-saved model loads in the program (checksum and every key checked) and translates 20 of 20 lines as in PyTorch"
