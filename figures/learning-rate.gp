# Figure: the learning-rate schedule. Data: transformer figure-data lr [--curve d=D,f=F,w=W ...]
# (columns: step, then one per curve); its #gp lines give curves, steps and each curve's title.
set terminal cairolatex pdf size 12.5cm,6cm
load 'figures/style.gp'
load settings(dir.'learning-rate.dat')
set output dir.'learning-rate.tex'
set xlabel 'step'
set ylabel 'learning rate'
set xrange [0:steps]
set xtics 0,steps/4.0,steps out
set ytics out format '%.4f'
set key top right
plot for [c = 1:curves] dir.'learning-rate.dat' using 1:c+1 with lines lw 2 \
     title value(sprintf('title%d', c))
