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
# 3. every rule compared: the lines of tests/interop-rules.txt, one or more for each rule of
#    the tokenizer and the detokenizer (quotes, apostrophes, brackets, numbers, abbreviations,
#    hyphens, symbols, other scripts, a character with no piece, a source past max_len, outputs
#    that stop at the decoding limit, a line over 1000 bytes), give the same tokens (de and en,
#    cased and lowercased), pieces of the shipped model's vocabulary, joined text (en and de)
#    and greedy translations (lowercase and cased) in Python as in the program, byte for
#    byte; a difference is printed with its rule and line.
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

# 3. Every rule compared: tests/interop-rules.txt, a line or more for each rule.
R=tests/interop-rules.txt
max_len=$("$PY" - "$R" "$W" data/multi30k-de-en.safetensors <<'EOF'
import json, re, struct, sys
rules, w, model = sys.argv[1:]
out = {k: (open("%s/%s.txt" % (w, k), "wb"), open("%s/%s.names" % (w, k), "w", encoding="utf-8"))
       for k in ("de", "en", "tok", "long")}
for number, line in enumerate(open(rules, encoding="utf-8").read().split("\n"), 1):
    if not line.strip() or line.startswith("#"):
        continue
    kind, rule, text = (line.split("\t", 2) + ["", ""])[:3]
    text = re.sub(r"\\u\{([0-9A-Fa-f]{1,6})\}", lambda m: chr(int(m.group(1), 16)), text)
    if kind not in out or not rule or "\n" in text or "\r" in text:
        sys.exit("%s:%d: not KIND<TAB>RULE<TAB>TEXT, KIND de, en, tok or long" % (rules, number))
    if kind == "long":
        text *= 1000 // len(text.encode()) + 1
    out[kind][0].write(text.encode("utf-8") + b"\n")
    out[kind][1].write("%s:%d: %s: %r\n" % (rules, number, rule, text))
with open(model, "rb") as f:
    metadata = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))["__metadata__"]
open(w + "/vocab", "w", encoding="utf-8", newline="\n").write(metadata["vocab.src"])
print(metadata["max_len"])
EOF
)
cat "$W/de.txt" "$W/en.txt" > "$W/text.txt"
cat "$W/de.names" "$W/en.names" > "$W/text.names"
cat "$W/de.txt" "$W/long.txt" > "$W/translate.txt"
cat "$W/de.names" "$W/long.names" > "$W/translate.names"
program() {   # OUTPUT INPUT ARGUMENTS...: the program's lines into $W/OUTPUT.program
  name=$1 input=$2
  shift 2
  if ! "$T" "$@" < "$input" > "$W/$name.program" 2> "$W/$name.program-warnings"; then
    cat "$W/$name.program-warnings" >&2
    echo "interop: transformer $*: a line of tests/interop-rules.txt refused" >&2
    exit 1
  fi
}
pytorch() {   # OUTPUT INPUT ARGUMENTS...: Python's lines into $W/OUTPUT.pytorch
  name=$1 input=$2
  shift 2
  if ! "$PY" tools/transformer_torch.py "$@" < "$input" > "$W/$name.pytorch" \
       2> "$W/$name.pytorch-warnings"; then
    cat "$W/$name.pytorch-warnings" >&2
    echo "interop: transformer_torch.py $*: a line of tests/interop-rules.txt refused" >&2
    exit 1
  fi
}
same() {   # WHAT NAMES OUTPUT: the same bytes, or each line that differs with its rule, exit 1
  if ! cmp -s "$W/$3.program" "$W/$3.pytorch"; then
    awk -v p="$W/$3.program" -v q="$W/$3.pytorch" -v what="$1" '
      { a = b = "(no line)"; getline a < p; getline b < q
        if (a != b) printf "interop: %s, %s\n  program: %s\n  Python:  %s\n", what, $0, a, b }' \
      "$W/$2.names" | head -40 >&2
    diff "$W/$3.program" "$W/$3.pytorch" | head -20 >&2
    echo "interop: $1 otherwise in Python (tests/interop-rules.txt)" >&2
    exit 1
  fi
}
for l in de en; do
  program "tokens-$l" "$W/text.txt" tokenize --language "$l"
  pytorch "tokens-$l" "$W/text.txt" tokenize "$l"
  same "tokens ($l)" text "tokens-$l"
  program "lc-$l" "$W/text.txt" tokenize --language "$l" --lowercase
  pytorch "lc-$l" "$W/text.txt" tokenize "$l" --lowercase
  same "lowercased tokens ($l)" text "lc-$l"
  program "text-$l" "$W/tokens-$l.program" tokenize --language "$l" --detokenize
  pytorch "text-$l" "$W/tokens-$l.program" detokenize "$l"
  same "text joined from the tokens ($l)" text "text-$l"
  program "tok-$l" "$W/tok.txt" tokenize --language "$l" --detokenize
  pytorch "tok-$l" "$W/tok.txt" detokenize "$l"
  same "text joined from hand-given tokens ($l)" tok "tok-$l"
