# Figure: what each optimization of the speed chapter (Making it fast) bought, relative to the first setting.
# Data: bench/stages.py --dat, kept in figures/bench/stages.dat:
# config threads openblas split fast (median tokens/s, sentences/s for decode).
set terminal cairolatex pdf size 12.5cm,7cm
load 'figures/style.gp'
set output dir.'bench-stages.tex'
# The book's recorded stages, or others (make figure NAME=bench-stages DATA=FILE).
if (!exists('source')) source = 'figures/bench/stages.dat'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:*]
set ylabel 'speed, relative'
set key above
set xtics out
set ytics out
# each group labelled on two lines: the configuration, then the number of threads
plot source using ($3/$3):xtic(sprintf('{\footnotesize\shortstack{%s\\%d}}', strcol(1), $2)) \
         title 'OpenBLAS threads, first kernels' lc rgb '#d9d9d9', \
     '' using ($4/$3) title 'split products' lc rgb '#9bb1d4', \
     '' using ($5/$3) title 'split products, fast kernels' lc rgb '#2b4c7e'
