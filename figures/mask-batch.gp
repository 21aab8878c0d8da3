# Figure: the target mask of a padded batch, one panel for each of its first three sentences.
# Data: transformer figure-data mask batch [--lengths N,N,N] --sentence 1|2|3 (first line: key
# words; first column: query words; #gp len: the decoder's input length)
set terminal cairolatex pdf size 12.5cm,5.8cm header '\scriptsize'
load 'figures/style.gp'
load settings(dir.'mask-batch-1.dat')
set output dir.'mask-batch.tex'
set size ratio -1
set yrange [len-0.5:-0.5]
set xrange [-0.5:len-0.5]
set xtics rotate by 90 right
set ytics
set multiplot layout 1,3 margins 0.09,0.99,0.22,0.93 spacing 0.12,0
do for [s = 1:3] {
    set title sprintf('sentence %d', s)
    plot sprintf('%smask-batch-%d.dat', dir, s) matrix columnheaders rowheaders with image notitle
}
unset multiplot
