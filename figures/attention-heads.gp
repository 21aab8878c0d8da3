# Figure: the cross-attention of each head of the last layer of a Multi30k translator, for
# one test sentence (the translation chapter). Data: transformer attention --kind cross
# --head H (H = 0..7), kept in figures/multi30k/attention-head-H.dat for the book; one colour
# key (the weights, 0 to 1) for the eight panels.
# A page of its own, four rows of two panels, so that a row of tokens gets the height of
# its text.
set terminal cairolatex pdf size 15cm,20cm
load 'figures/style.gp'
set output dir.'attention-heads.tex'
data = dir eq 'figures/' ? 'figures/multi30k/' : dir
set palette defined (0 '#ffffff', 1 '#2b4c7e')
set cbrange [0:1]
unset key
set yrange [*:*] reverse   # the first query on top
set tics scale 0
unset colorbox
set multiplot layout 4,2 margins 0.1,0.9,0.08,0.97 spacing 0.03,0.035
do for [h = 0:7] {
    set title sprintf('head %d', h) offset 0,-0.6
    # the tokens on the outer panels only: the queries on the left, the keys at the bottom
    if (h % 2 == 0) { set ytics out } else { unset ytics }
    if (h >= 6) { set xtics rotate by 90 right out } else { unset xtics }
    # one colour key for all eight heads, right of the last panel
    if (h == 7) { set colorbox vertical user origin 0.915, 0.08 size 0.015, 0.89; set cbtics 0, 0.5, 1 out }
    plot data.sprintf('attention-head-%d.dat', h) matrix rowheaders columnheaders with image
}
unset multiplot
