# Figure: the subsequent (causal) mask, T = 20. Data: transformer figure-data mask subsequent --size 20
set terminal cairolatex pdf size 7cm,7cm
load 'figures/style.gp'
set output 'figures/mask-subsequent.tex'
set size ratio -1
set xrange [-0.5:19.5]
set yrange [19.5:-0.5]
set xtics 0,5,19 out
set ytics 0,5,19 out
set xlabel 'key position $j$'
set ylabel 'query position $i$'
plot 'figures/mask-subsequent.dat' matrix with image notitle
