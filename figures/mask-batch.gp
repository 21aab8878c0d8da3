# Figure: the target mask of a padded batch of three sentences, one panel per sentence.
# Data: transformer figure-data mask batch --sentence 1|2|3 (first line: key words; first column: query words)
set terminal cairolatex pdf size 12.5cm,5.8cm header '\scriptsize'
load 'figures/style.gp'
set output 'figures/mask-batch.tex'
set size ratio -1
set yrange [7.5:-0.5]
set xrange [-0.5:7.5]
set xtics rotate by 90 right
set ytics
set multiplot layout 1,3 margins 0.09,0.99,0.22,0.93 spacing 0.12,0
do for [s = 1:3] {
    set title sprintf('sentence %d', s)
    plot sprintf('figures/mask-batch-%d.dat', s) matrix columnheaders rowheaders with image notitle
}
unset multiplot
