# Figure: the temperature of attention (the attention chapter, The temperature, drawn).
# Data: transformer figure-data temperature [--dk D --keys K --tau T,... --rows R --seed S],
# three blocks: the first query's weights (key, score, a weight per temperature of taus),
# the mean entropy against tau / sqrt(d_k), and the mean entropy at the temperatures taus.
set terminal cairolatex pdf size 12.5cm,5.5cm header '\footnotesize'
load 'figures/style.gp'
load settings(dir.'attention-temperature.dat')
set output dir.'attention-temperature.tex'
set multiplot layout 1,2 margins 0.1,0.98,0.18,0.9 spacing 0.12,0
data = dir.'attention-temperature.dat'
set xlabel 'key, by score'
set ylabel 'weight'
set xrange [0.5:keys + 0.5]
set yrange [0:1]
set xtics 1,(keys > 16 ? 8 : keys > 8 ? 2 : 1),keys out
set ytics 0,0.25,1 out
set key top right
set title sprintf('one query, $d_k = %d$', dk)
plot for [t = 1:words(taus)] data index 0 using 1:(column(2 + t)) with linespoints lw 2 \
     pt 7 ps 0.5 title sprintf('$\tau = %s$', word(taus, t))
set xlabel '$\tau / \sqrt{d_k}$ (log scale)'
set ylabel 'mean entropy (nats)'
set logscale x 2
set autoscale x
set xtics 1.0 / 1024, 4, 4 out format '$2^{%L}$'
set yrange [0:log(keys) * 1.08]
set ytics auto
set title sprintf('%d queries, %d keys', rows, keys)
set key bottom right
plot data index 1 using 1:2 with lines lw 2 title 'mean entropy', \
     log(keys) with lines dt 2 lc rgb '#555555' title '$\log K$', \
     data index 2 using 2:3 with points pt 7 ps 0.8 lc rgb '#c0392b' title 'the $\tau$ of the left'
unset multiplot
