# Figure: the subsequent (causal) mask of size T (the data's #gp size).
# Data: transformer figure-data mask subsequent [--size T]
set terminal cairolatex pdf size 7cm,7cm
load 'figures/style.gp'
load settings(dir.'mask-subsequent.dat')
set output dir.'mask-subsequent.tex'
set size ratio -1
set xrange [-0.5:size-0.5]
set yrange [size-0.5:-0.5]
step = size > 10 ? 5 * ceil(size / 50.0) : 1
set xtics 0,step,size-1 out
set ytics 0,step,size-1 out
set xlabel 'key position $j$'
set ylabel 'query position $i$'
plot dir.'mask-subsequent.dat' matrix with image notitle
