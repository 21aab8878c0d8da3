#!/bin/sh
# The web edition's figures: LaTeX draws every figure of the book (the gnuplot drawings of
# figures/*.tex, the TikZ pictures) from build/html-fig/figures.tex, which weave.py wrote
# with one figure a page; pdftocairo (poppler-utils) turns each page into an SVG.
# Usage: tools/html/figures.sh OUTDIR   (run from the repository's top directory)
set -eu
out=$1
work=build/html-fig
mkdir -p "$out/fig"
pdflatex -interaction=nonstopmode -halt-on-error -output-directory=$work $work/figures.tex \
  > $work/figures.out 2>&1 || { tail -30 $work/figures.out; exit 1; }
pages=$(pdfinfo $work/figures.pdf | sed -n 's/^Pages: *//p')
p=1
while [ "$p" -le "$pages" ]; do
  pdftocairo -svg -f $p -l $p $work/figures.pdf "$out/fig/fig-$p.svg"
  p=$((p + 1))
done
echo "figures.sh: $pages figures in $out/fig"
