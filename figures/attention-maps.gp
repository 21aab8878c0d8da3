# Figure: attention maps of the Multi30k translator for one test sentence (Chapter 18).
# Data: transformer attention --kind encoder|decoder|cross --layer L --head H|mean, kept in
# figures/multi30k/attention-{encoder,decoder,cross}.dat (labelled matrices) for the book.
set terminal cairolatex pdf size 15cm,6.2cm
load 'figures/style.gp'
set output dir.'attention-maps.tex'
# The book's data are recorded in figures/multi30k/; `make figure` writes them beside the drawing.
data = dir eq 'figures/' ? 'figures/multi30k/' : dir
set palette defined (0 '#ffffff', 1 '#2b4c7e')
set cbrange [0:1]
unset key
# Tick labels are the tokens, typeset by LaTeX (the book inputs the figure in \scriptsize).
set xtics rotate by 90 right out
set ytics out
set yrange [*:*] reverse   # the first query on top, as in the mask figures
set multiplot layout 1,3
set title 'encoder self-attention'
plot data.'attention-encoder.dat' matrix rowheaders columnheaders with image
set title 'decoder self-attention'
plot data.'attention-decoder.dat' matrix rowheaders columnheaders with image
set title 'cross-attention'
plot data.'attention-cross.dat' matrix rowheaders columnheaders with image
unset multiplot
