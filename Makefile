# The Annotated Transformer in C -- build of the trainer, the figures and the book.
#
#   make            deps -> tangle -> build -> figures -> pdf -> demo
#   make check      all tests (Check), prints the summary line
#   make sanitize   the same tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make tangle     regenerate tangled/ from book/*.nw (only changed files are rewritten)
#   make html       the web edition in build/html/; make check-html checks it in headless Chromium
#                   with the live edition, build/html/live/ (make live, make check-live)
#   make figures/mask-subsequent.tex   one figure (its .dat comes from the trainer)
#   make figure NAME=learning-rate ARGS="--curve w=2000"   one figure with other settings
#
# The .nw chapters in book/ are the only source of the trainer; tangled/ is generated.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
.SUFFIXES:
MAKEFLAGS += --no-builtin-rules

# The chapters in the order notangle sees them (the order they were written, bottom up): a
# chunk defined in pieces is tangled in this order, so changing it changes tangled/.
CHAPTERS := book/intro.nw book/tensor.nw book/masks.nw book/program.nw book/embeddings.nw \
            book/attention.nw book/layernorm.nw book/model.nw book/gradcheck.nw book/gradcheck-command.nw \
            book/safetensors.nw book/training.nw book/copy.nw book/copy-command.nw book/checkpoint.nw \
            book/decode.nw book/decode-check.nw book/text.nw book/vocab.nw book/beam.nw \
            book/beam-check.nw \
            book/bleu.nw book/bleu-engine.nw book/translate-commands.nw book/translate.nw \
            book/train-command.nw book/translate-files.nw book/recase.nw book/fast.nw book/bf16.nw \
            book/distributed.nw book/refuses.nw \
            book/solutions.nw book/pytorch.nw

# The reading order, in four parts, that noweave sees: the model first, its training, then
# translation, then the engineering. Every chapter of CHAPTERS must be in it.
READING := book/part-transformer.nw book/intro.nw book/embeddings.nw book/attention.nw \
           book/masks.nw book/layernorm.nw book/model.nw \
           book/part-learning.nw book/training.nw book/gradcheck.nw book/copy.nw \
           book/part-translation.nw book/decode.nw book/beam.nw book/bleu.nw book/translate.nw \
           book/part-engineering.nw book/build.nw book/tensor.nw book/program.nw \
           book/gradcheck-command.nw book/copy-command.nw book/train-command.nw \
           book/decode-check.nw book/beam-check.nw \
           book/safetensors.nw book/checkpoint.nw book/text.nw book/vocab.nw book/recase.nw \
           book/bleu-engine.nw \
           book/translate-files.nw book/translate-commands.nw book/fast.nw book/bf16.nw \
           book/distributed.nw book/refuses.nw book/solutions.nw book/pytorch.nw \
           book/provenance.nw
$(if $(filter-out $(READING),$(CHAPTERS)),$(error chapters missing from READING: $(filter-out $(READING),$(CHAPTERS))))

# Every root chunk that is a file. `noroots` must list exactly these (see tangle).
TANGLED := tangled/tensor.h tangled/tensor.c tangled/batch.h tangled/batch.c \
           tangled/layers.h tangled/layers.c \
           tangled/model.h tangled/model.c \
           tangled/json.h tangled/json.c tangled/safetensors.h tangled/safetensors.c tangled/config.h tangled/config.c tangled/gradcheck.h tangled/gradcheck.c \
           tangled/train.h tangled/train.c \
           tangled/checkpoint.h tangled/checkpoint.c tangled/trainer.h tangled/trainer.c tangled/decode.h tangled/decode.c \
           tangled/utf8.h tangled/utf8.c tangled/text.h tangled/text.c tangled/recase.h tangled/recase.c tangled/vocab.h tangled/vocab.c tangled/beam.h tangled/beam.c tangled/bleu.h tangled/bleu.c \
           tangled/data.h tangled/data.c tangled/modelfile.h tangled/modelfile.c \
           tangled/translator.h tangled/translator.c \
           tangled/figure.h tangled/figure.c \
           tangled/cli.h tangled/cli.c tangled/commands.h tangled/commands-common.c tangled/commands-tool.c \
           tangled/commands-training.c tangled/commands-text.c tangled/commands-translation.c \
           tangled/commands-speed.c tangled/main.c tangled/distributed.h tangled/distributed.c
# The command line (cli.c and the commands) is linked into the program, not into the tests;
# so is distributed.c, the MPI layer (the chapter Training on many machines).
COMMAND_SOURCES := tangled/cli.c $(filter tangled/commands-%.c,$(TANGLED)) tangled/distributed.c
LIB_SOURCES := $(filter-out tangled/main.c $(COMMAND_SOURCES),$(filter %.c,$(TANGLED)))

CC      ?= cc
CFLAGS  ?= -O3 -g
WARN    := -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter $(EXTRA_WARN)
DEPFLAGS = $(shell pkg-config --cflags openblas libcjson)
# oneDNN (Debian's libdnnl-dev, 2.x) has no pkg-config file: its header is in the default path.
LIBS     = $(shell pkg-config --libs openblas libcjson) -ldnnl -lm -fopenmp
CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS   = $(shell pkg-config --libs check)
# -fopenmp: threads (the chapter Making it fast); -fno-trapping-math: the program never
# reads the floating-point exception flags, so the compiler may vectorize loops with
# comparisons (Making it fast);
# -fno-math-errno: nor errno after arithmetic, so sqrtf may be a vector instruction (Adam).
ALL_CFLAGS = $(WARN) -fopenmp -fno-trapping-math -fno-math-errno -D_POSIX_C_SOURCE=200809L -Ibuild/src $(DEPFLAGS) $(CFLAGS)

# MPI (the chapter Training on many machines): with Open MPI's pkg-config file present,
# distributed.c is compiled against mpi.h and the program links libmpi; `make MPI=no`
# builds without it. Its header is a system header (-isystem), so our warnings stay ours.
# After changing MPI: make clean.
MPI ?= $(shell pkg-config --exists ompi-c && echo yes || echo no)
ifeq ($(MPI),yes)
MPI_CFLAGS = -DTRANSFORMER_MPI $(patsubst -I%,-isystem %,$(shell pkg-config --cflags ompi-c))
MPI_LIBS   = $(shell pkg-config --libs ompi-c)
endif

SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

