# Figure: attention maps of the Multi30k translator for one test sentence (the translation
# chapter): the encoder's and the decoder's self-attention side by side, the cross-attention
# below them at full width, one colour key for the three (the weights, 0 to 1).
# Data: transformer attention --kind encoder|decoder|cross --layer L --head H|mean, kept in
# figures/multi30k/attention-{encoder,decoder,cross}.dat (labelled matrices) for the book.
set terminal cairolatex pdf size 15cm,16cm
load 'figures/style.gp'
set output dir.'attention-maps.tex'
# The book's data are recorded in figures/multi30k/; `make figure` writes them beside the drawing.
data = dir eq 'figures/' ? 'figures/multi30k/' : dir
set palette defined (0 '#ffffff', 0.25 '#c6d4ea', 1 '#1c3560')
set cbrange [0:1]
unset key
# Tick labels are the tokens, typeset by LaTeX (the book inputs the figure in \footnotesize).
set xtics rotate by 90 right out
set ytics out
set tics scale 0.3
set yrange [*:*] reverse   # the first query on top, as in the mask figures
set size ratio -1
unset colorbox
set multiplot
set title 'encoder self-attention (German to German)'
set origin -0.02, 0.47
set size 0.53, 0.53
plot data.'attention-encoder.dat' matrix rowheaders columnheaders with image
set title 'decoder self-attention (English to English)'
set origin 0.49, 0.47
plot data.'attention-decoder.dat' matrix rowheaders columnheaders with image
set title 'cross-attention (rows: English inputs; columns: German source)'
set origin 0.08, 0.0
set size 0.8, 0.5
set colorbox vertical user origin 0.86, 0.1 size 0.022, 0.32
set cbtics 0, 0.25, 1 out
set cblabel 'weight'
plot data.'attention-cross.dat' matrix rowheaders columnheaders with image
unset multiplot