done
program pieces "$W/text.txt" tokenize --language de --lowercase --subwords "$W/vocab"
pytorch pieces "$W/text.txt" pieces "$W/vocab" de --lowercase
same "pieces (de, lowercased, the shipped model's vocabulary)" text pieces
program lowercase "$W/translate.txt" translate --beam 1 --lowercase
pytorch lowercase "$W/translate.txt" translate data/multi30k-de-en.safetensors --raw --lowercase
same "greedy translations (lowercase)" translate lowercase
program cased "$W/translate.txt" translate --beam 1
pytorch cased "$W/translate.txt" translate data/multi30k-de-en.safetensors --raw
same "greedy translations (cased)" translate cased
# The warnings of the long lines, but for the name of the program that gives them.
for f in program pytorch; do
  sed 's/^[^:]*: //' "$W/cased.$f-warnings" > "$W/warnings.$f"
done
if ! cmp -s "$W/warnings.program" "$W/warnings.pytorch" \
   || [ "$(wc -l < "$W/warnings.program")" -ne "$(wc -l < "$W/long.txt")" ]; then
  diff "$W/warnings.program" "$W/warnings.pytorch" >&2
  echo "interop: the warnings of lines over 1000 bytes otherwise in Python" >&2
  exit 1
fi
# In the program, the lines named "decoding limit" stop there, and a source passes max_len:
# a source's numbers are its pieces (the German lines come first in pieces.program) and <s>
# </s>, at most max_len; an output's, its lowercase translation cut into the vocabulary's
# pieces, each of them a token the model wrote for these lines (seen once with `transformer
# attention`; tests/interop-rules.txt says how).
"$T" tokenize --language en --lowercase --subwords "$W/vocab" < "$W/lowercase.program" \
  > "$W/out.pieces"
limits=$(awk -v m="$max_len" -v p="$W/pieces.program" -v q="$W/out.pieces" '
  { getline src < p; getline out < q; n = split(src, s, " ") + 2; k = split(out, o, " ")
    if (n > m) { long++; n = m }
    limit = m - 1 < n + 50 ? m - 1 : n + 50
    if ($0 ~ /: decoding limit/) { named++; if (k == limit) { at++; list = list " " k } } }
  END { if (named >= 2 && at == named && long >= 1) print substr(list, 2) }' "$W/de.names")
if [ -z "$limits" ]; then
  echo "interop: $R: a \"decoding limit\" line stops short of the limit in the program, or no source passes max_len $max_len" >&2
  exit 1
fi
echo "interop: $R, $(wc -l < "$W/text.txt") sentences ($(wc -l < "$W/de.txt") German), $(wc -l < "$W/tok.txt") lines of tokens and $(wc -l < "$W/long.txt") line over 1000 bytes: tokens (de, en; cased, lowercased), joined text (de, en), pieces and greedy translations (lowercase, cased) identical in Python; outputs of $(echo "$limits" | sed 's/ / and /g') tokens stop at the decoding limit, a source passes max_len $max_len"
