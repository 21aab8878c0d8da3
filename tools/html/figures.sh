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
  pdftocairo -svg -f $p -l $p $work/figures.pdf $work/fig-$p.svg
  # 1.3 times the printed size (width and height in pt; the viewBox keeps the drawing's units):
  # the page's text is larger than the PDF's 11 pt, and the figure keeps its proportion to it.
  awk 'NR <= 3 && /<svg / { n = split($0, a, /(width|height)="/); line = a[1];
         for (i = 2; i <= n; i++) { v = a[i] + 0; rest = substr(a[i], index(a[i], "pt\""));
           line = line (i == 2 ? "width=\"" : "height=\"") sprintf("%.3f", v * 1.3) rest }
         print line; next } { print }' $work/fig-$p.svg > "$out/fig/fig-$p.svg"
  p=$((p + 1))
done
echo "figures.sh: $pages figures in $out/fig"
