# Figure: dimensions 4-7 of the positional encoding, d_model = 20, 100 positions.
# Data: transformer figure-data pe --positions 100 --d-model 20 --first 4
# (columns: position, then dimensions 4, 5, 6, 7)
set terminal cairolatex pdf size 12.5cm,5.5cm
load 'figures/style.gp'
set output 'figures/positional-encoding.tex'
set xlabel 'position $p$'
set ylabel '$\mathit{PE}$'
set xrange [0:99]
set yrange [-1.1:1.1]
set key outside right top
set xtics 0,20,100 out
set ytics -1,0.5,1 out
plot for [c = 2:5] 'figures/positional-encoding.dat' using 1:c with lines lw 2 \
     title sprintf('dimension %d', c + 2)
