# Figure: an hour of make multi30k in each precision (the speed chapter, An hour of training
# in each precision): the validation loss per piece against the minutes since the start, in
# bfloat16 (the recipe's run with --validate-bleu, figures/multi30k/loss-bleu/log.csv) and in
# float (the same recipe with --precision fp32 and --minutes for the bfloat16 run's time,
# figures/multi30k/fp32/log.csv), both on machine C with one trainer.
# Data: the runs' logs (CSV: epoch,step,train_loss,validation_loss,learning_rate,seconds,...);
# a point per epoch, at the second its validation ended.
set terminal cairolatex pdf size 11cm,7cm
load 'figures/style.gp'
set output dir.'multi30k-precision.tex'
# The book's two recorded logs, or another pair (make figure NAME=multi30k-precision
# DATA=FILE draws FILE as the float run against the recorded bfloat16 one).
if (!exists('source')) source = 'figures/multi30k/fp32/log.csv'
bf16 = 'figures/multi30k/loss-bleu/log.csv'
set datafile separator ','
set key top right samplen 2
set xlabel 'minutes'
set ylabel 'validation loss per piece'
set xtics out
set ytics out nomirror
set yrange [1.4:*]
plot bf16 using ($6 / 60):4 skip 1 with linespoints lw 2 pt 5 ps 0.5 lc rgb '#2b4c7e' \
       title 'bfloat16', \
     source using ($6 / 60):4 skip 1 with linespoints lw 2 pt 7 ps 0.5 lc rgb '#b5442c' \
       title 'float'
