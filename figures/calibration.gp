# Figure: the reliability diagram of the Multi30k translator (Translating German to English,
# What the loss does not say): for each bin of confidence (the probability of the most probable
# piece, teacher-forced on the validation set), the share of its predictions that are right
# against their mean confidence; the bins' shares of all predictions as bars on the right axis.
# Data: `transformer calibration` of the model that ships with the book (make builds it in
# figures/calibration.dat; make figure NAME=calibration MODEL=FILE draws another model's),
# and beside it, recorded, that of the same recipe trained without label smoothing
# (figures/multi30k/no-smoothing/calibration.dat, its model rounded to bfloat16 as the
# shipped one is). Columns: low high predictions confidence accuracy; empty bins are nan.
set terminal cairolatex pdf size 10cm,8cm
load 'figures/style.gp'
set output dir.'calibration.tex'
data = dir.'calibration.dat'
plain = 'figures/multi30k/no-smoothing/calibration.dat'
stats data using 3 nooutput
total = STATS_sum
# The key in the upper left, above the diagonal, where no point of a sound model falls.
set key top left reverse Left samplen 2 spacing 1.2
set xlabel 'confidence (mean of the bin)'
set ylabel 'accuracy'
set xrange [0:1]
set yrange [0:1]
set size ratio -1
set xtics 0.2 out
set ytics 0.2 out nomirror
set y2label 'share of predictions'
set y2range [0:0.5]
set y2tics 0.1 out
set style fill solid 0.35 noborder
plot data using (($1 + $2) / 2):($3 / total):($2 - $1) axes x1y2 with boxes \
       lc rgb '#bbbbbb' title 'share (right)', \
     x with lines dt 2 lc rgb '#555555' title 'calibrated', \
     data using 4:5 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#2b4c7e' title 'the model', \
     plain using 4:5 with linespoints lw 2 dt 3 pt 5 ps 0.6 lc rgb '#b5442c' \
       title 'the recipe, $\varepsilon = 0$'
