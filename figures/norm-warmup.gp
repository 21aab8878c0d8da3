# Figure: the copy chapter's Two experiments, warm-up and rate separated: the validation loss
# per epoch of the small model (d_model 32, 20 epochs of 20 updates), the mean of its seeds,
# on a log scale, in two panels, pre-norm and post-norm. The arms: the schedule with its
# warm-up (w400), the schedule without it (w0), the schedule's peak held constant from the
# first step (rpeak), a constant 10^-3 (r0.001). Data: the runs' logs (transformer copy --log),
# figures/copy/experiments/NORM-ARM-sSEED.csv, made by figures/copy/run-small.sh
# (CSV: epoch,step,train_loss,validation_loss,learning_rate,seconds,tokens_per_second, and in
# logs of this version validation_batch_mean).
# `make figure NAME=norm-warmup DATA=DIR/pre-w400-s1.csv` draws the logs of another
# directory DIR named the same way (OUT=... sh figures/copy/run-small.sh experiments makes
# one; so does figures/norm-warmup/run-multi30k.sh, whose schedule has a warm-up of 800,
# w800); an arm of which DIR has no log is left out.
set terminal cairolatex pdf size 15cm,8cm
load 'figures/style.gp'
set output dir.'norm-warmup.tex'
# The directory of the logs: the book's, or that of the file make figure's DATA names.
logs = exists('source') ? system('dirname '.source).'/' : 'figures/copy/experiments/'
set datafile separator ','
arms = 'w400 w800 w0 rpeak r0.001'
label(a) = a eq 'w400' ? 'the schedule, warm-up 400' : \
           a eq 'w800' ? 'the schedule, warm-up 800' : \
           a eq 'w0' ? 'the schedule, no warm-up' : \
           a eq 'rpeak' ? 'the schedule''s peak, constant' : \
           a eq 'r0.001' ? 'constant $10^{-3}$' : a
style(a) = a eq 'w400' || a eq 'w800' ? "lw 2 lc rgb '#000000' pt 7 ps 0.5" : \
           a eq 'w0' ? "lw 2 dt 2 lc rgb '#999999' pt 4 ps 0.5" : \
           a eq 'rpeak' ? "lw 2 lc rgb '#2b4c7e' pt 5 ps 0.5" : \
           "lw 1.5 dt 3 lc rgb '#555555' pt 9 ps 0.6"
# The logs of one norm and arm, one name after another, and the plot of their mean: paste
# puts the seeds' rows side by side, as many columns each as the first log's header has (7 or
# 8), the validation loss 4th of each.
files(norm, a) = system(sprintf("ls %s%s-%s-s*.csv 2>/dev/null | tr '\\n' ' '", logs, norm, a))
width(f) = int(system(sprintf("head -n 1 %s | awk -F, '{ print NF }'", word(f, 1))))
curve(norm, a, key) = sprintf("'< paste -d, %s' using 1:((sum [i=0:%d] column(4 + %d*i))/%d) skip 1 with linespoints %s title \"%s\"", \
                              files(norm, a), words(files(norm, a)) - 1, width(files(norm, a)), \
                              words(files(norm, a)), style(a), key ? label(a) : '')
set xlabel 'epoch'
set xrange [0.5:*]
set xtics 0,5 out
set logscale y
# One scale for both panels: whole decades around every validation loss of the directory.
stats sprintf("< tail -q -n +2 %s*.csv", logs) using 4 nooutput
set yrange [10**floor(log10(STATS_min)):10**ceil(log10(STATS_max))]
set ytics out
set mytics 10
set format y '%g'
# One key for both panels, below them: the panels share the plot area's margins so that they
# are of one size, and the key is the first panel's, placed in the band under both.
set multiplot layout 1,2 margins 0.1,0.98,0.32,0.92 spacing 0.06,0
set key at screen 0.1,0.15 left top Left reverse samplen 2.5 spacing 1.1 maxrows 2 width 2
do for [norm in 'pre post'] {
  set title norm eq 'pre' ? 'pre-norm' : 'post-norm'
  if (norm eq 'pre') { set ylabel 'validation loss' } else { unset ylabel; set format y '' }
  cmd = ''
  do for [a in arms] {
    if (words(files(norm, a)) > 0) {
      cmd = cmd.(cmd eq '' ? '' : ', ').curve(norm, a, norm eq 'pre')
    }
  }
  eval 'plot '.(cmd eq '' ? 'NaN notitle' : cmd)   # a directory may lack one placement
}
unset multiplot
