# Figure: dimensions of the positional encoding over positions (the data's #gp positions,
# first and count). Data: transformer figure-data pe [--positions P --d-model D --first F --count C]
# (columns: position, then dimensions F to F+C-1)
set terminal cairolatex pdf size 12.5cm,5.5cm
load 'figures/style.gp'
load settings(dir.'positional-encoding.dat')
set output dir.'positional-encoding.tex'
set xlabel 'position $p$'
set ylabel '$\mathit{PE}$'
set xrange [0:positions > 1 ? positions-1 : 1]
set yrange [-1.1:1.1]
set key outside right top
set xtics out
set ytics -1,0.5,1 out
plot for [c = 2:count+1] dir.'positional-encoding.dat' using 1:c with lines lw 2 \
     title sprintf('dimension %d', first + c - 2)
