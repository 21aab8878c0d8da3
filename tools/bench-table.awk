# The rows of the speed chapter's (Making it fast) benchmark table, in LaTeX, from figures/bench/table.dat
# (bench/bench.py --dat): config threads c_median c_min c_max pt_median pt_min pt_max ratio
# c_gflops sgemm_gflops pct_sgemm c_rss pt_rss, with '-' where a column does not apply.
#   awk -f tools/bench-table.awk figures/bench/table.dat > figures/bench-table.tex
function rate(x) { return x >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x) }
function maybe(x, format) { return x == "-" ? "--" : sprintf(format, x) }
/^#/ || NF < 14 { next }
{
    printf "  %s & %d & %s & %s & %.2f & %s & %s & %s & %.0f / %.0f \\\\\n",
           $1, $2, rate($3), rate($6), $9, maybe($10, "%.0f"), maybe($11, "%.0f"),
           maybe($12, "%.0f\\%%"), $13, $14
}
