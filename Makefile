# The Annotated Transformer in C -- build of the trainer, the figures and the book.
#
#   make            deps -> tangle -> build -> figures -> pdf -> demo
#   make check      all tests (Check), prints the summary line
#   make sanitize   the same tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make tangle     regenerate tangled/ from book/*.nw (only changed files are rewritten)
#   make figures/mask-subsequent.tex   one figure (its .dat comes from the trainer)
#
# The .nw chapters in book/ are the only source of the trainer; tangled/ is generated.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
.SUFFIXES:
MAKEFLAGS += --no-builtin-rules

# Chapters in reading order: notangle and noweave both see them in this order.
CHAPTERS := book/intro.nw book/tensor.nw book/masks.nw book/program.nw book/embeddings.nw \
            book/attention.nw book/layernorm.nw book/model.nw book/gradcheck.nw \
            book/safetensors.nw book/training.nw book/copy.nw book/checkpoint.nw \
            book/decode.nw book/text.nw book/beam.nw \
            book/bleu.nw book/translate.nw book/fast.nw book/solutions.nw

# Every root chunk that is a file. `noroots` must list exactly these (see tangle).
TANGLED := tangled/tensor.h tangled/tensor.c tangled/layers.h tangled/layers.c \
           tangled/model.h tangled/model.c \
           tangled/safetensors.h tangled/safetensors.c tangled/gradcheck.h tangled/gradcheck.c \
           tangled/train.h tangled/train.c \
           tangled/checkpoint.h tangled/checkpoint.c tangled/trainer.h tangled/trainer.c tangled/decode.h tangled/decode.c \
           tangled/text.h tangled/text.c tangled/beam.h tangled/beam.c tangled/bleu.h tangled/bleu.c \
           tangled/data.h tangled/data.c \
           tangled/figure.h tangled/figure.c \
           tangled/cli.h tangled/cli.c tangled/commands.h tangled/commands-tool.c \
           tangled/commands-training.c tangled/commands-text.c tangled/commands-translation.c \
           tangled/commands-speed.c tangled/main.c
# The command line (cli.c and the commands) is linked into the program, not into the tests.
COMMAND_SOURCES := tangled/cli.c $(filter tangled/commands-%.c,$(TANGLED))
LIB_SOURCES := $(filter-out tangled/main.c $(COMMAND_SOURCES),$(filter %.c,$(TANGLED)))

CC      ?= cc
CFLAGS  ?= -O3 -g
WARN    := -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter $(EXTRA_WARN)
DEPFLAGS = $(shell pkg-config --cflags openblas libcjson)
# oneDNN (Debian's libdnnl-dev, 2.x) has no pkg-config file: its header is in the default path.
LIBS     = $(shell pkg-config --libs openblas libcjson) -ldnnl -lm -fopenmp
CHECK_CFLAGS = $(shell pkg-config --cflags check)
CHECK_LIBS   = $(shell pkg-config --libs check)
# -fopenmp: threads (Chapter 19); -fno-trapping-math: the program never reads the floating-point
# exception flags, so the compiler may vectorize loops with comparisons (Chapter 19).
ALL_CFLAGS = $(WARN) -fopenmp -fno-trapping-math -D_POSIX_C_SOURCE=200809L -Itangled $(DEPFLAGS) $(CFLAGS)

SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

