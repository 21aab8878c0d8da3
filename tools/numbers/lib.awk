# Functions shared by the scripts of tools/numbers/: each prints LaTeX macros, one a line,
# computed from a recorded file, into build/numbers.tex (see tools/numbers/README).

# def(name, text): the macro \name, typesetting text (xspace: "\name BLEU" keeps its space).
function def(name, text) { printf "\\newcommand{\\%s}{%s\\xspace}\n", name, text }

# fixed(x, d): x with d decimals; a minus sign as in mathematics.
function fixed(x, d,    s) { s = sprintf("%." d "f", x); sub(/^-/, "\\ensuremath{-}", s); return s }

# grouped(n): an integer with thin spaces between groups of three digits (9\,880), from 10 000 on.
function grouped(n,    s, out) {
    s = sprintf("%d", n)
    if (length(s) <= 4) return s
    out = ""
    while (length(s) > 3) { out = "\\," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
    return s out
}

# tex(s): s as LaTeX text, its special characters escaped (for quoted output and file names).
function tex(s) {
    gsub(/\\/, "\001", s); gsub(/[&%$#_{}]/, "\\\\&", s)
    gsub(/~/, "\\textasciitilde{}", s); gsub(/\^/, "\\textasciicircum{}", s)
    gsub(/\001/, "\\textbackslash{}", s); return s
}
