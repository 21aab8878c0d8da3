# Figure: validation loss and validation BLEU by epoch of one run of `make multi30k` (the
# translation chapter, What the loss does not say): the loss per piece on the left axis, the
# BLEU of the greedy translations of the validation set (cased) on the right.
# Data: the run's log (transformer train --validate-bleu --log), recorded in
# figures/multi30k/loss-bleu/log.csv (CSV: epoch,step,train_loss,validation_loss,learning_rate,
# seconds,tokens_per_second,validation_batch_mean,validation_bleu).
set terminal cairolatex pdf size 11cm,7cm
load 'figures/style.gp'
set output dir.'multi30k-loss-bleu.tex'
# The book's recorded log, or another (make figure NAME=multi30k-loss-bleu DATA=FILE).
if (!exists('source')) source = 'figures/multi30k/loss-bleu/log.csv'
set datafile separator ','
set key right center samplen 2 spacing 1.2
set xlabel 'epoch'
set ylabel 'validation loss per piece'
set xtics out
set ytics out nomirror
set y2label 'validation BLEU (greedy)'
set y2tics out
plot source using 1:4 skip 1 with linespoints lw 2 pt 5 ps 0.5 lc rgb '#2b4c7e' \
       title 'loss (left)', \
     '' using 1:9 skip 1 axes x1y2 with linespoints lw 2 pt 7 ps 0.5 lc rgb '#b5442c' \
       title 'BLEU (right)'
