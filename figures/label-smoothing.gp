# Figure: label smoothing. Left: the smoothed targets (transformer figure-data smoothing
# distribution: header of words, rows headed by the target). Right: the loss as the model
# grows confident (transformer figure-data smoothing confidence: x, loss). Each file's #gp
# lines give its epsilon and vocabulary. The right panel marks the data's smallest loss, zero
# in exact arithmetic but for the rounding of single precision.
set terminal cairolatex pdf size 12.5cm,5.5cm header '\footnotesize'
load 'figures/style.gp'
set output dir.'label-smoothing.tex'
set multiplot layout 1,2 margins 0.1,0.98,0.18,0.9 spacing 0.14,0
load settings(dir.'smoothing-distribution.dat')
set palette defined (0 '#f2f2f2', 1 '#2b4c7e')
set cbrange [0:*]
set size ratio -1
set yrange [4.5:-0.5]
set xrange [-0.5:vocab-0.5]
set xlabel 'word'
set ylabel 'target'
set title sprintf('smoothed targets, $\varepsilon = %g$', epsilon)
plot dir.'smoothing-distribution.dat' matrix columnheaders rowheaders with image notitle
load settings(dir.'smoothing-confidence.dat')
set size noratio
set autoscale
stats dir.'smoothing-confidence.dat' using 1:2 nooutput
xmin = STATS_pos_min_y
ymin = STATS_min_y
set xrange [1:99]
set logscale y
set yrange [1e-9:*]
set format y '$10^{%T}$'
set ytics 1e-9,1000
set xlabel '$x$'
set ylabel 'loss (log scale)'
set title sprintf('loss, $\varepsilon = %g$', epsilon)
set label 1 sprintf('%s at $x = %d$', gprintf('$%.1t\cdot 10^{%T}$', ymin), int(xmin)) \
    at first xmin + 4, first ymin left front
plot dir.'smoothing-confidence.dat' using 1:2 with lines lw 2 notitle, \
     '+' using (xmin):(ymin) every ::0::0 with points pt 7 ps 0.8 notitle
unset multiplot
