#!/bin/sh
# The live edition's times (the build chapter, Section "The live edition") as LaTeX macros
# (see tools/numbers/README): \live... from figures/live/times.txt, one run of make
# live-numbers (tools/live/measure says what each line measures), on the machine of
# figures/live/run.txt, named by its letter as the chapters name machines.
set -eu
LIB=$(cat tools/numbers/lib.awk)
dir=figures/live
letter=$(tools/numbers/machine-letter $dir/run.txt)
awk -v letter="$letter" "$LIB"'BEGIN { def("liveMachine", letter) }'
# A time in the page and natively: both, and how many times slower the page is.
awk "$LIB"'
    function pair(name, page, native) {
        def(name, grouped(page)); def(name "Native", grouped(native))
        def(name "Ratio", fixed(page / native, 1))
    }
    /^#/ { next }
    { key = $1; sub(/:$/, "", key) }
    key == "wasm_bytes" { def("liveWasmKB", grouped(int($2 / 1000 + 0.5))) }
    key == "model_bytes" { def("liveModelMB", fixed($2 / 1e6, 1)) }
    key == "figures_ready_ms" { def("liveFiguresReadyMs", grouped($2)) }
    key == "translator_usable_ms" { def("liveTranslatorUsableMs", grouped($2)) }
    key == "translator_ready_ms" { def("liveTranslatorReadyMs", grouped($2)) }
    key == "greedy_ms" { pair("liveGreedyMs", $2, $3) }
    key == "beam_ms" { pair("liveBeamMs", $2, $3) }
    key == "test_lines" {
        def("liveTestLines", $2); def("liveTestEqual", $5)
        def("liveTestSeconds", fixed($3 / 1000, 1)); def("liveTestSecondsNative", fixed($4 / 1000, 1))
        def("liveTestRatio", fixed($3 / $4, 1))
    }
    key == "copy_epoch_ms" {
        def("liveCopyEpochs", $2); def("liveCopyEpochMs", fixed($3, 0))
        def("liveCopyEpochMsNative", fixed($4, 0)); def("liveCopyRatio", fixed($3 / $4, 1))
    }
    key == "browser" { v = $2; sub(/^[^\/]*\//, "", v); sub(/\..*/, "", v); def("liveChromium", v) }
    END { if (NR < 10) { print "tools/numbers/live.sh: " FILENAME ": lines missing" > "/dev/stderr"; exit 1 } }
' $dir/times.txt
