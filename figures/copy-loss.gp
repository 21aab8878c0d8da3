# Figure: training and validation loss of the copy task, per epoch.
# Data: transformer copy --d-model 32 --d-ff 64 --heads 2 --batch-size 40 --log figures/copy-loss.csv
# (CSV: epoch,step,train_loss,validation_loss,learning_rate,seconds,tokens_per_second)
set terminal cairolatex pdf size 11cm,6cm
load 'figures/style.gp'
set output dir.'copy-loss.tex'
set datafile separator ','
set key top right
set xlabel 'epoch'
set ylabel 'loss per token'
set xrange [1:*]
set yrange [0:*]
# Tics every epoch on a short run, every 5 epochs on the recipe's 20, every 10 beyond 40.
stats dir.'copy-loss.csv' using 1 skip 1 nooutput
step = STATS_max <= 10 ? 1 : STATS_max <= 40 ? 5 : 10
set xtics 0, step out
set ytics out
plot dir.'copy-loss.csv' using 1:3 skip 1 with linespoints lw 2 pt 7 ps 0.5 title 'training (dropout on)', \
     '' using 1:4 skip 1 with linespoints lw 2 pt 5 ps 0.5 title 'validation'