TEST_SOURCES := $(wildcard tests/*.c)
FIGURES := mask-subsequent mask-batch positional-encoding label-smoothing learning-rate copy-loss \
           multi30k-loss multi30k-ablation attention-maps attention-heads bench-ratio \
           bench-stages distributed-scaling norm-warmup calibration multi30k-loss-bleu \
           multi30k-precision attention-temperature
FIGURE_DATA := figures/mask-subsequent.dat \
               figures/mask-batch-1.dat figures/mask-batch-2.dat figures/mask-batch-3.dat \
               figures/positional-encoding.dat figures/smoothing-distribution.dat \
               figures/smoothing-confidence.dat figures/learning-rate.dat \
               figures/distributed-scaling.dat figures/attention-temperature.dat
PDF := book/transformer.pdf

FIGURE_TEX := $(patsubst %,figures/%.tex,$(FIGURES)) figures/bench-table.tex \
              figures/architecture.tex figures/heads-example.tex \
              figures/bench-precision.tex

.PHONY: all deps tangle build figures pdf demo copy-full multi30k multi30k-ship multi30k-figures bench bench-figures check run-check sanitize run-sanitize clean
# deps first, on its own: the rest needs pkg-config files and tools that deps installs.
all: deps
	$(MAKE) build
	$(MAKE) figures pdf
	$(MAKE) demo

deps:
	@tools/install-deps

# ---------------------------------------------------------------- tangle
# One stamp stands for all tangled files. tangled/ is the copy a person reads, without
# `#line`; the build compiles its own copy, in build/src/, whose `#line` directives point
# compiler messages, debuggers and ENSURE at the chapters. cpif rewrites a file only when its
# text changed, so an edit to one chunk recompiles only the files that chunk reaches.
SRC := build/src
tangle: build/tangle.stamp
$(TANGLED) $(patsubst tangled/%,$(SRC)/%,$(TANGLED)): build/tangle.stamp ;
build/tangle.stamp: $(CHAPTERS) tools/tangle
	@mkdir -p build $(SRC) tangled
	tools/tangle --lines $(SRC) $(CHAPTERS) -- $(TANGLED)
	@touch $@

# ---------------------------------------------------------------- build
build: transformer
LIB_OBJECTS := $(patsubst tangled/%.c,build/%.o,$(LIB_SOURCES))

# -MMD writes build/NAME.d, the headers NAME.c includes, so a header edit recompiles only
# the files that include it.
build/%.o: $(SRC)/%.c | build/tangle.stamp
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

build/distributed.o: $(SRC)/distributed.c | build/tangle.stamp
	$(CC) $(ALL_CFLAGS) $(MPI_CFLAGS) -MMD -MP -c -o $@ $<

COMMAND_OBJECTS := $(patsubst tangled/%.c,build/%.o,$(COMMAND_SOURCES))
transformer: build/main.o $(COMMAND_OBJECTS) $(LIB_OBJECTS)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS) $(MPI_LIBS)

# ---------------------------------------------------------------- figures
# The data of every figure comes from the trainer itself: the chart shows what the code computes.
# Every figure-data kind's defaults are the book's settings. FIGDIR and FIGURE_ARGS are set by
# `make figure` (below), which draws one figure with the reader's settings in build/figure/.
figures: $(FIGURE_TEX)
FIGDIR := figures
FIGURE_ARGS :=

# cpif keeps a .dat's time stamp when the numbers did not change, so a rebuilt trainer
# that computes the same masks does not redraw the figures or rebuild the PDF.
$(FIGDIR)/mask-subsequent.dat: transformer
	./transformer figure-data mask subsequent $(FIGURE_ARGS) | cpif $@
$(FIGDIR)/mask-batch-%.dat: transformer
	./transformer figure-data mask batch $(FIGURE_ARGS) --sentence $* | cpif $@
$(FIGDIR)/positional-encoding.dat: transformer
	./transformer figure-data pe $(FIGURE_ARGS) | cpif $@
$(FIGDIR)/smoothing-distribution.dat: transformer
	./transformer figure-data smoothing distribution $(FIGURE_ARGS) | cpif $@
$(FIGDIR)/smoothing-confidence.dat: transformer
	./transformer figure-data smoothing confidence $(FIGURE_ARGS) | cpif $@
$(FIGDIR)/learning-rate.dat: transformer
	./transformer figure-data lr $(FIGURE_ARGS) | cpif $@
$(FIGDIR)/attention-temperature.dat: transformer
	./transformer figure-data temperature $(FIGURE_ARGS) | cpif $@
# Data-parallel training projected to 64 processes (the chapter Training on many
# machines), from the step times measured in figures/bench/ and figures/multi30k/
# (tools/scaling-args) and the cost of the ring allreduce.
$(FIGDIR)/distributed-scaling.dat: transformer tools/scaling-args figures/bench/table.txt \
                                   figures/bench/precision.dat figures/multi30k/log.csv
	./transformer figure-data scaling $$(tools/scaling-args) $(FIGURE_ARGS) | cpif $@
# The shapes and parameter counts of the architecture figure (The big picture), as LaTeX macros
# (without the comment lines that open every figure's data).
figures/architecture.tex: transformer
	./transformer figure-data architecture | sed '/^#/d' | cpif $@
# The worked example's two heads with a random projection (the attention chapter, Learned
# projections), as LaTeX macros, the same way.
figures/heads-example.tex: transformer
	./transformer figure-data heads | sed '/^#/d' | cpif $@
# The loss curves come from a real (small, 2 s) training run of the copy task; FIGURE_ARGS
# are options of `transformer copy`. Its status 1 (a run that does not copy every sequence,
# as a short one may not) still leaves a whole log to draw.
COPY_LOSS_RUN := copy --d-model 32 --d-ff 64 --heads 2 --batch-size 40
$(FIGDIR)/copy-loss.csv: transformer
	./transformer $(COPY_LOSS_RUN) $(FIGURE_ARGS) --log $@.new > /dev/null || test $$? = 1
	cpif $@ < $@.new && rm -f $@.new
# A figure's settings for its caption: the data's #tex lines (book/program.nw, "Figure data").
$(FIGDIR)/%-settings.tex: $(FIGDIR)/%.dat
	sed -n 's/^#tex //p' $< | cpif $@

$(FIGDIR)/mask-subsequent.tex: figures/mask-subsequent.gp $(FIGDIR)/mask-subsequent.dat figures/style.gp
$(FIGDIR)/mask-batch.tex: figures/mask-batch.gp figures/style.gp \
             $(FIGDIR)/mask-batch-1.dat $(FIGDIR)/mask-batch-2.dat $(FIGDIR)/mask-batch-3.dat
$(FIGDIR)/positional-encoding.tex: figures/positional-encoding.gp $(FIGDIR)/positional-encoding.dat \
                                  figures/style.gp
$(FIGDIR)/attention-temperature.tex: figures/attention-temperature.gp \
                                    $(FIGDIR)/attention-temperature.dat figures/style.gp
$(FIGDIR)/label-smoothing.tex: figures/label-smoothing.gp $(FIGDIR)/smoothing-distribution.dat \
                               $(FIGDIR)/smoothing-confidence.dat figures/style.gp
$(FIGDIR)/learning-rate.tex: figures/learning-rate.gp $(FIGDIR)/learning-rate.dat figures/style.gp
$(FIGDIR)/copy-loss.tex: figures/copy-loss.gp $(FIGDIR)/copy-loss.csv figures/style.gp
$(FIGDIR)/distributed-scaling.tex: figures/distributed-scaling.gp \
                                  $(FIGDIR)/distributed-scaling.dat figures/style.gp
# The translator's figures: data recorded from a run of `make multi30k` (committed in
# figures/multi30k/, since the run takes an hour); `make multi30k-figures` renews them.
figures/multi30k-loss.tex: figures/multi30k-loss.gp figures/multi30k/log.csv figures/style.gp
# The validation loss and BLEU of one run with --validate-bleu (What the loss does not say).
figures/multi30k-loss-bleu.tex: figures/multi30k-loss-bleu.gp figures/multi30k/loss-bleu/log.csv \
                                figures/style.gp
# An hour of the recipe in each precision (the speed chapter): two recorded runs' logs.
figures/multi30k-precision.tex: figures/multi30k-precision.gp figures/multi30k/fp32/log.csv \
                                figures/multi30k/loss-bleu/log.csv figures/style.gp
figures/multi30k-ablation.tex: figures/multi30k-ablation.gp figures/multi30k/log.csv \
                               $(wildcard figures/multi30k/ablation-*.csv) figures/style.gp
figures/bench-ratio.tex: figures/bench-ratio.gp figures/bench/table.dat figures/style.gp
# The copy chapter's Two experiments: the logs of figures/copy/run-small.sh (recorded).
figures/norm-warmup.tex: figures/norm-warmup.gp $(wildcard figures/copy/experiments/*.csv) \
                         figures/style.gp
figures/bench-table.tex: tools/bench-table.awk figures/bench/table.dat
	awk -f tools/bench-table.awk figures/bench/table.dat > $@
figures/bench-precision.tex: tools/bench-precision.awk figures/bench/precision.dat
	awk -f tools/bench-precision.awk figures/bench/precision.dat > $@
figures/bench-stages.tex: figures/bench-stages.gp figures/bench/stages.dat figures/style.gp
# The attention maps come from a trained translator (`transformer attention`, not figure-data);
# the book's are recorded in figures/multi30k/. `make figure NAME=attention-maps` draws them
# anew from MODEL (default: the translator that ships with the book) for line SENTENCE of the
# 2016 test set, ARGS being options of `transformer attention`: --layer L --head H|mean.
MODEL = data/multi30k-de-en.safetensors
SENTENCE = $(MT_SENTENCE)
ATTENTION_DIR := $(if $(filter figures,$(FIGDIR)),figures/multi30k,$(FIGDIR))
ifneq ($(FIGDIR),figures)
$(FIGDIR)/attention-%.dat: transformer
	sed -n '$(SENTENCE)p' data/multi30k/test2016.de \
	  | ./transformer attention --model $(MODEL) --kind $* $(FIGURE_ARGS) | cpif $@
$(FIGDIR)/attention-head-%.dat: transformer
	sed -n '$(SENTENCE)p' data/multi30k/test2016.de \
	  | ./transformer attention --model $(MODEL) --kind cross $(FIGURE_ARGS) --head $* \
	  | cpif $@
endif
$(FIGDIR)/attention-maps.tex: figures/attention-maps.gp figures/style.gp \
                              $(patsubst %,$(ATTENTION_DIR)/attention-%.dat,encoder decoder cross)
$(FIGDIR)/attention-heads.tex: figures/attention-heads.gp figures/style.gp \
                               $(patsubst %,$(ATTENTION_DIR)/attention-head-%.dat,0 1 2 3 4 5 6 7)
# The reliability diagram (the translation chapter, What the loss does not say): how sure
# MODEL is of each piece of the validation set against how often it is right.
$(FIGDIR)/calibration.dat: transformer $(MODEL) data/multi30k/val.de data/multi30k/val.en
	./transformer calibration --model $(MODEL) $(FIGURE_ARGS) | cpif $@
$(FIGDIR)/calibration.tex: figures/calibration.gp $(FIGDIR)/calibration.dat figures/style.gp \
                          figures/multi30k/no-smoothing/calibration.dat
# Each script reads its data from, and writes its drawing into, the directory `dir`; the
# recorded figures read `source` when `make figure` gives them DATA.
$(FIGDIR)/%.tex: figures/%.gp
	gnuplot -e "dir = '$(FIGDIR)/'$(if $(filter-out figures,$(FIGDIR)),$(if $(DATA),; source = '$(DATA)'))" $<
	@test -s $@ && test -s $(FIGDIR)/$*.pdf

# The settings files of the captions (one per data file of the figures above).
FIGURE_SETTINGS := $(patsubst %.dat,%-settings.tex,$(FIGURE_DATA))

# One figure with the reader's settings, as a PDF of its own with its labels, legend and the
# command that printed its data: make figure NAME=learning-rate ARGS="--curve w=2000".
# NAME is a figure's file name in figures/; ARGS go to its figure-data (each panel's), or to
# `transformer copy` (copy-loss) or `transformer attention` (attention-maps, see above).
# The recorded figures take a file of one's own measurements instead, DATA: a log of
# `make multi30k` (multi30k-loss and multi30k-loss-bleu; default its own; multi30k-precision
# draws it as the float run against the recorded bfloat16 one), a table of `make bench` (bench-ratio;
# default its own) or of bench/stages.py --dat (bench-stages), or one log of a directory of
# copy-task runs named as figures/copy/run-small.sh names them (norm-warmup draws them all).
.PHONY: figure
FIGURE_NAMES := mask-subsequent mask-batch positional-encoding label-smoothing learning-rate \
                copy-loss attention-maps attention-heads multi30k-loss bench-ratio \
                bench-stages distributed-scaling norm-warmup calibration multi30k-loss-bleu \
                multi30k-precision attention-temperature
RECORDED := multi30k-loss bench-ratio bench-stages norm-warmup multi30k-loss-bleu \
            multi30k-precision
DATA_multi30k-loss = $(MT)/log.csv
DATA_multi30k-loss-bleu = $(MT)/log.csv
DATA_multi30k-precision = $(MT)/log.csv
DATA_norm-warmup = figures/copy/experiments/pre-w400-s1.csv
DATA_bench-ratio = build/bench/table.dat
DATA = $(DATA_$(NAME))
figure:
	@case ' $(FIGURE_NAMES) ' in *' $(NAME) '*) ;; \
	  *) echo "make figure: NAME must be one of: $(FIGURE_NAMES)" >&2; exit 2;; esac
	@[ $(NAME) != attention-maps ] && [ $(NAME) != attention-heads ] && [ $(NAME) != calibration ] \
	  || [ -f '$(MODEL)' ] || { \
	  echo "make figure: no model '$(MODEL)' (make multi30k trains one; or MODEL=FILE)" >&2; \
	  exit 2; }
	@[ -z '$(filter $(NAME),$(RECORDED))' ] || [ -f '$(DATA)' ] || { \
	  echo "make figure: no data '$(DATA)' for $(NAME) (DATA=FILE)" >&2; exit 2; }
	@rm -rf build/figure/$(NAME) && mkdir -p build/figure/$(NAME)
	$(MAKE) --no-print-directory FIGDIR=build/figure/$(NAME) FIGURE_ARGS='$(ARGS)' \
	  build/figure/$(NAME)/$(NAME).tex
	@# Under the drawing: the command of each data file (its \figuresettings), or of the run.
	cd build/figure/$(NAME) && if [ $(NAME) = copy-loss ]; then \
	  echo '\texttt{transformer $(COPY_LOSS_RUN) $(ARGS)}' | sed 's/--/-{}-/g'; \
	elif [ -n '$(filter $(NAME),$(RECORDED))' ]; then \
	  echo '\texttt{data: $(DATA)}' | sed 's/_/\\_/g'; \
	elif [ $(NAME) = calibration ]; then \
	  echo '\texttt{transformer calibration --model $(MODEL) $(ARGS)}' \
	    | sed 's/_/\\_/g; s/--/-{}-/g'; \
	elif [ $(NAME) = attention-maps ] || [ $(NAME) = attention-heads ]; then \
	  for data in *.dat; do sed -n '1s/^# \(.*\)/\\texttt{\1}\\par/p' $$data; done; \
	  echo '\texttt{$(MODEL), line $(SENTENCE) of data/multi30k/test2016.de}' | sed 's/_/\\_/g'; \
	else for data in *.dat; do sed -n 's/^#tex //p' $$data; echo '\figuresettings\par'; done; \
	fi > captions.tex
	pdflatex -interaction=nonstopmode -halt-on-error -output-directory=build/figure \
	  -jobname=$(NAME) '\def\figuredir{build/figure/$(NAME)/}\def\figname{$(NAME)}$(if $(filter attention-maps attention-heads,$(NAME)),\def\figurefont{\scriptsize})\input{figures/page.ltx}' \
	  > build/figure/$(NAME).out 2>&1 || { tail -20 build/figure/$(NAME).out; exit 1; }
	@echo "make figure: build/figure/$(NAME).pdf"

# ---------------------------------------------------------------- pdf
# One noweave call over all chapters, in reading order, so cross-references and the index
# span the book.
LATEXMK := latexmk -pdf -interaction=nonstopmode -halt-on-error -silent -jobname=transformer \
           -outdir=build/pdf
pdf: $(PDF)
build/woven.tex: $(READING)
	@mkdir -p build
	noweave -n -index $(READING) > $@

# The title page's version is the program's (one source: TRANSFORMER_VERSION in tangled/cli.h).
build/version.tex: tangled/cli.h
	@mkdir -p build
	sed -n 's/^#define TRANSFORMER_VERSION "\(.*\)"$$/\\newcommand{\\transformerversion}{\1}/p' $< > $@
	@test -s $@

# The measured numbers of the prose, tables and captions: LaTeX macros that the scripts of
# tools/numbers/ compute from the recorded runs (figures/, data/) and the program itself, so
# that no number in the book is typed by hand (tools/check-numbers, in make check, says so).
NUMBER_SCRIPTS := $(sort $(wildcard tools/numbers/*.sh))
RECORDED_FILES := $(shell find figures -mindepth 2 -type f; find data bench/results -type f) \
                  bench/bench.py
build/numbers.tex: $(NUMBER_SCRIPTS) tools/numbers tools/numbers/lib.awk tools/numbers/machine-letter tools/bleu-cased $(RECORDED_FILES) \
                   transformer figures/calibration.dat
	@mkdir -p build
	for script in $(NUMBER_SCRIPTS); do TRANSFORMER=./transformer sh $$script; done > $@.new
	@dup=$$(sed -n 's/^\\newcommand{\\\([A-Za-z]*\)}.*/\1/p' $@.new | sort | uniq -d); \
	  [ -z "$$dup" ] || { echo "build/numbers.tex: defined twice: $$dup" >&2; exit 1; }
	cpif $@ < $@.new && rm -f $@.new

# The recorded output the chapters quote, \quoteline{FILE}{N}, and the program's own output
# they show (tools/quotes), its refusals of bad input among them (tools/refusals): made again
# when a chapter changes what it quotes.
build/quotes.tex: tools/quotes tools/refusals tools/st-metadata.awk tools/numbers/lib.awk \
                  tests/fuzz/regressions/model-name-with-newline.st $(READING) $(RECORDED_FILES) \
                  transformer
	@mkdir -p build
	TRANSFORMER=./transformer tools/quotes > $@.new
	cpif $@ < $@.new && rm -f $@.new

# The appendix Where each measurement comes from: a row per recorded run, from the runs' own
# records (tools/provenance).
build/provenance-ablation.tex: tools/provenance figures/multi30k/ablation.txt figures/machines.txt
	@mkdir -p build
	tools/provenance ablation | cpif $@
build/provenance.tex: tools/provenance $(RECORDED_FILES)
	@mkdir -p build
	tools/provenance | cpif $@

# The sources the PDF is built from, attached to it (its title page's back says how to take
# them out): the tracked files of the clone, or the files an unpacked archive lists in SOURCES.
SOURCE_FILES := $(shell { git ls-files 2>/dev/null || sed -n 's/^file: //p' SOURCES 2>/dev/null; } \
                  | while IFS= read -r f; do [ -f "$$f" ] && printf '%s\n' "$$f"; done)
build/sources.tar.gz build/sources.tex &: tools/sources-archive $(SOURCE_FILES)
	@mkdir -p build
	tools/sources-archive build/sources.tar.gz build/sources.tex

$(PDF): book/book.tex build/woven.tex build/version.tex build/numbers.tex build/quotes.tex build/provenance.tex build/provenance-ablation.tex \
        build/sources.tar.gz build/sources.tex $(FIGURE_TEX) $(FIGURE_SETTINGS)
	@mkdir -p build/pdf
	$(LATEXMK) book/book.tex > build/pdf/latexmk.out 2>&1 || { tail -40 build/pdf/latexmk.out; exit 1; }
	@# noweb's chunk labels (page numbers) can move after latexmk thinks the run converged;
	@# force further runs, a few at most, until LaTeX stops asking for one.
	for run in 1 2 3; do \
	  grep -q 'Rerun to get' build/pdf/transformer.log || break; \
	  $(LATEXMK) -g book/book.tex > build/pdf/latexmk.out 2>&1 || { tail -40 build/pdf/latexmk.out; exit 1; }; \
	done
	tools/check-latex-log build/pdf/transformer.log
	cp build/pdf/transformer.pdf $@

# ---------------------------------------------------------------- live edition
# The trainer compiled to WebAssembly for the reader's browser (Building the book):
# the same tangled C with TRANSFORMER_BROWSER, which leaves out OpenBLAS, oneDNN, OpenMP,
# MPI, cJSON and the AVX-512 code (their chapters say how), by Debian's clang for wasm32-wasi
# against wasi-libc. wasi-libc emulates signal() and the process clocks only when asked
# (-D_WASI_EMULATED_* and their libraries). Without -fopenmp the OpenMP pragmas are ignored
# (-Wno-unknown-pragmas); the browser's build leaves some static functions without a caller
# (-Wno-unused-function). tools/live/wasi.js runs it, in node (tools/live/run.js) or a page.
LIVE := build/live
LIVE_CC := clang --target=wasm32-wasi
LIVE_CFLAGS := -O2 $(WARN) -Wno-unknown-pragmas -Wno-unused-function -DTRANSFORMER_BROWSER \
               -D_POSIX_C_SOURCE=200809L -D_WASI_EMULATED_SIGNAL -D_WASI_EMULATED_PROCESS_CLOCKS \
               -fno-trapping-math -fno-math-errno -msimd128 -I$(SRC)
LIVE_LIBS := -lm -lwasi-emulated-signal -lwasi-emulated-process-clocks
LIVE_OBJECTS := $(patsubst tangled/%.c,$(LIVE)/%.o,$(filter %.c,$(TANGLED)))
# The live pages: the learning-rate chart (tools/live/lr.html) and every other figure-data
# figure (figures.html, its script figures.js), beside the shim and the drawing module.
# One page holds the other figures, a section each: the program is fetched and compiled
# once, and each section's anchor (figures.html#pe) is the place its chapter links to.
# The translator's page (translate.html, its script translate.js) fetches the shipped model.
# The copy task's page (copy.html, copy.js) trains in a worker (copy-worker.js) the recipe of
# the book's copy-loss figure: copy-settings.js holds COPY_LOSS_RUN's options and the seconds
# of its recorded run (the last line of figures/copy-loss.csv).
LIVE_PAGE_FILES := $(addprefix $(LIVE)/,lr.html figures.html figures.js wasi.js plot.js \
                     translate.html translate.js copy.html copy.js copy-worker.js)
.PHONY: live
live: $(LIVE)/transformer.wasm $(LIVE_PAGE_FILES) $(LIVE)/book-settings.js \
      $(LIVE)/multi30k-de-en.safetensors $(LIVE)/copy-settings.js
$(LIVE)/copy-settings.js: figures/copy-loss.csv Makefile
	@mkdir -p $(LIVE)
	printf '%s\nglobalThis.LIVE_COPY = {args: %s, nativeSeconds: %s};\n' \
	  '// made by make live from COPY_LOSS_RUN and figures/copy-loss.csv' \
	  "[$$(echo '$(wordlist 2,99,$(COPY_LOSS_RUN))' | sed 's/[^ ]*/"&"/g; s/ /, /g')]" \
	  "$$(tail -1 figures/copy-loss.csv | cut -d, -f6)" > $@
$(LIVE_PAGE_FILES): $(LIVE)/%: tools/live/%
	@mkdir -p $(LIVE)
	cp $< $@
$(LIVE)/multi30k-de-en.safetensors: data/multi30k-de-en.safetensors
	@mkdir -p $(LIVE)
	cp $< $@
# The settings of the book's figures that are measured, not figure-data's defaults: the
# scaling projection's step times (tools/scaling-args, as for figures/distributed-scaling.dat),
# so that figures.html first draws what the book shows.
$(LIVE)/book-settings.js: tools/scaling-args figures/bench/table.txt figures/bench/precision.dat \
                          figures/multi30k/log.csv
	@mkdir -p $(LIVE)
	printf '%s\nglobalThis.LIVE_BOOK_SETTINGS = {scaling: "%s"};\n' \
	  '// made by make live from tools/scaling-args: the step times the book measured' \
	  "$$(tools/scaling-args)" > $@
# Its toolchain (clang's wasm32 target, wasi-libc) comes with the web edition's packages.
.PHONY: live-deps
live-deps:
	@tools/install-deps --html
$(LIVE)/%.o: $(SRC)/%.c | build/tangle.stamp live-deps
	@mkdir -p $(LIVE)
	$(LIVE_CC) $(LIVE_CFLAGS) -MMD -MP -c -o $@ $<
$(LIVE)/transformer.wasm: $(LIVE_OBJECTS)
	$(LIVE_CC) $(LIVE_CFLAGS) -o $@ $^ $(LIVE_LIBS)
-include $(LIVE_OBJECTS:.o=.d)
# The live edition's times that the build chapter reports (tools/live/measure, which says what
# each is), recorded like the other measurements: run by hand, on a quiet machine, one run,
# into figures/live/ with the run's identity (tools/numbers/live.sh reads them).
.PHONY: live-numbers
live-numbers: html transformer
	@mkdir -p figures/live
	tools/run-info "make live-numbers" | sed '/^threads:/d' > figures/live/run.txt
	tools/live/measure build/html ./transformer > figures/live/times.txt.new
	mv figures/live/times.txt.new figures/live/times.txt
	echo "end_seconds: $$(date +%s)" >> figures/live/run.txt
	cat figures/live/times.txt
# The pages are read in the web edition, build/html/live/ (make html puts them there with
# tools/live/place, which fills in the numbers and files of the figures they redraw).
# check-live: the pages in headless Chromium against the native program (screenshots at a
# phone's width in build/live-*.png), then the checks' own self-tests (each planted fault
# must fail them); not part of make check.
.PHONY: check-live
check-live: html transformer
	@tools/install-deps --html
	tests/live/shim-test.sh
	tests/live/shim-test.sh --self-test
	tools/live/check.py build/html ./transformer build
	tools/live/check.py build/html ./transformer build --self-test
	tools/live/check-translate.py build/html ./transformer build
	tools/live/check-translate.py build/html ./transformer build --self-test
	tools/live/check-copy.py build/html ./transformer build
	tools/live/check-copy.py build/html ./transformer build --self-test

# ---------------------------------------------------------------- web edition
# The same chapters as linked pages (Building the book, The web edition): build/html/, one
# page per chapter, math by KaTeX, the figures drawn by LaTeX as SVG, code chunks linked to
# their definitions and uses, the live edition in build/html/live/ (a figure it redraws links
# to its page, tools/live/figures.txt). `make check-html` opens every page in headless
# Chromium and compares the counts of sections, figures, equations and exercises with the PDF's.
HTML_TOOLS := $(wildcard tools/html/*) tools/live/figures.txt
.PHONY: html check-html
html: build/html/index.html live tools/live/place
	tools/live/place $(LIVE) build/html-fig/stats.json build/html
# The site links the PDF and the sources archive, and ships both.
build/html/index.html: $(READING) book/book.tex build/version.tex build/numbers.tex build/quotes.tex build/provenance.tex build/provenance-ablation.tex build/sources.tex \
                       $(FIGURE_TEX) $(FIGURE_SETTINGS) $(HTML_TOOLS) $(PDF) build/sources.tar.gz
	@tools/install-deps --html
	tools/html/build $(READING)
check-html: html
	@tools/install-deps --html
	tools/html/check.py build/html build
	tools/html/check-content.py build/html
	tools/html/check-layout.py build/html build
	tools/html/check-figures.py build/html
	tools/html/check-figures.py --screenshot build/html build/html-fig-masks.png
	@echo "check-html: each check against its planted faults"
	tools/html/check-content.py --self-test build/html
	tools/html/check-layout.py --self-test build/html
	tools/html/check-figures.py --self-test build/html
	@if [ -f build/pdf/transformer.aux ] && [ -f $(PDF) ]; then \
	  tools/html/compare-counts build/html-fig/stats.json build/pdf $(PDF); \
	else echo "check-html: no PDF build to compare the counts with (make pdf)"; fi

# ---------------------------------------------------------------- demo
# The demo: the figures' data in the terminal, then the copy task with a reduced model
# (d_model 64, d_ff 256, 4 heads, 30 epochs; the course's recipe otherwise), about 15 s.
demo: transformer
	./transformer demo
	./transformer copy --d-model 64 --d-ff 256 --heads 4 --epochs 30

# The course's full recipe: d_model 512, d_ff 2048, 8 heads, 20 epochs of 20 batches of 80.
# It does not copy every one of its 8 sequences (the recorded run, figures/copy/full.txt, says
# how many), so its status 1 is shown and ignored.
copy-full: transformer
	-./transformer copy

# German to English on Multi30k (the translation chapter, its section Getting to 41): train
# on the CPU with the recipe that section chose (one vocabulary of 8000 subwords for both
# languages, all three embeddings tied, dropout 0.3, 31 epochs whose last 10 cool the rate
# down to 0, the rate twice the schedule's default (factor 1, warm-up 800 steps), early
# stopping after 5 epochs without progress; no time budget, so that every machine follows the
# same recipe, in about an hour on two cores; on a slower machine add --minutes 60 to
# MT_RECIPE, and train brings the last epoch forward so that the cool-down ends in time),
# translate the 2016 test set with the model of the best validation loss and a beam of 4 (the
# length penalty's alpha 2, translate's default), print BLEU, lowercased and cased, and one
# summary line; the log has the validation set's greedy BLEU of every epoch beside its loss
# (--validate-bleu, which leaves the training as it is). The run's identity (recipe, trainer
# commit, processor) goes to run.txt; the book's Results report one such run (multi30k-ship,
# multi30k-figures below). Another seed: MT_RECIPE="... --seed 2". Not part of check.
MT := build/multi30k
MT_RECIPE := --epochs 31 --cooldown 10 --dropout 0.3 --tie-all --subwords 8000 --patience 5 \
             --factor 1 --warmup 800
multi30k: transformer
	@mkdir -p $(MT) && rm -f $(MT)/model-epoch-*.safetensors $(MT)/log.csv
	tools/run-info "$(MT_RECIPE)" > $(MT)/run.txt
	./transformer train $(MT_RECIPE) --validate-bleu --model $(MT)/model.safetensors \
	  --checkpoint $(MT)/last.safetensors --log $(MT)/log.csv
	./transformer translate --model $(MT)/model.safetensors --beam 4 \
	  < data/multi30k/test2016.de > $(MT)/test2016.hyp.en
	./transformer bleu $(MT)/test2016.hyp.en data/multi30k/test2016.en | tee $(MT)/bleu.txt
	./transformer bleu $(MT)/test2016.hyp.en data/multi30k/test2016.en --lowercase \
	  | tee -a $(MT)/bleu.txt
	echo "end_seconds: $$(date +%s)" >> $(MT)/run.txt
	@tools/multi30k-summary $(MT)

# The run of `make multi30k` becomes the book's: its best model, rounded to bfloat16, is the
# translator that ships with the book (multi30k-ship), and its log, identity and translations
# go into figures/multi30k/ (multi30k-figures): test2016 with the beam (make multi30k's own
# output), greedily, and with the beam at each length penalty ALPHAS on both the validation and
# the test set (Getting to 41 chooses alpha on the first); the shipped model's translations;
# and the attention maps of line MT_SENTENCE of test2016 by the shipped model. The book's
# numbers are computed from these files (tools/numbers/multi30k.sh).
MT_SENTENCE := 10
ALPHAS := 0 0.6 1 1.5 2 2.5
MT_FIGURES := figures/multi30k
multi30k-ship: transformer
	./transformer average $(MT)/model.safetensors --bf16 --recaser data/multi30k/train.en \
	  --output $(MODEL)
	@echo "make multi30k-ship: now make multi30k-figures, then tools/model-card > data/multi30k-de-en.md"
multi30k-figures: transformer
	@mkdir -p $(MT_FIGURES)/alpha
	cp $(MT)/log.csv $(MT)/run.txt $(MT_FIGURES)/
	cp $(MT)/test2016.hyp.en $(MT_FIGURES)/test2016.beam4.en
	./transformer translate --model $(MT)/model.safetensors --beam 1 \
	  < data/multi30k/test2016.de > $(MT_FIGURES)/test2016.greedy.en
	for alpha in $(ALPHAS); do for set in val test2016; do \
	  ./transformer translate --model $(MT)/model.safetensors --alpha $$alpha \
	    < data/multi30k/$$set.de > $(MT_FIGURES)/alpha/$$set.alpha$$alpha.en; \
	done; done
	./transformer translate --model $(MODEL) < data/multi30k/test2016.de \
	  > $(MT_FIGURES)/shipped.test2016.beam4.en
	./transformer translate --model $(MODEL) --beam 1 < data/multi30k/test2016.de \
	  > $(MT_FIGURES)/shipped.test2016.greedy.en
	for kind in encoder decoder cross; do \
	  sed -n '$(MT_SENTENCE)p' data/multi30k/test2016.de \
	    | ./transformer attention --model $(MODEL) --kind $$kind \
	    > $(MT_FIGURES)/attention-$$kind.dat; \
	done
	for head in 0 1 2 3 4 5 6 7; do \
	  sed -n '$(MT_SENTENCE)p' data/multi30k/test2016.de \
	    | ./transformer attention --model $(MODEL) --kind cross --head $$head \
	    > $(MT_FIGURES)/attention-head-$$head.dat; \
	done

# ---------------------------------------------------------------- benchmarks
# Run by hand, never by `make check`: C against PyTorch side by side, in fp32 and bf16, at 1
# and 2 threads (Making it fast, ~20 min); again with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset
# for both sides if the environment sets either (a user's laptop has neither); then the
# translation of test2016 (bench-translate, ~35 min: the reference decodes under two
# sentences a second). BENCH_ARGS go to bench/bench.py, e.g. BENCH_ARGS="--configs copy
# --repeats 1" for a quick look.
BENCH_ARGS ?=
bench: build
	tools/install-deps --bench
	$(MAKE) --no-print-directory interop
	@mkdir -p build/bench
	/usr/bin/python3 bench/bench.py --out build/bench/runs --dat build/bench/table.dat \
	  --precisions fp32,bf16 --precision-dat build/bench/precision.dat $(BENCH_ARGS) \
	  | tee build/bench/table.txt
	@if [ -n "$${OPENBLAS_CORETYPE:-}$${OPENBLAS_L2_SIZE:-}" ]; then \
	  echo "--- again with the OpenBLAS environment unset, for both sides"; \
	  /usr/bin/python3 bench/bench.py --unset-openblas-env --out build/bench/runs-unset \
	    --dat build/bench/table-unset.dat --precisions fp32,bf16 \
	    --precision-dat build/bench/precision-unset.dat $(BENCH_ARGS) \
	    | tee build/bench/table-unset.txt; \
	else echo "(OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset: the run above covers both)"; fi
	$(MAKE) --no-print-directory bench-translate
# Translation of test2016 with the shipped model: C batched greedy and beam 4 against the
# notebook's greedy_decode one sentence at a time, sentences/s and BLEU of each, three runs
# of each side (~35 min).
.PHONY: bench-translate
bench-translate: transformer
	tools/install-deps --bench
	@mkdir -p build/bench
	/usr/bin/python3 bench/translate_bench.py | tee build/bench/translate.txt
# Renew the speed chapter's recorded measurements (figures/bench/, about 90 minutes), all of
# them from one trainer on one machine in one go, so that its tables can be set side by side:
# the run's identity (run.txt), the tables in float and bfloat16 (bench.py), what each
# optimization bought (stages.py), one run with OpenBLAS's own choice of kernel if the
# environment sets OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE, and the translation of test2016 with
# the shipped model (translate_bench.py).
bench-figures: build
	tools/install-deps --bench
	@mkdir -p figures/bench
	tools/run-info "make bench-figures" | sed '/^threads:/d' > figures/bench/run.txt
	/usr/bin/python3 bench/bench.py --out build/bench/runs --dat figures/bench/table.dat \
	  --precisions fp32,bf16 --precision-dat figures/bench/precision.dat \
	  | tee figures/bench/table.txt
	rm -f figures/bench/unset-openblas-env.txt
	@if [ -n "$${OPENBLAS_CORETYPE:-}$${OPENBLAS_L2_SIZE:-}" ]; then \
	  echo /usr/bin/python3 bench/bench.py --unset-openblas-env --configs copy,small,base --repeats 1; \
	  /usr/bin/python3 bench/bench.py --unset-openblas-env --configs copy,small,base --repeats 1 \
	    --out build/bench/runs-unset | tee figures/bench/unset-openblas-env.txt; fi
	cd bench && /usr/bin/python3 stages.py --dat ../figures/bench/stages.dat \
	  | tee ../figures/bench/stages.txt
	/usr/bin/python3 bench/translate_bench.py | tee figures/bench/translate.txt
	echo "end_seconds: $$(date +%s)" >> figures/bench/run.txt

# ---------------------------------------------------------------- tests
build/tests/%.o: tests/%.c | build/tangle.stamp
	@mkdir -p build/tests
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -MMD -MP -c -o $@ $<

# The tests count the trainer's allocations (tests/test_fast.c): every malloc goes through them.
TEST_LDFLAGS := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc
build/run-tests: $(patsubst tests/%.c,build/tests/%.o,$(TEST_SOURCES)) $(LIB_OBJECTS)
	$(CC) $(ALL_CFLAGS) $(TEST_LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LIBS)

check: deps
	$(MAKE) run-exercises
	$(MAKE) run-check
# Check's default of 4 s per test is too short on a busy machine; a slow test is not a failure.
run-check: build/run-tests transformer $(FIGURE_DATA)
	CK_DEFAULT_TIMEOUT=60 MPI_TESTS=$(MPI) TRANSFORMER=./transformer build/run-tests
	TRANSFORMER=./transformer tests/faults.sh
	tests/check-numbers.sh
	tests/check-references.sh
	tests/check-history.sh
	tests/check-listings.sh
	TRANSFORMER=./transformer tests/model-card.sh
	tests/pytorch-loss.sh
	TRANSFORMER=./transformer tests/interop.sh
	tests/patches.sh
	tests/commands.sh
	tests/check-link-cycles.sh build/main.o $(LIB_OBJECTS) $(COMMAND_OBJECTS)
	tools/fresh-debian-table --check
# The model file read and written by plain PyTorch (tools/transformer_torch.py): skipped, with
# a line that says so, where /usr/bin/python3 has no torch (tools/install-deps --bench).
.PHONY: interop
interop: transformer
	TRANSFORMER=./transformer tests/interop.sh

# Valgrind's memcheck on a tiny training run (copy task, with a checkpoint and a resume) and
# a translation with a tiny translator of subwords: no invalid access, no use of uninitialized memory,
# no leak. About a minute; .ci/run calls it.
VALGRIND := valgrind --error-exitcode=3 --leak-check=full --errors-for-leak-kinds=definite \
            --show-leak-kinds=definite --track-origins=yes --quiet
.PHONY: valgrind
valgrind: transformer
	@rm -rf build/valgrind && mkdir -p build/valgrind
	head -24 data/multi30k/train.de > build/valgrind/train.de
	head -24 data/multi30k/train.en > build/valgrind/train.en
	cp build/valgrind/train.de build/valgrind/val.de && cp build/valgrind/train.en build/valgrind/val.en
	OMP_NUM_THREADS=1 $(VALGRIND) ./transformer copy --epochs 1 --batches 4 --batch-size 4 \
	  --layers 1 --d-model 16 --d-ff 32 --heads 2 --checkpoint build/valgrind/c.st > /dev/null || [ $$? = 1 ]
	OMP_NUM_THREADS=1 $(VALGRIND) ./transformer copy --epochs 2 --batches 4 --batch-size 4 \
	  --layers 1 --d-model 16 --d-ff 32 --heads 2 --resume build/valgrind/c.st > /dev/null || [ $$? = 1 ]
	OMP_NUM_THREADS=1 $(VALGRIND) ./transformer train --data build/valgrind --epochs 1 --layers 1 \
	  --d-model 16 --d-ff 32 --heads 2 --token-budget 200 --subwords 120 --model build/valgrind/m.st \
	  --checkpoint build/valgrind/t.st > /dev/null
	head -3 data/multi30k/test2016.de | OMP_NUM_THREADS=1 $(VALGRIND) ./transformer translate \
	  --model build/valgrind/m.st --beam 2 > build/valgrind/out.en
	test "$$(wc -l < build/valgrind/out.en)" = 3
	@echo "valgrind: no errors"

# Sanitizers: a separate tree of objects so the normal build is untouched. Its program is
# built without MPI (whose libraries the leak checker would blame), so MPI_TESTS=no.
build/asan/%.o: $(SRC)/%.c | build/tangle.stamp
	@mkdir -p build/asan
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -MMD -MP -c -o $@ $<
build/asan/tests/%.o: tests/%.c | build/tangle.stamp
	@mkdir -p build/asan/tests
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) $(SAN_FLAGS) -MMD -MP -c -o $@ $<
build/asan/transformer: build/asan/main.o $(patsubst tangled/%.c,build/asan/%.o,$(COMMAND_SOURCES) $(LIB_SOURCES))
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -o $@ $^ $(LIBS)
build/asan/run-tests: $(patsubst tests/%.c,build/asan/tests/%.o,$(TEST_SOURCES)) \
                      $(patsubst tangled/%.c,build/asan/%.o,$(LIB_SOURCES))
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(TEST_LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LIBS)

sanitize: deps
	$(MAKE) run-sanitize
run-sanitize: build/asan/run-tests build/asan/transformer $(FIGURE_DATA)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  CK_DEFAULT_TIMEOUT=120 MPI_TESTS=no TRANSFORMER=build/asan/transformer build/asan/run-tests

# ---------------------------------------------------------------- fuzzing
# libFuzzer harnesses (tests/fuzz/, clang from Debian): every reader of outside input. `make
# fuzz` runs each for FUZZ_SECONDS on its committed seeds (tests/fuzz/seeds/NAME) plus what
# earlier runs found (build/fuzz/corpus/NAME); a crash leaves build/fuzz/crash-NAME-* and fails.
# A long run by hand: make fuzz FUZZ_SECONDS=3600 (or FUZZ_RUNS=1000000).
FUZZERS := tokenize detokenize vocab bleu json model checkpoint cli
FUZZ_SECONDS ?= 20
FUZZ_RUNS ?= -1
FUZZ_CC := clang
FUZZ_SAN := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS = -std=c11 -Wno-pass-failed -fopenmp -D_POSIX_C_SOURCE=200809L -Ibuild/src -Itests/fuzz $(DEPFLAGS) $(FUZZ_SAN)
build/fuzz/%.o: $(SRC)/%.c | build/tangle.stamp
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<
FUZZ_OBJECTS := $(patsubst tangled/%.c,build/fuzz/%.o,$(LIB_SOURCES))
build/fuzz/fuzz-cli: tests/fuzz/fuzz-cli.c build/fuzz/cli.o $(FUZZ_OBJECTS) tests/fuzz/fuzz.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Wl,--wrap=exit -o $@ $< build/fuzz/cli.o \
	  $(FUZZ_OBJECTS) $(LIBS)
build/fuzz/fuzz-%: tests/fuzz/fuzz-%.c $(FUZZ_OBJECTS) tests/fuzz/fuzz.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJECTS) $(LIBS)
.PHONY: fuzz fuzz-build fuzz-seeds
fuzz-build: $(patsubst %,build/fuzz/fuzz-%,$(FUZZERS))
fuzz: deps
	$(MAKE) fuzz-build
	@for f in $(FUZZERS); do \
	  mkdir -p build/fuzz/corpus/$$f; \
	  echo "== fuzz $$f ($(FUZZ_SECONDS) s)"; \
	  TMPDIR=$$([ -w /dev/shm ] && echo /dev/shm || echo $${TMPDIR:-/tmp}) \
	  ASAN_OPTIONS=detect_leaks=$$([ $$f = cli ] && echo 0 || echo 1) \
	  build/fuzz/fuzz-$$f -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -rss_limit_mb=2048 \
	    -timeout=10 -max_len=65536 $$([ $$f = cli ] && echo -close_fd_mask=2) -print_final_stats=1 -artifact_prefix=build/fuzz/crash-$$f- \
	    build/fuzz/corpus/$$f tests/fuzz/seeds/$$f 2> build/fuzz/$$f.log \
	    || { tail -40 build/fuzz/$$f.log; exit 1; }; \
	  grep -E '^stat::number_of_executed_units|^Done' build/fuzz/$$f.log | tr '\n' ' '; echo; \
	done
# The seeds of the model and checkpoint harnesses are written by the harnesses themselves.
fuzz-seeds: build/fuzz/fuzz-model build/fuzz/fuzz-checkpoint
	FUZZ_MAKE_SEED=tests/fuzz/seeds/model/tiny.st build/fuzz/fuzz-model
	FUZZ_MAKE_SEED=tests/fuzz/seeds/checkpoint/tiny.st build/fuzz/fuzz-checkpoint

# ---------------------------------------------------------------- exercises
# The book's exercises that need the repository: `make exercise-NAME` runs one (NAME is the
# exercise's label in the book without ex:, e.g. exercise-mask-count), in build/exercises/NAME/;
# `make exercises` runs the quick ones (about a minute), then the slow ones (minutes each), and
# checks each printed result against the number its solution states (tests/exercises.sh holds
# both); `make check` runs only the quick ones; `tests/exercises.sh list`.
# Exercises that change the book apply tests/exercises/NAME.patch to a copy of the repository.
.PHONY: exercises run-exercises gradcheck
exercises: deps
	$(MAKE) run-exercises
	tests/exercises.sh check-slow
run-exercises: transformer build/run-tests build/exercises/activations $(FIGURE_DATA)
	tests/exercises.sh check
exercise-%: transformer build/run-tests build/exercises/activations $(FIGURE_DATA)
	tests/exercises.sh run $*
build/exercises/activations: tests/exercises/activations.c $(LIB_OBJECTS)
	@mkdir -p build/exercises
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS)
gradcheck: transformer
	./transformer gradcheck

-include $(wildcard build/*.d build/tests/*.d build/asan/*.d build/asan/tests/*.d build/fuzz/*.d)

clean:
	rm -rf build transformer $(PDF) figures/*.dat figures/*.csv figures/*.tex figures/*.pdf
