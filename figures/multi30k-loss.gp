# Figure: training and validation loss per epoch of the Multi30k translator (Translating German to English).
# Data: the log of `make multi30k` (transformer train --log), kept in figures/multi30k/log.csv
# (CSV: epoch,step,train_loss,validation_loss,learning_rate,seconds,tokens_per_second)
set terminal cairolatex pdf size 11cm,7cm
load 'figures/style.gp'
set output dir.'multi30k-loss.tex'
# The book's recorded log, or another (make figure NAME=multi30k-loss DATA=FILE).
if (!exists('source')) source = 'figures/multi30k/log.csv'
set datafile separator ','
# The key in the upper right, above the curves once the losses have fallen.
set key top right samplen 2 spacing 1.1
set xlabel 'epoch'
set ylabel 'loss per piece'
set yrange [0:6.5]
set xtics out
set ytics out nomirror
# The rate of the epoch's last step on the right axis: the warm-up, the decay and the cool-down.
set y2label 'learning rate'
set y2range [0:*]   # the whole curve, its peak at the end of the warm-up included
set y2tics out format '%.4f'
plot source using 1:3 skip 1 with linespoints lw 2 pt 7 ps 0.5 title 'training', \
     '' using 1:4 skip 1 with linespoints lw 2 pt 5 ps 0.5 title 'validation', \
     '' using 1:5 skip 1 axes x1y2 with lines lw 1 dt 2 lc rgb '#777777' title 'learning rate (right)'
