/* The commands of the transformer program, one function each (argv[0] is the first
   argument after the command's name), and the options they share about the model.
   Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef COMMANDS_H
#define COMMANDS_H
#include <stdio.h>
#include "cli.h"
#include "trainer.h"

/* <<commands.h declarations>> */
int run_figure_data(int argc, char **argv);
void print_figure_data_help(FILE *out);
int run_demo(int argc, char **argv);
int run_random(int argc, char **argv);
int run_time_matmul(int argc, char **argv);
int run_gradcheck(int argc, char **argv);
int run_copy(int argc, char **argv);
int run_time_decode(int argc, char **argv);
int run_tokenize(int argc, char **argv);
int run_vocab(int argc, char **argv);
int run_bleu(int argc, char **argv);
int run_train(int argc, char **argv);
int run_translate(int argc, char **argv);
int run_attention(int argc, char **argv);
int run_average(int argc, char **argv);
int run_calibration(int argc, char **argv);
int run_recase(int argc, char **argv);
int run_benchmark(int argc, char **argv);

/* The options --layers, --d-model, --d-ff and --heads of the Config config, for a table. */
#define MODEL_SIZE_OPTIONS(config)                                               \
    {"layers", OPTION_INT, &(config).layers, 1, 24, NULL,                        \
     "N layers of the encoder and of the decoder"},                              \
    {"d-model", OPTION_INT, &(config).d_model, 2, 4096, NULL, "N width of the model"}, \
    {"d-ff", OPTION_INT, &(config).d_ff, 1, 16384, NULL,                         \
     "N width of the feed-forward networks"},                                    \
    {"heads", OPTION_INT, &(config).heads, 1, 64, NULL, "N attention heads"}

void check_model_size(const char *command, const Config *config);

/* The options --factor, --warmup, --rate and --smoothing of the StepSettings settings and
   --accumulate of the RunSettings run, for a table. */
#define STEP_OPTIONS(settings, run)                                                    \
    {"factor", OPTION_REAL, &(settings).factor, 1e-6, 1e30, NULL,                       \
     "F factor of the learning-rate schedule"},                                         \
    {"warmup", OPTION_LONG, &(settings).warmup, 0, 10000000, NULL,                      \
     "N warm-up steps of the schedule (0: none)"},                                      \
    {"rate", OPTION_REAL, &(settings).rate, 1e-9, 10.0, NULL,                           \
     "R a constant learning rate R instead of the schedule"},                           \
    {"smoothing", OPTION_FLOAT, &(settings).smoothing, 0.0, 0.99, NULL,                 \
     "E label smoothing"},                                                              \
    {"accumulate", OPTION_INT, &(run).accumulate, 1, 4096, NULL,                        \
     "K parts of a batch, one update: accumulation"}

/* After the options are read: the constant schedule if --rate gave a rate. */
void choose_schedule(StepSettings *settings);

/* The options --checkpoint, --resume, --checkpoint-every and --stop-after for a table:
   into the RunSettings run, and the char * resume_path. */
#define CHECKPOINT_OPTIONS(run, resume_path)                                     \
    {"checkpoint", OPTION_TEXT, &(run).checkpoint_path, 0, 0, NULL,              \
     "FILE training state"},                                                     \
    {"resume", OPTION_TEXT, &(resume_path), 0, 0, NULL,                          \
     "FILE continue the run saved in FILE, bit for bit"},                        \
    {"checkpoint-every", OPTION_LONG, &(run).checkpoint_every, 1, 1e9, NULL,     \
     "N also save every N steps, if not 0"},                                     \
    {"stop-after", OPTION_LONG, &(run).stop_after, 1, 1e9, NULL,                 \
     "STEP save and stop after step STEP (default: never)"}

/* Add the recipe rows of the step settings and the parts of a batch of run. */
void step_recipe(Recipe *recipe, const StepSettings *settings, const RunSettings *run);

/* The option --precision fp32|bf16 for a table; choice: an int, the Precision. */
#define PRECISION_OPTION(choice) \
    {"precision", OPTION_CHOICE, &(choice), 0, 0, "fp32|bf16", \
     "number format of the matrix products"}
/* The precision a command uses when not told: bf16 where the processor has it. */
int default_precision(void);
/* compute.precision = choice; bf16 on a processor without it is a usage error. */
void set_precision(const char *command, int choice);
#endif
