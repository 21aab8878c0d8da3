# Figure: validation loss against epochs of the Multi30k recipes compared in the
# translation chapter's section Getting to 41 (three 15-minute runs and one of subwords on
# another machine (ablation-subwords-15-epyc.csv), the hour of dropout 0.3
# with the tied generator without and with the cool-down (ablation-words-hour.csv), the
# subwords with the cool-down at the rate of factor 0.5 (log.csv, the recorded run) and at
# twice it, today's make multi30k (ablation-rate2-epyc.csv), and an hour of the course's recipe from an
# earlier edition). Data: the logs of those runs (transformer train
# --log), kept in figures/multi30k/ablation-*.csv and figures/multi30k/log.csv
# (CSV: epoch,step,train_loss,validation_loss,learning_rate,seconds,tokens_per_second)
set terminal cairolatex pdf size 11cm,6.5cm
load 'figures/style.gp'
set output dir.'multi30k-ablation.tex'
set datafile separator ','
set key top right
set xlabel 'epoch'
set ylabel 'validation loss per token'
set xrange [0:54]
set yrange [1.3:2.2]
set xtics 0,10 out
set ytics out
plot 'figures/multi30k/ablation-d01.csv' using 1:4 skip 1 with linespoints lw 2 pt 7 ps 0.5 \
       title 'dropout 0.1, 15 min', \
     'figures/multi30k/ablation-d03.csv' using 1:4 skip 1 with linespoints lw 2 pt 5 ps 0.5 \
       title 'dropout 0.3, 15 min', \
     'figures/multi30k/ablation-d03tie.csv' using 1:4 skip 1 with linespoints lw 2 pt 9 ps 0.5 \
       title 'dropout 0.3, tied, 15 min', \
     'figures/multi30k/ablation-d03tie-hour.csv' using 1:4 skip 1 with lines lw 1.5 dt 2 lc rgb '#555555' \
       title 'dropout 0.3, tied, 1 h', \
     'figures/multi30k/ablation-words-hour.csv' using 1:4 skip 1 with lines lw 3 lc rgb '#888888' \
       title 'the same, cool-down', \
     'figures/multi30k/log.csv' using 1:4 skip 1 with lines lw 3 lc rgb '#000000' \
       title 'subwords, cool-down', \
     'figures/multi30k/ablation-rate2-epyc.csv' using 1:4 skip 1 with lines lw 1.5 dt 3 \
       lc rgb '#000000' title 'the same, twice the rate', \
     'figures/multi30k/ablation-d01-hour.csv' using 1:4 skip 1 with lines lw 1 lc rgb '#999999' \
       title 'dropout 0.1, 1 h (earlier)', \
     'figures/multi30k/ablation-subwords-15-epyc.csv' using 1:4 skip 1 with linespoints lw 2 pt 13 ps 0.6 \
       lc rgb '#000000' title 'subwords, 15 min (EPYC)'
