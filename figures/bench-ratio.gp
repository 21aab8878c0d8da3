# Figure: the C trainer's speed over PyTorch's, per configuration and thread count (the speed chapter, Making it fast).
# Data: the table of `make bench` (bench/bench.py --dat), kept in figures/bench/table.dat:
# config threads c_median c_min c_max pt_median pt_min pt_max ratio ... ('-': n/a);
# rows in the order copy 1, copy 2, small 1, small 2, base 1, base 2, decode 1, decode 2.
set terminal cairolatex pdf size 11cm,5.5cm
load 'figures/style.gp'
set output dir.'bench-ratio.tex'
# The book's recorded table, or another (make figure NAME=bench-ratio DATA=FILE).
if (!exists('source')) source = 'figures/bench/table.dat'
set datafile missing '-'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:*]
set ylabel 'C / PyTorch'
set key top left
set xtics out
set ytics out
# the training target, twice PyTorch's speed, over the three training groups only
set arrow from first -0.5, first 2 to first 2.5, first 2 nohead dt 2 lw 1.5
plot source every 2::0 using 9:xtic(1) title '1 thread' lc rgb '#9bb1d4', \
     '' every 2::1 using 9 title '2 threads' lc rgb '#2b4c7e'
