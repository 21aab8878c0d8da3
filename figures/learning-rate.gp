# Figure: the learning-rate schedule. Data: transformer figure-data lr --steps 20000 --every 20
# (columns: step, then [512, 1, 4000], [512, 1, 8000], [256, 1, 4000]).
set terminal cairolatex pdf size 12.5cm,6cm
load 'figures/style.gp'
set output 'figures/learning-rate.tex'
set xlabel 'step'
set ylabel 'learning rate'
set xrange [0:20000]
set xtics 0,5000,20000 out
set ytics out format '%.4f'
set key top right
plot 'figures/learning-rate.dat' using 1:2 with lines lw 2 title '$d = 512$, $w = 4000$', \
     '' using 1:3 with lines lw 2 title '$d = 512$, $w = 8000$', \
     '' using 1:4 with lines lw 2 title '$d = 256$, $w = 4000$'
