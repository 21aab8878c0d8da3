# Figure: data-parallel training projected to P processes (Training on many machines).
# Data: transformer figure-data scaling [--base-ms B --multi30k-ms M --latency-us L]
# (columns: P, then for the base model over 10 and
# 100 Gbit/s and for the Multi30k model over 10 and 100 Gbit/s: step time in s, efficiency).
set terminal cairolatex pdf size 12.5cm,6.5cm
load 'figures/style.gp'
set output dir.'distributed-scaling.tex'
set multiplot layout 1,2
set logscale x 2
set xrange [0.8:80]
set xtics (1, 2, 4, 8, 16, 32, 64) out
set xlabel 'processes $P$'
set ytics out
set ylabel 'step time (s)'
set yrange [0:*]
set key top left samplen 2 spacing 1.1
plot dir.'distributed-scaling.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.4 title 'base, 10', \
     '' using 1:4 with linespoints lw 2 pt 7 ps 0.4 title 'base, 100', \
     '' using 1:6 with linespoints lw 2 pt 5 ps 0.4 title 'Multi30k, 10', \
     '' using 1:8 with linespoints lw 2 pt 5 ps 0.4 title 'Multi30k, 100'
set ylabel 'efficiency'
set yrange [*:1.0]
set ytics format '%.2f'
unset key   # the same lines as on the left
plot dir.'distributed-scaling.dat' using 1:3 with linespoints lw 2 pt 7 ps 0.4 title 'base, 10', \
     '' using 1:5 with linespoints lw 2 pt 7 ps 0.4 title 'base, 100', \
     '' using 1:7 with linespoints lw 2 pt 5 ps 0.4 title 'Multi30k, 10', \
     '' using 1:9 with linespoints lw 2 pt 5 ps 0.4 title 'Multi30k, 100'
unset multiplot
