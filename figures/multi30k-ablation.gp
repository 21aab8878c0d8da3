# Figure: validation loss against epochs of the Multi30k runs of the translation chapter's
# section Getting to 41, in two panels, since a loss per word and a loss per subword piece are
# not on one scale: left, the recipes of words (three quarter-hour runs, the hour of the
# course's recipe on a shared machine, the hour of dropout 0.3 with the tied generator
# without and with the cool-down); right, the recipes of subwords (a quarter of an hour, the
# 38 epochs with the cool-down, the same in an hour's budget, and at twice the rate on
# machines B and A of figures/machines.txt, the latter the run the book reports). Data: the runs' logs
# (transformer train --log), figures/multi30k/ablation-*.csv and figures/multi30k/log.csv
# (CSV: epoch,step,train_loss,validation_loss,learning_rate,seconds,tokens_per_second);
# figures/multi30k/ablation.txt names each run's machine and trainer.
set terminal cairolatex pdf size 15cm,9.5cm
load 'figures/style.gp'
set output dir.'multi30k-ablation.tex'
set datafile separator ','
m = 'figures/multi30k/'
set xlabel 'epoch'
set xtics out
set ytics out
# The keys below the panels, so that no curve is covered.
set key below left Left reverse samplen 2 spacing 1.1 maxcols 1 height 1.5
set multiplot layout 1,2
set title 'words: loss per word'
set xrange [0:54]
set xtics 0,10
set yrange [1.3:2.3]
set ylabel 'validation loss'
# Each curve its own colour (Okabe and Ito's palette, which colour-blind readers tell
# apart) and its own dash or point, so that they can be told at print size and in grey.
plot m.'ablation-d01.csv' using 1:4 skip 1 with linespoints lw 2 pt 7 ps 0.5 lc rgb '#E69F00' \
       title 'dropout 0.1, 15 min', \
     m.'ablation-d03.csv' using 1:4 skip 1 with linespoints lw 2 pt 5 ps 0.5 lc rgb '#56B4E9' \
       title 'dropout 0.3, 15 min', \
     m.'ablation-d03tie.csv' using 1:4 skip 1 with linespoints lw 2 pt 9 ps 0.6 lc rgb '#009E73' \
       title 'dropout 0.3, tied, 15 min', \
     m.'ablation-d01-hour.csv' using 1:4 skip 1 with lines lw 2 dt 4 lc rgb '#CC79A7' \
       title 'dropout 0.1, 1 h (shared)', \
     m.'ablation-d03tie-hour.csv' using 1:4 skip 1 with lines lw 2 dt 2 lc rgb '#0072B2' \
       title 'dropout 0.3, tied, 1 h', \
     m.'ablation-words-hour.csv' using 1:4 skip 1 with lines lw 3.5 lc rgb '#000000' \
       title 'the same, cool-down'
set title 'subwords: loss per piece'
set xrange [0:40]
set yrange [1.45:2.45]
unset ylabel
plot m.'ablation-subwords-15.csv' using 1:4 skip 1 with linespoints lw 2 pt 13 ps 0.6 \
       lc rgb '#E69F00' title '15 min (B)', \
     m.'ablation-subwords-38.csv' using 1:4 skip 1 with lines lw 3.5 lc rgb '#000000' \
       title '38 epochs, cool-down (B)', \
     m.'ablation-subwords-budget-hour.csv' using 1:4 skip 1 with lines lw 2 dt 4 lc rgb '#CC79A7' \
       title 'the same in 1 h (B)', \
     m.'ablation-rate2.csv' using 1:4 skip 1 with lines lw 2 dt 3 lc rgb '#D55E00' \
       title 'twice the rate (B)', \
     m.'log.csv' using 1:4 skip 1 with lines lw 2 dt 2 lc rgb '#0072B2' \
       title 'twice the rate (A)'
unset multiplot
