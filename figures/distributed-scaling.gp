# Figure: data-parallel training projected to P processes (Training on many machines).
# Data: transformer figure-data scaling [--base-ms B --multi30k-ms M --latency-us L]
# (columns: P, then for the base model over 10 and
# 100 Gbit/s and for the Multi30k model over 10 and 100 Gbit/s: step time in s, efficiency).
# The key has a strip of its own under the two panels, where no setting of figure-data
# scaling can put a curve.
set terminal cairolatex pdf size 12.5cm,7.2cm
load 'figures/style.gp'
set output dir.'distributed-scaling.tex'
set multiplot
set size 0.5, 0.8
set origin 0, 0.2
set logscale x 2
set xrange [0.8:80]
set xtics (1, 2, 4, 8, 16, 32, 64) out
set xlabel 'processes $P$'
set ytics out
set ylabel 'step time (s)'
set yrange [0:*]
unset key
plot dir.'distributed-scaling.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.4, \
     '' using 1:4 with linespoints lw 2 pt 7 ps 0.4, \
     '' using 1:6 with linespoints lw 2 pt 5 ps 0.4, \
     '' using 1:8 with linespoints lw 2 pt 5 ps 0.4
set origin 0.5, 0.2
set ylabel 'efficiency'
set yrange [*:1.0]
set ytics format '%.2f'
plot dir.'distributed-scaling.dat' using 1:3 with linespoints lw 2 pt 7 ps 0.4, \
     '' using 1:5 with linespoints lw 2 pt 7 ps 0.4, \
     '' using 1:7 with linespoints lw 2 pt 5 ps 0.4, \
     '' using 1:9 with linespoints lw 2 pt 5 ps 0.4
# The key: the same four lines, drawn nowhere.
set origin 0, 0
set size 1, 0.2
unset border; unset tics; unset xlabel; unset ylabel; unset logscale
set xrange [0:1]; set yrange [0:1]
set key center center horizontal maxcols 2 samplen 2 spacing 1.1
plot NaN with linespoints lw 2 pt 7 ps 0.4 title 'base model, 10 Gbit/s', \
     NaN with linespoints lw 2 pt 7 ps 0.4 title 'base model, 100 Gbit/s', \
     NaN with linespoints lw 2 pt 5 ps 0.4 title 'Multi30k model, 10 Gbit/s', \
     NaN with linespoints lw 2 pt 5 ps 0.4 title 'Multi30k model, 100 Gbit/s'
unset multiplot
