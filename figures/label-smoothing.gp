# Figure: label smoothing. Left: the smoothed targets (transformer figure-data smoothing
# distribution: header of words, rows headed by the target). Right: the loss as the model
# grows confident (transformer figure-data smoothing confidence: x, loss).
set terminal cairolatex pdf size 12.5cm,5.5cm header '\footnotesize'
load 'figures/style.gp'
set output 'figures/label-smoothing.tex'
set multiplot layout 1,2 margins 0.1,0.98,0.18,0.9 spacing 0.14,0
set palette defined (0 '#f2f2f2', 1 '#2b4c7e')
set cbrange [0:0.6]
set size ratio -1
set yrange [4.5:-0.5]
set xrange [-0.5:4.5]
set xlabel 'word'
set ylabel 'target'
set title 'smoothed targets, $\varepsilon = 0.4$'
plot 'figures/smoothing-distribution.dat' matrix columnheaders rowheaders with image notitle
set size noratio
set autoscale
set xrange [1:99]
set logscale y
set yrange [1e-9:1.5]
set format y '$10^{%T}$'
set ytics 1e-9,1000,1
set xlabel '$x$'
set ylabel 'loss (log scale)'
set title 'loss, $\varepsilon = 0.1$'
plot 'figures/smoothing-confidence.dat' using 1:2 with lines lw 2 notitle
unset multiplot
