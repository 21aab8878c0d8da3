# Shared settings of the book's figures: cairolatex keeps text and math in the book's fonts.
# Each figure script sets its size, then `load 'figures/style.gp'`, then its output.
set encoding utf8
# Masks: 0 (masked) light, 1 (may attend) dark.
set palette defined (0 '#f2f2f2', 1 '#2b4c7e')
set cbrange [0:1]
unset colorbox
set border lw 0.5
set tics scale 0.5 nomirror
# The directory of the data and the drawing: figures/ for the book; `make figure` draws into
# build/figure/NAME/ (gnuplot -e "dir = '...'").
if (!exists('dir')) dir = 'figures/'
# A data file's settings: its lines '#gp NAME = VALUE' (book/program.nw, "Figure data"),
# loaded with `load settings(FILE)` before the plot, so legends and axes follow the data.
settings(file) = sprintf("< sed -n 's/^#gp //p' '%s'", file)
