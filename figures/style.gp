# Shared settings of the book's figures: cairolatex keeps text and math in the book's fonts.
# Each figure script sets its size, then `load 'figures/style.gp'`, then its output.
set encoding utf8
# Masks: 0 (masked) light, 1 (may attend) dark.
set palette defined (0 '#f2f2f2', 1 '#2b4c7e')
set cbrange [0:1]
unset colorbox
set border lw 0.5
set tics scale 0.5 nomirror