TEST_SOURCES := $(wildcard tests/*.c)
FIGURES := mask-subsequent mask-batch positional-encoding label-smoothing learning-rate copy-loss \
           multi30k-loss attention-maps bench-ratio bench-stages
FIGURE_DATA := figures/mask-subsequent.dat \
               figures/mask-batch-1.dat figures/mask-batch-2.dat figures/mask-batch-3.dat \
               figures/positional-encoding.dat figures/smoothing-distribution.dat \
               figures/smoothing-confidence.dat figures/learning-rate.dat
PDF := book/transformer.pdf

FIGURE_TEX := $(patsubst %,figures/%.tex,$(FIGURES)) figures/bench-table.tex \
              figures/bench-precision.tex

.PHONY: all deps tangle build figures pdf demo copy-full multi30k multi30k-figures bench bench-figures check run-check sanitize run-sanitize clean
# deps first, on its own: the rest needs pkg-config files and tools that deps installs.
all: deps
	$(MAKE) build
	$(MAKE) figures pdf
	$(MAKE) demo

deps:
	@tools/install-deps

# ---------------------------------------------------------------- tangle
# One stamp stands for all tangled files. cpif rewrites a file only when its text changed,
# so an edit to one chunk recompiles only the files that chunk reaches.
tangle: build/tangle.stamp
$(TANGLED): build/tangle.stamp ;
build/tangle.stamp: $(CHAPTERS) tools/tangle
	@mkdir -p build tangled
	tools/tangle $(CHAPTERS) -- $(TANGLED)
	@touch $@

# ---------------------------------------------------------------- build
build: transformer
LIB_OBJECTS := $(patsubst tangled/%.c,build/%.o,$(LIB_SOURCES))

# -MMD writes build/NAME.d, the headers NAME.c includes, so a header edit recompiles only
# the files that include it.
build/%.o: tangled/%.c | build/tangle.stamp
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

COMMAND_OBJECTS := $(patsubst tangled/%.c,build/%.o,$(COMMAND_SOURCES))
transformer: build/main.o $(COMMAND_OBJECTS) $(LIB_OBJECTS)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS)

# ---------------------------------------------------------------- figures
# The data of every figure comes from the trainer itself: the chart shows what the code computes.
figures: $(FIGURE_TEX)

# cpif keeps a .dat's time stamp when the numbers did not change, so a rebuilt trainer
# that computes the same masks does not redraw the figures or rebuild the PDF.
figures/mask-subsequent.dat: transformer
	./transformer figure-data mask subsequent --size 20 | cpif $@
figures/mask-batch-%.dat: transformer
	./transformer figure-data mask batch --sentence $* | cpif $@
figures/positional-encoding.dat: transformer
	./transformer figure-data pe --positions 100 --d-model 20 --first 4 | cpif $@
figures/smoothing-distribution.dat: transformer
	./transformer figure-data smoothing distribution | cpif $@
figures/smoothing-confidence.dat: transformer
	./transformer figure-data smoothing confidence | cpif $@
figures/learning-rate.dat: transformer
	./transformer figure-data lr --steps 20000 --every 20 | cpif $@
# The loss curves come from a real (small, 2 s) training run of the copy task.
figures/copy-loss.csv: transformer
	./transformer copy --d-model 32 --d-ff 64 --heads 2 --batch-size 40 --log $@.new > /dev/null
	cpif $@ < $@.new && rm -f $@.new

figures/mask-subsequent.tex: figures/mask-subsequent.gp figures/mask-subsequent.dat figures/style.gp
figures/mask-batch.tex: figures/mask-batch.gp figures/style.gp \
                        figures/mask-batch-1.dat figures/mask-batch-2.dat figures/mask-batch-3.dat
figures/positional-encoding.tex: figures/positional-encoding.gp figures/positional-encoding.dat \
                                 figures/style.gp
figures/label-smoothing.tex: figures/label-smoothing.gp figures/smoothing-distribution.dat \
                             figures/smoothing-confidence.dat figures/style.gp
figures/learning-rate.tex: figures/learning-rate.gp figures/learning-rate.dat figures/style.gp
figures/copy-loss.tex: figures/copy-loss.gp figures/copy-loss.csv figures/style.gp
# The translator's figures: data recorded from a run of `make multi30k` (committed in
# figures/multi30k/, since the run takes an hour); `make multi30k-figures` renews them.
figures/multi30k-loss.tex: figures/multi30k-loss.gp figures/multi30k/log.csv figures/style.gp
figures/bench-ratio.tex: figures/bench-ratio.gp figures/bench/table.dat figures/style.gp
figures/bench-table.tex: tools/bench-table.awk figures/bench/table.dat
	awk -f tools/bench-table.awk figures/bench/table.dat > $@
figures/bench-precision.tex: tools/bench-precision.awk figures/bench/precision.dat
	awk -f tools/bench-precision.awk figures/bench/precision.dat > $@
figures/bench-stages.tex: figures/bench-stages.gp figures/bench/stages.dat figures/style.gp
figures/attention-maps.tex: figures/attention-maps.gp figures/style.gp \
                            $(patsubst %,figures/multi30k/attention-%.dat,encoder decoder cross)
figures/%.tex: figures/%.gp
	gnuplot $<
	@test -s $@ && test -s figures/$*.pdf

# ---------------------------------------------------------------- pdf
# One noweave call over all chapters, so cross-references and the index span the book.
LATEXMK := latexmk -pdf -interaction=nonstopmode -halt-on-error -silent -jobname=transformer \
           -outdir=build/pdf
pdf: $(PDF)
build/woven.tex: $(CHAPTERS)
	@mkdir -p build
	noweave -n -index $(CHAPTERS) > $@

# The title page's version is the program's (one source: TRANSFORMER_VERSION in tangled/cli.h).
build/version.tex: tangled/cli.h
	@mkdir -p build
	sed -n 's/^#define TRANSFORMER_VERSION "\(.*\)"$$/\\newcommand{\\transformerversion}{\1}/p' $< > $@
	@test -s $@

$(PDF): book/book.tex build/woven.tex build/version.tex $(FIGURE_TEX)
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

# ---------------------------------------------------------------- demo
# The demo: the figures' data in the terminal, then the copy task with a reduced model
# (d_model 64, d_ff 256, 4 heads, 30 epochs; the course's recipe otherwise), about 15 s.
demo: transformer
	./transformer demo
	./transformer copy --d-model 64 --d-ff 256 --heads 4 --epochs 30

# The course's full recipe: d_model 512, d_ff 2048, 8 heads, 20 epochs of 20 batches of 80.
# It copies 7 of 8 sequences (as the PyTorch reference does, bench/), so its status 1 is shown
# and ignored.
copy-full: transformer
	-./transformer copy

# German to English on Multi30k (Chapter 18): train for at most an hour on the CPU, translate
# the 2016 test set with a beam of 4, and print BLEU, lowercased and cased. Not part of check.
MT := build/multi30k
multi30k: transformer
	@mkdir -p $(MT)
	./transformer train --minutes 60 --model $(MT)/model.safetensors \
	  --checkpoint $(MT)/last.safetensors --log $(MT)/log.csv
	./transformer translate --model $(MT)/model.safetensors --beam 4 \
	  < data/multi30k/test2016.de > $(MT)/test2016.hyp.en
	./transformer bleu $(MT)/test2016.hyp.en data/multi30k/test2016.en --lowercase
	./transformer bleu $(MT)/test2016.hyp.en data/multi30k/test2016.en

# Copy the run's log and draw the attention maps of one test sentence (line 10 of test2016)
# into figures/multi30k/, the data of the chapter's figures.
MT_SENTENCE := 10
multi30k-figures: transformer
	@mkdir -p figures/multi30k
	cp $(MT)/log.csv figures/multi30k/log.csv
	for kind in encoder decoder cross; do \
	  sed -n '$(MT_SENTENCE)p' data/multi30k/test2016.de \
	    | ./transformer attention --model $(MT)/model.safetensors --kind $$kind \
	    > figures/multi30k/attention-$$kind.dat; \
	done

# ---------------------------------------------------------------- benchmarks
# Run by hand, never by `make check`: C against PyTorch side by side, in fp32 and bf16
# (Chapter 19, ~20 min).
bench: build
	@mkdir -p build/bench
	/usr/bin/python3 bench/bench.py --out build/bench/runs --dat build/bench/table.dat \
	  --precisions fp32,bf16 --precision-dat build/bench/precision.dat | tee build/bench/table.txt
# Renew the chapter's recorded measurements (figures/bench/, ~30 min): the tables above and
# bench/stages.py, what each optimization bought.
bench-figures: build
	@mkdir -p figures/bench
	/usr/bin/python3 bench/bench.py --out build/bench/runs --dat figures/bench/table.dat \
	  --precisions fp32,bf16 --precision-dat figures/bench/precision.dat \
	  | tee figures/bench/table.txt
	cd bench && /usr/bin/python3 stages.py --dat ../figures/bench/stages.dat \
	  | tee ../figures/bench/stages.txt

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
	CK_DEFAULT_TIMEOUT=60 TRANSFORMER=./transformer build/run-tests

# Sanitizers: a separate tree of objects so the normal build is untouched.
build/asan/%.o: tangled/%.c | build/tangle.stamp
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
	  CK_DEFAULT_TIMEOUT=120 TRANSFORMER=build/asan/transformer build/asan/run-tests

# ---------------------------------------------------------------- exercises
# The book's exercises that need the repository: `make exercise-NAME` runs one (NAME is the
# exercise's label in the book without ex:, e.g. exercise-mask-count), in build/exercises/NAME/;
# `make exercises` runs the quick ones (about a minute) and checks each printed result against
# the number its solution states (tests/exercises.sh holds both); `tests/exercises.sh list`.
# Exercises that change the book apply tests/exercises/NAME.patch to a copy of the repository.
.PHONY: exercises run-exercises gradcheck
exercises: deps
	$(MAKE) run-exercises
run-exercises: transformer build/run-tests build/exercises/activations $(FIGURE_DATA)
	tests/exercises.sh check
exercise-%: transformer build/run-tests build/exercises/activations $(FIGURE_DATA)
	tests/exercises.sh run $*
build/exercises/activations: tests/exercises/activations.c $(LIB_OBJECTS)
	@mkdir -p build/exercises
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS)
gradcheck: transformer
	./transformer gradcheck

-include $(wildcard build/*.d build/tests/*.d build/asan/*.d build/asan/tests/*.d)

clean:
	rm -rf build transformer $(PDF) figures/*.dat figures/*.csv figures/*.tex figures/*.pdf
