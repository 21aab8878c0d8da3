# The rows of the speed chapter's (Making it fast) table of precisions, in LaTeX, from figures/bench/precision.dat
# (bench/bench.py --precisions fp32,bf16 --precision-dat): config threads c_fp32 c_bf16
# pt_fp32 pt_bf16 bf16_over_fp32 bf16_over_pt_fp32 bf16_over_pt_bf16 fp32_over_pt_fp32
# sgemm_gflops bf16_gflops c_bf16_gflops c_bf16_rss pt_bf16_rss.
#   awk -f tools/bench-precision.awk figures/bench/precision.dat > figures/bench-precision.tex
function rate(x) { return x >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x) }
/^#/ || NF < 15 { next }
{
    printf "  %s & %d & %s & %s & %s & %s & %.2f & %.2f & %.2f & %.0f & %.0f & %.0f \\\\\n",
           $1, $2, rate($3), rate($4), rate($5), rate($6), $7, $8, $9, $11, $12, $13
}
