#line 33 "book/program.nw"
/* The transformer command line. Generated from the book's chapters by notangle:
   edit the book, not this file. */
#include "figure.h"
/* <<main.c includes>> */
#line 41 "book/program.nw"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#line 93 "book/program.nw"
#include <errno.h>
#line 138 "book/program.nw"
#include <getopt.h>
#include <limits.h>
#line 528 "book/gradcheck.nw"
#include "gradcheck.h"
#line 523 "book/copy.nw"
#include <unistd.h>
#include "trainer.h"
#line 541 "book/decode.nw"
#include "decode.h"
#line 1360 "book/text.nw"
#include "text.h"
#line 989 "book/bleu.nw"
#include "bleu.h"
#line 986 "book/translate.nw"
#include "beam.h"
#include "data.h"
#line 181 "book/fast.nw"
#include <sys/resource.h>
/* <<main.c definitions>> */
#line 51 "book/program.nw"
#define TRANSFORMER_VERSION "0.1.0"
#line 59 "book/program.nw"
static _Noreturn __attribute__((format(printf, 2, 3)))
void usage_error(const char *command, const char *format, ...)
{
    va_list arguments;
    const char *space = command ? " " : "", *name = command ? command : "";
    fprintf(stderr, "transformer%s%s: ", space, name);
    va_start(arguments, format);
    vfprintf(stderr, format, arguments);
    va_end(arguments);
    fprintf(stderr, " (try 'transformer%s%s --help')\n", space, name);
    exit(2);
}
#line 79 "book/program.nw"
static int finish_output(void)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        die("cannot write the results to standard output: %s", strerror(errno));
    return 0;
}
#line 97 "book/program.nw"
static long long parse_integer(const char *command, const char *flag, const char *text,
                               long long low, long long high)
{
    char *end;
    errno = 0;
    long long value = text ? strtoll(text, &end, 10) : 0;
    if (text == NULL || *text == '\0' || *end != '\0' || errno == ERANGE
        || value < low || value > high)
        usage_error(command, "%s expects an integer from %lld to %lld, got '%s'",
                    flag, low, high, text ? text : "nothing");
    return value;
}
#line 115 "book/program.nw"
static double parse_number(const char *command, const char *flag, const char *text,
                           double low, double high)
{
    char *end;
    errno = 0;
    double value = text ? strtod(text, &end) : 0.0;
    if (text == NULL || *text == '\0' || *end != '\0' || errno == ERANGE
        || !(value >= low && value <= high))
        usage_error(command, "%s expects a number from %g to %g, got '%s'",
                    flag, low, high, text ? text : "nothing");
    return value;
}
#line 143 "book/program.nw"
typedef enum {
    OPTION_INT,      /* int, in [low, high] */
    OPTION_LONG,     /* long, in [low, high] */
    OPTION_REAL,     /* double, in [low, high] */
    OPTION_FLOAT,    /* float, in [low, high] */
    OPTION_TEXT,     /* const char *, not empty: a file name, say */
    OPTION_CHOICE,   /* int: the index of the value among choices, "a|b|c" */
    OPTION_SWITCH,   /* bool, set to true; takes no value */
    OPTION_SET       /* int, set to low; takes no value */
} OptionKind;

typedef struct {
    const char *name;      /* without the dashes: "epochs" is --epochs */
    OptionKind kind;
    void *target;          /* where the value goes, of the kind's type */
    double low, high;
    const char *choices;   /* OPTION_CHOICE only */
} Option;

enum { MAX_OPTIONS = 24 };
#line 172 "book/program.nw"
static void read_option(const char *command, const Option *option, const char *text)
{
    char flag[64];
    snprintf(flag, sizeof flag, "--%s", option->name);
    switch (option->kind) {
    case OPTION_INT:
        *(int *)option->target = (int)parse_integer(command, flag, text, (long long)option->low,
                                                    (long long)option->high);
        break;
    case OPTION_LONG:   /* a high of 2^63 or more means no limit below LONG_MAX */
        *(long *)option->target = (long)parse_integer(
            command, flag, text, (long long)option->low,
            option->high >= 0x1p63 ? LONG_MAX : (long long)option->high);
        break;
    case OPTION_REAL:
        *(double *)option->target = parse_number(command, flag, text, option->low, option->high);
        break;
    case OPTION_FLOAT:
        *(float *)option->target =
            (float)parse_number(command, flag, text, option->low, option->high);
        break;
    case OPTION_TEXT:
        if (text == NULL || *text == '\0') usage_error(command, "%s needs a value", flag);
        *(const char **)option->target = text;
        break;
    case OPTION_CHOICE:
        /* <<Look the value up among the choices>> */
#line 207 "book/program.nw"
        {
            const char *word = option->choices;
            for (int index = 0; *word; index++) {
                const size_t length = strcspn(word, "|");
                if (text && strlen(text) == length && strncmp(text, word, length) == 0) {
                    *(int *)option->target = index;
                    return;
                }
                word += length + (word[length] == '|');
            }
            char list[256] = "";   /* 'a', 'b' or 'c' */
            for (word = option->choices; *word;) {
                const size_t length = strcspn(word, "|");
                const bool last = word[length] == '\0', first = word == option->choices;
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%.*s'",
                         first ? "" : last ? " or " : ", ", (int)length, word);
                word += length + !last;
            }
            usage_error(command, "%s expects %s, got '%s'", flag, list, text ? text : "nothing");
        }
#line 199 "book/program.nw"
        break;
    case OPTION_SWITCH: *(bool *)option->target = true; break;
    case OPTION_SET: *(int *)option->target = (int)option->low; break;
    }
}
#line 238 "book/program.nw"
/* Read the options of argv[0 .. argc) (the arguments after the command's name) into their
   targets; return the index of the first operand, the operands being argv[index .. argc). */
static int parse_options(const char *command, const Option *options, int count, int argc,
                         char **argv)
{
    ENSURE(count <= MAX_OPTIONS, "%d options", count);
    struct option table[MAX_OPTIONS + 1];
    for (int i = 0; i < count; i++) {
        const bool takes_value = options[i].kind != OPTION_SWITCH && options[i].kind != OPTION_SET;
        table[i] = (struct option){options[i].name, takes_value ? required_argument : no_argument,
                                   NULL, i};
    }
    table[count] = (struct option){NULL, 0, NULL, 0};
    char **arguments = argv - 1;   /* arguments[0]: the command's name */
    opterr = 0, optind = 0;
    int found;
    while ((found = getopt_long(argc + 1, arguments, ":", table, NULL)) != -1) {
        if (found == '?') usage_error(command, "unknown option '%s'", arguments[optind - 1]);
        read_option(command, &options[found == ':' ? optopt : found],
                    found == ':' ? NULL : optarg);
    }
    return optind - 1;
}

/* For a command that takes no operands: refuse any. */
static void no_operands(const char *command, int first, int argc, char **argv)
{
    if (first < argc) usage_error(command, "unexpected argument '%s'", argv[first]);
}
#line 276 "book/program.nw"
typedef struct {
    const char *name;
    const char *summary;   /* one line for 'transformer --help' */
    const char *help;      /* the text of 'transformer NAME --help', or NULL and: */
    void (*print_help)(FILE *out);
    int (*run)(int argc, char **argv);   /* argv[0] is the first argument after NAME */
} Command;
/* <<Command functions>> */
#line 420 "book/program.nw"
static int run_figure_data(int argc, char **argv)
{
    char name[64] = "";
    int a = 0;
    for (; a < argc && argv[a][0] != '-'; a++) {
        if (strlen(name) + strlen(argv[a]) + 2 > sizeof name)
            usage_error("figure-data", "figure name too long");
        if (*name) strcat(name, " ");
        strcat(name, argv[a]);
    }
    if (!*name) usage_error("figure-data", "which figure? (the list is in its help)");
    const FigureKind *kind = NULL;
    for (int k = 0; k < figure_kind_count; k++)
        if (strcmp(figure_kinds[k].name, name) == 0) kind = &figure_kinds[k];
    if (kind == NULL) usage_error("figure-data", "unknown figure '%s'", name);
    /* <<Read the figure's options, starting from their defaults>> */
#line 443 "book/program.nw"
    int value[FIGURE_MAX_OPTIONS] = {0};
    Option options[FIGURE_MAX_OPTIONS];
    int count = 0;
    for (; count < FIGURE_MAX_OPTIONS && kind->options[count].flag; count++) {
        const FigureOption *option = &kind->options[count];
        value[count] = option->fallback;
        options[count] = (Option){option->flag + 2, OPTION_INT, &value[count], option->low,
                                  option->high, NULL};   /* + 2: the name without "--" */
    }
    no_operands("figure-data", a + parse_options("figure-data", options, count, argc - a,
                                                 argv + a), argc, argv);
#line 436 "book/program.nw"
    const char *problem = kind->emit(stdout, value);
    if (problem) usage_error("figure-data", "%s", problem);
    return 0;
}
#line 460 "book/program.nw"
static void print_figure_data_help(FILE *out)
{
    fprintf(out, "usage: transformer figure-data FIGURE [OPTIONS] > FILE.dat\n\n"
                 "Print the numbers behind one figure of the book, "
                 "as gnuplot reads them.\n\n"
                 "figures:\n");
    for (int k = 0; k < figure_kind_count; k++) {
        fprintf(out, "  %-16s %s\n", figure_kinds[k].name, figure_kinds[k].summary);
        for (int o = 0; o < FIGURE_MAX_OPTIONS && figure_kinds[k].options[o].flag; o++) {
            const FigureOption *option = &figure_kinds[k].options[o];
            fprintf(out, "      %s N   %s (%d to %d, default %d)\n", option->flag,
                    option->help, option->low, option->high, option->fallback);
        }
    }
}
#line 494 "book/program.nw"
static int run_demo(int argc, char **argv)
{
    no_operands("demo", parse_options("demo", NULL, 0, argc, argv), argc, argv);
    printf("The Annotated Transformer in C, version " TRANSFORMER_VERSION
           ": the data of the book's figures\n");
    for (int k = 0; k < figure_kind_count; k++) {
        int value[FIGURE_MAX_OPTIONS] = {0};
        for (int o = 0; o < FIGURE_MAX_OPTIONS && figure_kinds[k].options[o].flag; o++)
            value[o] = figure_kinds[k].options[o].fallback;
        printf("\n%s: %s\n", figure_kinds[k].name, figure_kinds[k].summary);
        figure_summary(stdout, &figure_kinds[k], value);
    }
    return 0;
}
#line 582 "book/program.nw"
static int run_random(int argc, char **argv)
{
    long seed = 42, stream = 54, count = 6;
    enum { BITS, UNIFORM, NORMAL };
    int kind = UNIFORM;
    const Option options[] = {
        {"seed", OPTION_LONG, &seed, 0, 0x1p63, NULL},     /* 2^63: up to LONG_MAX */
        {"stream", OPTION_LONG, &stream, 0, 0x1p63, NULL},
        {"count", OPTION_LONG, &count, 1, 100000000, NULL},
        {"bits", OPTION_SET, &kind, BITS, 0, NULL},
        {"uniform", OPTION_SET, &kind, UNIFORM, 0, NULL},
        {"normal", OPTION_SET, &kind, NORMAL, 0, NULL},
    };
    no_operands("random", parse_options("random", options, sizeof options / sizeof *options,
                                        argc, argv), argc, argv);
    Rng rng;
    rng_seed(&rng, (uint64_t)seed, (uint64_t)stream);
    for (long i = 0; i < count; i++)
        if (kind == BITS) printf("0x%08lx\n", (unsigned long)rng_next(&rng));
        else printf("%.9g\n", kind == UNIFORM ? rng_uniform(&rng) : rng_normal(&rng));
    return 0;
}
#line 644 "book/program.nw"
static int run_time_matmul(int argc, char **argv)
{
    int n = 256, choice = matmul_kernel;   /* the choices in MatmulKernel's order */
    const Option options[] = {
        {"size", OPTION_INT, &n, 1, 8192, NULL},
        {"kernel", OPTION_CHOICE, &choice, 0, 0, "blas|reference"},
    };
    no_operands("time-matmul", parse_options("time-matmul", options,
                                             sizeof options / sizeof *options, argc, argv),
                argc, argv);
    const MatmulKernel kernel = (MatmulKernel)choice;
    /* <<Fill two random matrices and time their product>> */
#line 664 "book/program.nw"
    size_t size = (size_t)n * n;
    float *a = xmalloc(3 * size * sizeof(float)), *b = a + size, *c = b + size;
    Rng rng;
    rng_seed(&rng, 1, 0);
    for (size_t i = 0; i < 2 * size; i++) a[i] = rng_uniform_between(&rng, -1, 1);
    matmul_kernel = kernel;
    long repeats = 0;
    double start = seconds_now(), elapsed;
    do {
        matmul(false, false, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        repeats++;
    } while ((elapsed = seconds_now() - start) < 0.1);
    double seconds = elapsed / (double)repeats;
    double flops = 2.0 * n * n * (double)n;
    printf("n=%d kernel=%s seconds=%.6g GFLOP/s=%.3f\n", n,
           kernel == MATMUL_BLAS ? "blas" : "reference", seconds, flops / seconds / 1e9);
    free(a);
#line 656 "book/program.nw"
    return 0;
}
#line 532 "book/gradcheck.nw"
static int run_gradcheck(int argc, char **argv)
{
    const char *layer = "all";
    int samples = 20;
    float step = 1e-2f;
    const Option options[] = {
        {"layer", OPTION_TEXT, &layer, 0, 0, NULL},
        {"samples", OPTION_INT, &samples, 1, 100000, NULL},
        {"step", OPTION_FLOAT, &step, 1e-6, 0.5, NULL},
    };
    no_operands("gradcheck", parse_options("gradcheck", options,
                                           sizeof options / sizeof *options, argc, argv),
                argc, argv);
    /* <<Run the chosen checks and report the worst error>> */
#line 550 "book/gradcheck.nw"
    double worst_layer = 0.0, worst_model = 0.0;
    bool ran_layers = false, ran_model = false;
    for (int i = 0; gradcheck_layer_names[i]; i++)
        if (strcmp(layer, "all") == 0 || strcmp(layer, gradcheck_layer_names[i]) == 0) {
            printf("%s:\n", gradcheck_layer_names[i]);
            worst_layer = fmax(worst_layer,
                               gradcheck_layer(gradcheck_layer_names[i], samples, step, stdout));
            ran_layers = true;
        }
    if (strcmp(layer, "all") == 0 || strcmp(layer, "model") == 0) {
        for (int v = 0; v < 4; v++) {
            printf("model, %s-norm, %s layer norm%s:\n", v & 1 ? "post" : "pre",
                   v & 2 ? "annotated" : "standard", v == 0 ? ", tied generator" : "");
            worst_model = fmax(worst_model,
                               gradcheck_model(v & 1 ? NORM_POST : NORM_PRE,
                                               v & 2 ? LAYERNORM_ANNOTATED : LAYERNORM_STANDARD,
                                               v == 0, samples, step, stdout));
        }
        ran_model = true;
    }
    if (!ran_layers && !ran_model) usage_error("gradcheck", "unknown layer '%s'", layer);
    const bool passed = worst_layer < GRADCHECK_LAYER_BOUND
                        && worst_model < GRADCHECK_MODEL_BOUND;
    /* A part that did not run says so: a worst error of 0 would read as a perfect score. */
    char layers_part[64] = "layers not run", model_part[64] = "model not run";
    if (ran_layers)
        snprintf(layers_part, sizeof layers_part, "layers %.2e (bound %.0e)", worst_layer,
                 GRADCHECK_LAYER_BOUND);
    if (ran_model)
        snprintf(model_part, sizeof model_part, "model %.2e (bound %.0e)", worst_model,
                 GRADCHECK_MODEL_BOUND);
    printf("worst error e: %s, %s: %s\n", layers_part, model_part, passed ? "passed" : "FAILED");
    return passed ? 0 : 1;
#line 546 "book/gradcheck.nw"
}
#line 533 "book/copy.nw"
/* The options --layers, --d-model, --d-ff and --heads of the Config config, for a table. */
#define MODEL_SIZE_OPTIONS(config)                                  \
    {"layers", OPTION_INT, &(config).layers, 1, 24, NULL},          \
    {"d-model", OPTION_INT, &(config).d_model, 2, 4096, NULL},      \
    {"d-ff", OPTION_INT, &(config).d_ff, 1, 16384, NULL},           \
    {"heads", OPTION_INT, &(config).heads, 1, 64, NULL}

static void check_model_size(const char *command, const Config *config)
{
    if (config->d_model % config->heads || config->d_model % 2)
        usage_error(command, "--d-model must be even and a multiple of --heads");
}
#line 553 "book/copy.nw"
typedef struct {
    int batch_size, len, vocab;
    int *data;   /* [batch_size][len] */
} CopyTask;

static void copy_fill(void *task, Trainer *trainer)
{
    CopyTask *copy = task;
    copy_task_batch(copy->data, copy->batch_size, copy->len, copy->vocab,
                    &trainer->progress->data_rng);
    batch_fill(trainer->batch, copy->data, copy->data, 0);
}

static double copy_validate(void *task, Trainer *trainer)
{
    CopyTask *copy = task;
    Rng validation_rng;
    rng_seed(&validation_rng, (uint64_t)trainer->progress->epoch, 4);
    double validation = 0.0;
    for (int v = 0; v < 2; v++) {
        copy_task_batch(copy->data, copy->batch_size, copy->len, copy->vocab, &validation_rng);
        batch_fill(trainer->batch, copy->data, copy->data, 0);
        validation += evaluate_batch(trainer->model, trainer->batch, trainer->settings,
                                     trainer->d_logprobs) / 2;
    }
    return validation;
}
#line 587 "book/copy.nw"
static int trainer_exit_status(const Trainer *trainer, TrainerOutcome outcome)
{
    if (outcome == TRAINER_FAILED) die("%s", trainer->message);
    if (outcome == TRAINER_SIGNALLED) {
        fprintf(stderr, "transformer: %s\n", trainer->message);
        return 128 + trainer->signal_number;
    }
    return 0;
}
#line 602 "book/copy.nw"
static int run_copy(int argc, char **argv)
{
    Config config = config_default(11, 11, 2);
    int epochs = 20, batches = 20, batch_size = 80, len = 10, seed = 1;
    TrainerSettings run = {0};
    const char *resume_path = NULL;   /* Chapter 13 */
    TrainSettings settings = {.smoothing = 0.0f, .factor = 0.5, .warmup = 400, .pad = 0};
    /* <<Read the copy command's flags>> */
#line 648 "book/copy.nw"
    const Option options[] = {
        {"epochs", OPTION_INT, &epochs, 1, 10000, NULL},
        {"batches", OPTION_INT, &batches, 1, 100000, NULL},
        {"batch-size", OPTION_INT, &batch_size, 1, 4096, NULL},
        {"seed", OPTION_INT, &seed, 0, 1000000000, NULL},
        {"log", OPTION_TEXT, &run.log_path, 0, 0, NULL},
        {"factor", OPTION_REAL, &settings.factor, 1e-6, 1e30, NULL},
        MODEL_SIZE_OPTIONS(config),
        /* <<The checkpoint options>> */
#line 410 "book/checkpoint.nw"
        {"checkpoint", OPTION_TEXT, &run.checkpoint_path, 0, 0, NULL},
        {"resume", OPTION_TEXT, &resume_path, 0, 0, NULL},
        {"checkpoint-every", OPTION_LONG, &run.checkpoint_every, 1, 1e9, NULL},
        {"stop-after", OPTION_LONG, &run.stop_after, 1, 1e9, NULL},
#line 657 "book/copy.nw"
    };
    no_operands("copy", parse_options("copy", options, sizeof options / sizeof *options, argc,
                                      argv), argc, argv);
    check_model_size("copy", &config);
#line 610 "book/copy.nw"
    run.epochs = epochs;
    config.max_len = len;
    Model model;
    model_init(&model, config);
    Rng init_rng;
    rng_seed(&init_rng, (uint64_t)seed, 1);
    model_initialize_parameters(&model, &init_rng);
    model_prepare(&model, batch_size, len, len);
    Adam adam;
    adam_init(&adam, &model.parameters, 0.9, 0.98, 1e-9);
    TrainingProgress progress = {.epoch = 1};
    rng_seed(&progress.data_rng, (uint64_t)seed, 2);
    rng_seed(&progress.dropout_rng, (uint64_t)seed, 3);
    Batch batch;
    batch_init(&batch, batch_size, len, len - 1);
    CopyTask copy = {batch_size, len, config.src_vocab,
                     xmalloc((size_t)batch_size * len * sizeof(int))};
    Trainer trainer = {&model, &adam, &progress, &settings, &batch,
                       xmalloc((size_t)batch_size * len * config.tgt_vocab * sizeof(float)),
                       INFINITY, "", 0};
    const BatchSource source = {&copy, batches, NULL, copy_fill, copy_validate, NULL};
    /* <<Resume the copy task from its checkpoint, if asked>> */
#line 479 "book/checkpoint.nw"
    char recipe_text[6][32];
    snprintf(recipe_text[0], 32, "%d", batch_size), snprintf(recipe_text[1], 32, "%d", batches);
    snprintf(recipe_text[2], 32, "%d", len), snprintf(recipe_text[3], 32, "%.17g", settings.factor);
    snprintf(recipe_text[4], 32, "%ld", settings.warmup);
    snprintf(recipe_text[5], 32, "%.9g", settings.smoothing);
    const char *const recipe[7][2] = {
        {"recipe.task", "copy"}, {"recipe.batch_size", recipe_text[0]},
        {"recipe.batches", recipe_text[1]}, {"recipe.len", recipe_text[2]},
        {"recipe.factor", recipe_text[3]}, {"recipe.warmup", recipe_text[4]},
        {"recipe.smoothing", recipe_text[5]}};
    run.recipe = recipe, run.recipe_count = 7;
    if (resume_path) {
        if (trainer_resume(&trainer, resume_path, recipe, 7)) die("%s", trainer.message);
        if (!run.checkpoint_path) run.checkpoint_path = resume_path;
        printf("resuming %s at step %ld (epoch %d, batch %d)\n", resume_path, adam.step,
               progress.epoch, progress.batch);
    }
#line 632 "book/copy.nw"
    const double start = seconds_now();
    const TrainerOutcome outcome = trainer_run(&trainer, &source, &run);
    int status = trainer_exit_status(&trainer, outcome);
    if (outcome == TRAINER_FINISHED) {
        /* <<Decode examples and report whether they are copies>> */
#line 682 "book/copy.nw"
        int *data = copy.data;
        double eval_loss = 0.0;
        for (int e = 0; e < 5; e++) {
            copy_task_batch(data, batch_size, len, config.src_vocab, &progress.data_rng);
            batch_fill(&batch, data, data, 0);
            eval_loss += evaluate_batch(&model, &batch, &settings, trainer.d_logprobs) / 5;
        }
        int examples = batch_size < 8 ? batch_size : 8, exact = 1;
        copy_task_batch(data, examples, len, config.src_vocab, &progress.data_rng);
        for (int t = 0; t < len; t++) data[t] = t + 1;   /* the course's example: 1 2 ... 10 */
        int *out = xmalloc((size_t)examples * len * sizeof *out);
        uint8_t *keep = xmalloc((size_t)examples * len);
        padding_mask(keep, data, examples, len, 0);
        greedy_decode(&model, out, data, keep, examples, len, len, 1);
        printf("evaluation loss %.4f after %ld steps in %.1f s\n", eval_loss, adam.step,
               seconds_now() - start);
        for (int b = 0; b < examples; b++) {
            const bool same = memcmp(out + (size_t)b * len, data + (size_t)b * len,
                                     (size_t)len * sizeof *out) == 0;
            exact = exact && same;
            printf("  source ");
            for (int t = 0; t < len; t++) printf("%2d ", data[b * len + t]);
            printf(" decoded ");
            for (int t = 0; t < len; t++) printf("%2d ", out[b * len + t]);
            printf(" %s\n", same ? "exact" : "DIFFERENT");
        }
        free(out), free(keep);
#line 637 "book/copy.nw"
        status = exact ? 0 : 1;
    }
    free(copy.data), free(trainer.d_logprobs);
    batch_free(&batch);
    adam_free(&adam);
    model_free(&model);
    return status;
}
#line 545 "book/decode.nw"
static int run_time_decode(int argc, char **argv)
{
    Config config = config_default(11, 11, 2);
    int batch = 8, len = 10;
    bool use[2] = {true, true};   /* recompute, cached */
    /* <<Read the time-decode command's flags>> */
#line 574 "book/decode.nw"
    int decoder = -1;   /* 0: recompute only, 1: cached only, -1: both */
    const Option options[] = {
        {"batch", OPTION_INT, &batch, 1, 4096, NULL},
        {"len", OPTION_INT, &len, 2, 4096, NULL},
        {"decoder", OPTION_CHOICE, &decoder, 0, 0, "recompute|cached"},
        MODEL_SIZE_OPTIONS(config),
    };
    no_operands("time-decode", parse_options("time-decode", options,
                                             sizeof options / sizeof *options, argc, argv),
                argc, argv);
    if (decoder >= 0) use[0] = decoder == 0, use[1] = decoder == 1;
    check_model_size("time-decode", &config);
#line 551 "book/decode.nw"
    config.max_len = len;
    Model model;
    model_init(&model, config);
    Rng rng;
    rng_seed(&rng, 1, 1);
    model_initialize_parameters(&model, &rng);
    model_prepare(&model, batch, len, len);
    KVCache cache;
    decoder_cache_init(&cache, &model, batch, len, len);
    int *src = xmalloc(3 * (size_t)batch * len * sizeof *src);   /* [batch][len] */
    int *out[2] = {src + (size_t)batch * len, src + 2 * (size_t)batch * len};   /* same */
    uint8_t *keep = xmalloc((size_t)batch * len);                  /* [batch][len] */
    copy_task_batch(src, batch, len, config.src_vocab, &rng);
    padding_mask(keep, src, batch, len, 0);
    /* <<Time the chosen decoders and compare their outputs>> */
#line 593 "book/decode.nw"
    static const char *const names[2] = {"recompute", "cached"};
    double seconds[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        if (!use[k]) continue;
        long repeats = 0;
        const double start = seconds_now();
        do {
            if (k == 0) greedy_decode(&model, out[0], src, keep, batch, len, len, 1);
            else greedy_decode_cached(&model, &cache, out[1], src, keep, batch, len, len, 1);
            repeats++;
        } while ((seconds[k] = seconds_now() - start) < 0.1);
        seconds[k] /= (double)repeats;
        printf("decoder=%s d_model=%d batch=%d len=%d seconds=%.6g\n", names[k],
               config.d_model, batch, len, seconds[k]);
    }
    int status = 0;
    if (use[0] && use[1]) {
        const bool same = memcmp(out[0], out[1], (size_t)batch * len * sizeof *out[0]) == 0;
        printf("speedup=%.2f outputs %s\n", seconds[0] / seconds[1],
               same ? "identical" : "DIFFERENT");
        status = same ? 0 : 1;
    }
#line 566 "book/decode.nw"
    free(src), free(keep);
    decoder_cache_free(&cache);
    model_free(&model);
    return status;
}
#line 1367 "book/text.nw"
#define LANGUAGE_OPTION(options) \
    {"language", OPTION_CHOICE, &(options).language, 0, 0, "en|de"}
#line 1372 "book/text.nw"
static int run_tokenize(int argc, char **argv)
{
    TextOptions options = {TEXT_ENGLISH, false};
    bool detokenize = false;
    const char *compare = NULL;
    const Option flags[] = {
        LANGUAGE_OPTION(options),
        {"lowercase", OPTION_SWITCH, &options.lowercase, 0, 0, NULL},
        {"detokenize", OPTION_SWITCH, &detokenize, 0, 0, NULL},
        {"compare", OPTION_TEXT, &compare, 0, 0, NULL},
    };
    no_operands("tokenize", parse_options("tokenize", flags, sizeof flags / sizeof *flags,
                                          argc, argv), argc, argv);
    if (detokenize && (compare || options.lowercase))
        usage_error("tokenize", "--detokenize takes neither --compare nor --lowercase");
    if (compare) {
        /* <<Compare the tokens of standard input with a reference file>> */
#line 1417 "book/text.nw"
        FILE *reference = fopen(compare, "r");
        if (reference == NULL) die("cannot open %s: %s", compare, strerror(errno));
        Agreement agreement;
        if (tokenization_agreement(stdin, "standard input", reference, compare, options, stdout,
                                   &agreement))
            die("%s", agreement.error);
        fclose(reference);
        const double lines = (double)(agreement.lines ? agreement.lines : 1);
        printf("identical: %ld of %ld lines (%.3f%%)\n", agreement.identical, agreement.lines,
               100.0 * (double)agreement.identical / lines);
#line 1389 "book/text.nw"
    } else {
        /* <<Tokenize or detokenize standard input line by line>> */
#line 1397 "book/text.nw"
        static TextLine line;
        char *text = NULL;
        size_t capacity = 0;
        ssize_t length;
        for (long number = 1; (length = getline(&text, &capacity, stdin)) >= 0; number++) {
            if (length > 0 && text[length - 1] == '\n') text[--length] = '\0';
            const char *problem =
                detokenize ? detokenize_line(options.language, text, (size_t)length, &line)
                           : tokenize_line(options, text, (size_t)length, &line);
            if (problem) die("standard input:%ld: %s", number, problem);
            puts(line.text);
        }
        if (ferror(stdin)) die("cannot read standard input: %s", strerror(errno));
        free(text);
#line 1391 "book/text.nw"
    }
    return 0;
}
#line 1453 "book/text.nw"
static int run_vocab(int argc, char **argv)
{
    TextOptions options = {TEXT_ENGLISH, false};
    int min_frequency = 2;
    const char *save = NULL;
    const Option flags[] = {
        LANGUAGE_OPTION(options),
        {"lowercase", OPTION_SWITCH, &options.lowercase, 0, 0, NULL},
        {"min-freq", OPTION_INT, &min_frequency, 1, 1000000, NULL},
        {"save", OPTION_TEXT, &save, 0, 0, NULL},
    };
    const int first_file = parse_options("vocab", flags, sizeof flags / sizeof *flags, argc,
                                         argv);
    if (first_file == argc) usage_error("vocab", "which files?");
    /* <<Tokenize the files and build their vocabulary>> */
#line 1473 "book/text.nw"
    const int n_files = argc - first_file;
    TokenizedFile *files = xmalloc((size_t)n_files * sizeof *files);
    long count = 0, lines = 0;
    for (int f = 0; f < n_files; f++) {
        if (tokenize_file(argv[first_file + f], options, &files[f]))
            die("%s", files[f].error);
        count += files[f].count, lines += files[f].lines;
    }
    char **tokens = xmalloc((size_t)count * sizeof *tokens);
    long t = 0;
    for (int f = 0; f < n_files; t += files[f].count, f++)
        memcpy(tokens + t, files[f].token, (size_t)files[f].count * sizeof *tokens);
    Vocab vocab;
    vocab_build(&vocab, tokens, count, min_frequency);
    printf("%ld lines, %ld tokens, %ld distinct\n", lines, count, vocab.types);
    printf("vocabulary: %d = %d specials + %d tokens seen at least %d time%s\n", vocab.size,
           VOCAB_SPECIALS, vocab.size - VOCAB_SPECIALS, min_frequency, min_frequency == 1 ? "" : "s");
    if (save && vocab_save(&vocab, save)) die("%s", vocab.error);
    vocab_free(&vocab);
    for (int f = 0; f < n_files; f++) tokenized_file_free(&files[f]);
    free(files), free(tokens);
#line 1468 "book/text.nw"
    return 0;
}
#line 993 "book/bleu.nw"
static int run_bleu(int argc, char **argv)
{
    bool lowercase = false;
    for (int a = 0; a < argc && strcmp(argv[a], "--") != 0; a++)
        if (strcmp(argv[a], "-lc") == 0) argv[a] = "--lowercase";   /* sacreBLEU's spelling */
    const Option options[] = {{"lowercase", OPTION_SWITCH, &lowercase, 0, 0, NULL}};
    const int first = parse_options("bleu", options, 1, argc, argv);
    const char **paths = (const char **)argv + first;
    const int n_paths = argc - first;
    if (n_paths < 2)
        usage_error("bleu", "expects a hypothesis file and a reference file");
    BleuLines *files = xmalloc((size_t)n_paths * sizeof *files);
    for (int f = 0; f < n_paths; f++) bleu_read_lines(&files[f], paths[f]);
    for (int f = 1; f < n_paths; f++)
        if (files[f].count != files[0].count)
            die("%s has %ld lines but %s has %ld: BLEU needs one reference line for each "
                "hypothesis line", paths[0], files[0].count, paths[f], files[f].count);
    /* <<Score the lines and print the score and the signature>> */
#line 1018 "book/bleu.nw"
    const int n_refs = n_paths - 1;
    const char **refs = xmalloc((size_t)n_refs * sizeof *refs);
    BleuStats stats = {0};
    for (long i = 0; i < files[0].count; i++) {
        for (int r = 0; r < n_refs; r++) refs[r] = files[r + 1].lines[i];
        bleu_add_segment(&stats, files[0].lines[i], refs, n_refs, lowercase);
    }
    free(refs);
    const BleuScore score = bleu_compute(&stats, false);
    char line[256];
    bleu_format_score(line, sizeof line, &score);
    printf("%s\n", line);
    bleu_signature(line, sizeof line, n_refs, lowercase, false);
    printf("%s\n", line);
#line 1011 "book/bleu.nw"
    for (int f = 0; f < n_paths; f++) bleu_lines_free(&files[f]);
    free(files);
    return 0;
}
#line 255 "book/translate.nw"
typedef struct {
    const Corpus *train, *validation;
    const BatchPlan *plan, *validation_plan;
    int *order;                        /* [plan->count]: the epoch's order of batches */
    const char *model_path;
    Vocab *src_vocab, *tgt_vocab;
    char error[4400];                  /* why the model could not be saved */
} TranslationTask;

static void translation_start_epoch(void *task, int epoch)
{
    TranslationTask *t = task;
    batch_order(t->order, t->plan->count, 1, epoch);
}

static void translation_fill(void *task, Trainer *trainer)
{
    TranslationTask *t = task;
    const BatchSpan *span = &t->plan->spans[t->order[trainer->progress->batch]];
    batch_fill_span(trainer->batch, t->train, t->plan, span, VOCAB_BLANK);
}

static double translation_validate(void *task, Trainer *trainer)
{
    TranslationTask *t = task;
    Batch *batch = trainer->batch;
    double validation_sum = 0.0;
    long validation_tokens = 0;
    for (int b = 0; b < t->validation_plan->count; b++) {
        batch_fill_span(batch, t->validation, t->validation_plan, &t->validation_plan->spans[b],
                        VOCAB_BLANK);
        int tokens = 0;
        for (int i = 0; i < batch->batch * batch->tgt_len; i++)
            tokens += batch->tgt_y[i] != VOCAB_BLANK;
        validation_sum += evaluate_batch(trainer->model, batch, trainer->settings,
                                         trainer->d_logprobs) * tokens;
        validation_tokens += tokens;
    }
    return validation_sum / (double)validation_tokens;
}

static const char *translation_save_best(void *task, const Model *model)
{
    TranslationTask *t = task;
    Safetensors scratch;
    const char *error = translation_model_save(t->model_path, model, t->src_vocab,
                                               t->tgt_vocab, &scratch);
    if (error) snprintf(t->error, sizeof t->error, "%s", error);
    return error ? t->error : NULL;
}
#line 312 "book/translate.nw"
static int run_train(int argc, char **argv)
{
    const char *data_dir = "data/multi30k", *model_path = "multi30k.safetensors";
    const char *resume_path = NULL;
    int epochs = 30, token_budget = 2000;
    TrainerSettings run = {.checkpoint_path = "multi30k-last.safetensors",
                           .checkpoint_every = 500};
    Config config = config_default(0, 0, 3);
    config.d_model = 256, config.d_ff = 1024, config.heads = 8;
    TrainSettings settings = {.smoothing = 0.1f, .factor = 0.5, .warmup = 400,
                              .pad = VOCAB_BLANK};
    /* <<Read the train command's flags>> */
#line 338 "book/translate.nw"
    int subset = 0;
    const Option options[] = {
        {"data", OPTION_TEXT, &data_dir, 0, 0, NULL},
        {"model", OPTION_TEXT, &model_path, 0, 0, NULL},
        {"log", OPTION_TEXT, &run.log_path, 0, 0, NULL},
        {"epochs", OPTION_INT, &epochs, 1, 100000, NULL},
        {"token-budget", OPTION_INT, &token_budget, 16, 1000000, NULL},
        {"minutes", OPTION_INT, &run.max_minutes, 1, 100000, NULL},
        {"subset", OPTION_INT, &subset, 1, 100000000, NULL},
        {"warmup", OPTION_LONG, &settings.warmup, 1, 10000000, NULL},
        {"factor", OPTION_REAL, &settings.factor, 1e-6, 1e30, NULL},
        {"smoothing", OPTION_FLOAT, &settings.smoothing, 0.0, 0.99, NULL},
        {"dropout", OPTION_FLOAT, &config.dropout, 0.0, 0.99, NULL},
        MODEL_SIZE_OPTIONS(config),
        /* <<The checkpoint options>> */
#line 410 "book/checkpoint.nw"
        {"checkpoint", OPTION_TEXT, &run.checkpoint_path, 0, 0, NULL},
        {"resume", OPTION_TEXT, &resume_path, 0, 0, NULL},
        {"checkpoint-every", OPTION_LONG, &run.checkpoint_every, 1, 1e9, NULL},
        {"stop-after", OPTION_LONG, &run.stop_after, 1, 1e9, NULL},
#line 353 "book/translate.nw"
    };
    no_operands("train", parse_options("train", options, sizeof options / sizeof *options, argc,
                                       argv), argc, argv);
    check_model_size("train", &config);
#line 324 "book/translate.nw"
    run.epochs = epochs;
    /* <<Load the vocabularies and the training and validation pairs>> */
#line 607 "book/translate.nw"
    TranslationData data;
    char error[4400];
    if (translation_data_load(&data, data_dir, subset, error, sizeof error)) die("%s", error);
    Corpus *train = &data.train, *validation = &data.validation;
    config.src_vocab = data.src_vocab.size, config.tgt_vocab = data.tgt_vocab.size;
    printf("%d training pairs, %d validation pairs; vocabularies: %d German, %d English\n",
           train->count, validation->count, data.src_vocab.size, data.tgt_vocab.size);
    fflush(stdout);
#line 326 "book/translate.nw"
    /* <<Set up the model, the optimizer and the batches>> */
#line 397 "book/translate.nw"
    BatchPlan plan, validation_plan;
    batch_plan(&plan, train, token_budget);
    batch_plan(&validation_plan, validation, token_budget);
    const BatchBounds most = batch_plan_bounds(&plan, &validation_plan);
    config.max_len = most.src_len > most.tgt_len ? most.src_len : most.tgt_len;
    Model model;
    model_init(&model, config);
    Rng init_rng;
    rng_seed(&init_rng, 1, 1);
    model_initialize_parameters(&model, &init_rng);
    model_prepare_tokens(&model, most.pairs, most.src_len, most.tgt_len - 1, most.src_tokens,
                         most.tgt_tokens);
    Adam adam;
    adam_init(&adam, &model.parameters, 0.9, 0.98, 1e-9);
    TrainingProgress progress = {.epoch = 1};
    rng_seed(&progress.data_rng, 1, 2), rng_seed(&progress.dropout_rng, 1, 3);
    Batch batch;
    batch_init(&batch, most.pairs, most.src_len, most.tgt_len - 1);
    TranslationTask task = {train, validation, &plan, &validation_plan,
                            xmalloc((size_t)plan.count * sizeof(int)), model_path,
                            &data.src_vocab, &data.tgt_vocab, ""};
    Trainer trainer = {&model, &adam, &progress, &settings, &batch,
                       xmalloc((size_t)most.tgt_tokens * config.tgt_vocab * sizeof(float)),
                       INFINITY, "", 0};
    /* <<Resume the translation run, if asked>> */
#line 428 "book/translate.nw"
    char recipe_text[5][32];
    snprintf(recipe_text[0], 32, "%d", token_budget), snprintf(recipe_text[1], 32, "%d", subset);
    snprintf(recipe_text[2], 32, "%.17g", settings.factor);
    snprintf(recipe_text[3], 32, "%ld", settings.warmup);
    snprintf(recipe_text[4], 32, "%.9g", settings.smoothing);
    const char *const recipe[7][2] = {
        {"recipe.task", "multi30k"}, {"recipe.data", data_dir},
        {"recipe.token_budget", recipe_text[0]}, {"recipe.subset", recipe_text[1]},
        {"recipe.factor", recipe_text[2]}, {"recipe.warmup", recipe_text[3]},
        {"recipe.smoothing", recipe_text[4]}};
    run.recipe = recipe, run.recipe_count = 7;
    if (resume_path) {
        if (trainer_resume(&trainer, resume_path, recipe, 7)) die("%s", trainer.message);
        printf("resuming %s at step %ld (epoch %d, batch %d)\n", resume_path, adam.step,
               progress.epoch, progress.batch);
    }
#line 327 "book/translate.nw"
    /* <<Train, keeping the best model>> */
#line 451 "book/translate.nw"
    const BatchSource source = {&task, plan.count, translation_start_epoch, translation_fill,
                                translation_validate, translation_save_best};
    const TrainerOutcome outcome = trainer_run(&trainer, &source, &run);
    const int status = trainer_exit_status(&trainer, outcome);
    if (isfinite(trainer.best_validation))
        printf("best validation loss %.4f; model %s\n", trainer.best_validation, model_path);
    else
        printf("no validation yet, so no model saved; resume with --resume %s\n",
               run.checkpoint_path);
#line 328 "book/translate.nw"
    /* <<Free the training run>> */
#line 463 "book/translate.nw"
    free(task.order), free(trainer.d_logprobs);
    batch_free(&batch);
    batch_plan_free(&plan), batch_plan_free(&validation_plan);
    translation_data_free(&data);
    adam_free(&adam);
    model_free(&model);
#line 329 "book/translate.nw"
    return status;
}
#line 736 "book/translate.nw"
/* Load the translator saved at path (weights and both vocabularies), or die. */
static void load_translator(const char *path, Model *model, Vocab *src_vocab,
                            Vocab *tgt_vocab)
{
    Safetensors file;
    const char *error = translation_model_load(path, model, src_vocab, tgt_vocab, &file);
    if (error) die("%s", error);
    safetensors_free(&file);
}

static int run_translate(int argc, char **argv)
{
    const char *model_path = "multi30k.safetensors";
    int beam_size = 4, batch_limit = 32;
    double alpha = 0.6;
    const Option options[] = {
        {"model", OPTION_TEXT, &model_path, 0, 0, NULL},
        {"beam", OPTION_INT, &beam_size, 1, 64, NULL},
        {"batch", OPTION_INT, &batch_limit, 1, 1024, NULL},
        {"alpha", OPTION_REAL, &alpha, 0.0, 10.0, NULL},
    };
    no_operands("translate", parse_options("translate", options,
                                           sizeof options / sizeof *options, argc, argv),
                argc, argv);
    Model model;
    Vocab src_vocab, tgt_vocab;
    load_translator(model_path, &model, &src_vocab, &tgt_vocab);
    /* <<Translate standard input in batches>> */
#line 774 "book/translate.nw"
    const int max_len = model.config.max_len, vocab = model.config.tgt_vocab;
    model_prepare(&model, batch_limit, max_len, 1);
    KVCache cache;
    decoder_cache_init(&cache, &model, batch_limit * beam_size, max_len, max_len - 1);
    Beam beam;
    beam_init(&beam, batch_limit, beam_size, max_len, vocab);
    DecodeSettings settings = decode_settings(VOCAB_START, VOCAB_END, VOCAB_BLANK, max_len);
    settings.alpha = (float)alpha;
    int *src = xmalloc((size_t)batch_limit * max_len * sizeof *src);
    uint8_t *src_keep = xmalloc((size_t)batch_limit * max_len);
    int *out = xmalloc((size_t)batch_limit * max_len * sizeof *out);
    int *lengths = xmalloc((size_t)batch_limit * sizeof *lengths);
    static TextLine tokens, text;
    char line[TEXT_MAX_LINE_BYTES + 2], joined[TEXT_MAX_TOKENIZED_BYTES + 1];
    const TextOptions german = {TEXT_GERMAN, true};
    long line_number = 0;
    bool more = true;
    while (more) {
        int batch = 0, src_len = 1;
        /* <<Read, tokenize and number up to a batch of lines>> */
#line 810 "book/translate.nw"
        int lengths_in[1024];
        while (batch < batch_limit) {
            if (!fgets(line, sizeof line, stdin)) {
                more = false;
                break;
            }
            line_number++;
            size_t length = strlen(line);
            if (length > 0 && line[length - 1] == '\n') line[--length] = '\0';
            else if (!feof(stdin))
                die("standard input:%ld: longer than %d bytes", line_number, TEXT_MAX_LINE_BYTES);
            if (tokenize_line(german, line, length, &tokens))
                die("standard input:%ld: %s", line_number, tokens.error);
            const int n = number_sentence(src + (size_t)batch * max_len, tokens.text, &src_vocab,
                                          max_len);
            lengths_in[batch++] = n;
            if (n > src_len) src_len = n;
        }
        for (int b = 0; b < batch; b++) {   /* re-lay the rows [batch][src_len], padded */
            int *row = src + (size_t)b * src_len;
            memmove(row, src + (size_t)b * max_len, (size_t)lengths_in[b] * sizeof *row);
            for (int i = lengths_in[b]; i < src_len; i++) row[i] = VOCAB_BLANK;
        }
#line 794 "book/translate.nw"
        if (batch == 0) break;
        padding_mask(src_keep, src, batch, src_len, VOCAB_BLANK);
        if (beam_size == 1)
            greedy_translate(&model, &cache, out, lengths, NULL, src, src_keep, batch, src_len,
                             &settings);
        else
            beam_search(&model, &cache, &beam, out, lengths, NULL, src, src_keep, batch, src_len,
                        &settings);
        /* <<Turn each output into text and print it>> */
#line 841 "book/translate.nw"
        for (int b = 0; b < batch; b++) {
            const int *row = out + (size_t)b * max_len;
            size_t used = 0;
            joined[0] = '\0';
            for (int i = 1; i < lengths[b] && row[i] != VOCAB_END; i++) {
                const char *word = vocab_token(&tgt_vocab, row[i]);
                const size_t n = strlen(word);
                if (used + n + 2 > sizeof joined) break;
                if (used) joined[used++] = ' ';
                memcpy(joined + used, word, n + 1);
                used += n;
            }
            if (detokenize_line(TEXT_ENGLISH, joined, used, &text))
                die("translation of line %ld: %s", line_number - batch + b + 1, text.error);
            puts(text.text);
        }
#line 803 "book/translate.nw"
    }
    free(src), free(src_keep), free(out), free(lengths);
    beam_free(&beam);
    decoder_cache_free(&cache);
#line 764 "book/translate.nw"
    vocab_free(&src_vocab), vocab_free(&tgt_vocab);
    model_free(&model);
    return finish_output();
}
#line 1005 "book/translate.nw"
static int run_attention(int argc, char **argv)
{
    static const char *const kinds[3] = {"encoder", "decoder", "cross"};
    const char *model_path = "multi30k.safetensors", *head_text = "mean";
    int kind_index = 2, layer = -1;   /* -1: the last layer */
    const Option options[] = {
        {"model", OPTION_TEXT, &model_path, 0, 0, NULL},
        {"kind", OPTION_CHOICE, &kind_index, 0, 0, "encoder|decoder|cross"},
        {"layer", OPTION_INT, &layer, 0, 63, NULL},
        {"head", OPTION_TEXT, &head_text, 0, 0, NULL},
    };
    no_operands("attention", parse_options("attention", options,
                                           sizeof options / sizeof *options, argc, argv),
                argc, argv);
    const char *kind = kinds[kind_index];
    const int head = strcmp(head_text, "mean") == 0   /* -1: the mean over heads */
                     ? -1 : (int)parse_integer("attention", "--head", head_text, 0, 63);
    Model model;
    Vocab src_vocab, tgt_vocab;
    load_translator(model_path, &model, &src_vocab, &tgt_vocab);
    const Config *c = &model.config;
    if (layer < 0) layer = c->layers - 1;
    if (layer >= c->layers) usage_error("attention", "--layer: the model has %d", c->layers);
    if (head >= c->heads) usage_error("attention", "--head: the model has %d", c->heads);
    /* <<Translate the sentence on standard input greedily>> */
#line 1038 "book/translate.nw"
    static TextLine tokens;
    char line[TEXT_MAX_LINE_BYTES + 2];
    if (!fgets(line, sizeof line, stdin)) die("standard input: no sentence to translate");
    size_t length = strcspn(line, "\n");
    line[length] = '\0';
    if (tokenize_line((TextOptions){TEXT_GERMAN, true}, line, length, &tokens))
        die("standard input:1: %s", tokens.error);
    const int max_len = c->max_len;
    int *src = xmalloc((size_t)max_len * sizeof *src);
    const int src_len = number_sentence(src, tokens.text, &src_vocab, max_len);
    uint8_t *keep = xmalloc((size_t)max_len * max_len);
    padding_mask(keep, src, 1, src_len, VOCAB_BLANK);
    model_prepare(&model, 1, max_len, max_len);
    KVCache cache;
    decoder_cache_init(&cache, &model, 1, max_len, max_len - 1);
    DecodeSettings settings = decode_settings(VOCAB_START, VOCAB_END, VOCAB_BLANK, max_len);
    int *out = xmalloc((size_t)max_len * sizeof *out), out_len;
    greedy_translate(&model, &cache, out, &out_len, NULL, src, keep, 1, src_len, &settings);
    decoder_cache_free(&cache);
#line 1030 "book/translate.nw"
    /* <<Run the model on the pair and print the chosen weights>> */
#line 1063 "book/translate.nw"
    const int tgt_len = out_len - 1;
    uint8_t *tgt_keep = xmalloc((size_t)max_len * max_len);
    target_mask(tgt_keep, out, 1, tgt_len, VOCAB_BLANK);
    model_forward(&model, src, out, keep, tgt_keep, 1, src_len, tgt_len, NULL);
    const bool encoder = strcmp(kind, "encoder") == 0, cross = strcmp(kind, "cross") == 0;
    const AttentionActs *acts = encoder ? &model.encoder_acts[layer].self_attn
                                : cross ? &model.decoder_acts[layer].src_attn
                                        : &model.decoder_acts[layer].self_attn;
    const int rows = encoder ? src_len : tgt_len, cols = encoder || cross ? src_len : tgt_len;
    const int *row_tokens = encoder ? src : out, *col_tokens = encoder || cross ? src : out;
    const Vocab *row_vocab = encoder ? &src_vocab : &tgt_vocab;
    const Vocab *col_vocab = encoder || cross ? &src_vocab : &tgt_vocab;
    const float *probs = model_activation(&model, acts->probs);   /* [h][rows][cols] */
    printf("# %s attention, layer %d, head %s%.0d: rows are queries, columns keys\n", kind,
           layer, head < 0 ? "mean" : "", head < 0 ? 0 : head);
    printf("-");
    for (int j = 0; j < cols; j++) printf(" %s", vocab_token(col_vocab, col_tokens[j]));
    putchar('\n');
    for (int i = 0; i < rows; i++) {
        printf("%s", vocab_token(row_vocab, row_tokens[i]));
        for (int j = 0; j < cols; j++) {
            double weight = 0.0;
            for (int h = 0; h < c->heads; h++)
                if (head < 0 || h == head) weight += probs[((size_t)h * rows + i) * cols + j];
            printf(" %.5f", head < 0 ? weight / c->heads : weight);
        }
        putchar('\n');
    }
    free(src), free(keep), free(out), free(tgt_keep);
#line 1031 "book/translate.nw"
    vocab_free(&src_vocab), vocab_free(&tgt_vocab);
    model_free(&model);
    return finish_output();
}
#line 185 "book/fast.nw"
typedef struct {
    bool decoding;                   /* true: time greedy decoding, not training */
    int batch, len, steps, warmup_steps, sentences, warmup_sentences, threads;
} BenchmarkSettings;

static double peak_rss_mib(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_maxrss / 1024.0;   /* ru_maxrss is in KiB on Linux */
}
#line 204 "book/fast.nw"
static double sgemm_gflops(const MatmulLog *log)
{
    size_t largest = 1;
    for (int i = 0; i < log->count; i++) {
        const MatmulShape *s = &log->shapes[i];
        const size_t sizes[3] = {(size_t)s->m * s->k, (size_t)s->k * s->n,
                                 (size_t)s->m * s->n};
        for (int j = 0; j < 3; j++) largest = sizes[j] > largest ? sizes[j] : largest;
    }
    float *a = xmalloc(3 * largest * sizeof *a), *b = a + largest, *c = b + largest;
    for (size_t i = 0; i < 3 * largest; i++) a[i] = 0.01f;
    long rounds = 0;
    double elapsed;
    const double start = seconds_now();
    do {
        for (int i = 0; i < log->count; i++) {
            const MatmulShape *s = &log->shapes[i];
            matmul_blas(s->transpose_a, s->transpose_b, s->m, s->n, s->k, 1.0f, a,
                        s->transpose_a ? s->m : s->k, b, s->transpose_b ? s->k : s->n,
                        s->accumulate ? 1.0f : 0.0f, c, s->n);
        }
        rounds++;
    } while ((elapsed = seconds_now() - start) < 1.0);
    free(a);
    return (double)rounds * matmul_log_flops(log) / elapsed * 1e-9;
}
#line 238 "book/fast.nw"
static int benchmark_training(Config config, const BenchmarkSettings *s)
{
    const int batch = s->batch, len = s->len, vocab = config.tgt_vocab;
    config.max_len = len;
    Model model;
    model_init(&model, config);
    Rng rng, data_rng, dropout_rng;
    rng_seed(&rng, 1, 1), rng_seed(&data_rng, 1, 2), rng_seed(&dropout_rng, 1, 3);
    model_initialize_parameters(&model, &rng);
    model_prepare(&model, batch, len, len - 1);
    Adam adam;
    adam_init(&adam, &model.parameters, 0.9, 0.98, 1e-9);
    const TrainSettings settings = {.smoothing = 0.1f, .factor = 0.5, .warmup = 400,
                                    .pad = 0};
    Batch data;
    batch_init(&data, batch, len, len - 1);
    int *full = xmalloc((size_t)batch * len * sizeof *full);          /* [batch][len] */
    float *d_logprobs = xmalloc((size_t)batch * (len - 1) * vocab * sizeof *d_logprobs);
    MatmulLog log = {0};
    /* <<Warm up, logging the products of the first step>> */
#line 278 "book/fast.nw"
    for (int step = 0; step < s->warmup_steps; step++) {
        copy_task_batch(full, batch, len, vocab, &data_rng);
        batch_fill(&data, full, full, 0);
        matmul_log = step == 0 ? &log : NULL;
        train_step(&model, &adam, &data, &settings, d_logprobs, &dropout_rng);
        matmul_log = NULL;
    }
#line 258 "book/fast.nw"
    /* <<Time the training steps>> */
#line 288 "book/fast.nw"
    double loss = 0.0;
    const double start = seconds_now();
    for (int step = 0; step < s->steps; step++) {
        copy_task_batch(full, batch, len, vocab, &data_rng);
        batch_fill(&data, full, full, 0);
        loss = train_step(&model, &adam, &data, &settings, d_logprobs, &dropout_rng);
    }
    const double elapsed = seconds_now() - start;
    if (!isfinite(loss)) die("benchmark: the loss is %g", loss);
#line 259 "book/fast.nw"
    const double seconds_per_step = elapsed / s->steps;
    const int tokens_per_step = batch * (len - 1);
    const double training_rss = peak_rss_mib();   /* before the replay's matrices */
    printf("c train tokens_per_s=%.1f step_ms=%.2f steps=%d tokens_per_step=%d "
           "peak_rss_mib=%.1f params=%zu threads=%d flops_per_step=%.0f "
           "sgemm_gflops=%.2f\n", tokens_per_step / seconds_per_step,
           1e3 * seconds_per_step, s->steps, tokens_per_step, training_rss,
           model_parameter_count(&model), s->threads, matmul_log_flops(&log),
           sgemm_gflops(&log));
    matmul_log_free(&log);
    free(full), free(d_logprobs);
    batch_free(&data);
    adam_free(&adam);
    model_free(&model);
    return finish_output();
}
#line 304 "book/fast.nw"
static int benchmark_decoding(Config config, const BenchmarkSettings *s)
{
    const int len = s->len;
    config.max_len = len;
    Model model;
    model_init(&model, config);
    Rng rng;
    rng_seed(&rng, 1, 1);
    model_initialize_parameters(&model, &rng);
    model_prepare(&model, 1, len, len);
    KVCache cache;
    decoder_cache_init(&cache, &model, 1, len, len);
    int *src = xmalloc(2 * (size_t)len * sizeof *src), *out = src + len;   /* [1][len] */
    uint8_t *keep = xmalloc((size_t)len);                                  /* [1][len] */
    double start = 0.0;
    for (int i = 0; i < s->warmup_sentences + s->sentences; i++) {
        if (i == s->warmup_sentences) start = seconds_now();
        copy_task_batch(src, 1, len, config.src_vocab, &rng);
        padding_mask(keep, src, 1, len, 0);
        greedy_decode_cached(&model, &cache, out, src, keep, 1, len, len, 1);
    }
    const double elapsed = seconds_now() - start;
    printf("c decode sentences_per_s=%.2f peak_rss_mib=%.1f threads=%d\n",
           s->sentences / elapsed, peak_rss_mib(), s->threads);
    free(src), free(keep);
    decoder_cache_free(&cache);
    model_free(&model);
    return finish_output();
}
#line 339 "book/fast.nw"
static int run_benchmark(int argc, char **argv)
{
    if (argc < 1 || (strcmp(argv[0], "train") != 0 && strcmp(argv[0], "decode") != 0))
        usage_error("benchmark", "the first argument must be 'train' or 'decode'");
    BenchmarkSettings s = {.decoding = strcmp(argv[0], "decode") == 0, .batch = 80,
                           .len = 10, .steps = 20, .warmup_steps = 3, .sentences = 10,
                           .warmup_sentences = 2, .threads = 1};
    Config config = config_default(11, 11, 2);
    /* <<Read the benchmark's flags>> */
#line 354 "book/fast.nw"
    int vocab = config.tgt_vocab;
    const Option options[] = {
        {"vocab", OPTION_INT, &vocab, 3, 1000000, NULL},
        {"batch", OPTION_INT, &s.batch, 1, 4096, NULL},
        {"len", OPTION_INT, &s.len, 2, 4096, NULL},
        {"steps", OPTION_INT, &s.steps, 1, 1000000, NULL},
        {"warmup-steps", OPTION_INT, &s.warmup_steps, 1, 1000000, NULL},
        {"sentences", OPTION_INT, &s.sentences, 1, 1000000, NULL},
        {"warmup-sentences", OPTION_INT, &s.warmup_sentences, 0, 1000000, NULL},
        {"threads", OPTION_INT, &s.threads, 1, MAX_THREADS, NULL},
        MODEL_SIZE_OPTIONS(config),
    };
    no_operands("benchmark", parse_options("benchmark", options, sizeof options / sizeof *options,
                                           argc - 1, argv + 1) + 1, argc, argv);
    check_model_size("benchmark", &config);
    config.src_vocab = config.tgt_vocab = vocab;
#line 348 "book/fast.nw"
    set_threads(s.threads);
    return s.decoding ? benchmark_decoding(config, &s) : benchmark_training(config, &s);
}

#line 288 "book/program.nw"
static const Command commands[] = {
    /* <<Commands>> */
#line 479 "book/program.nw"
    {"figure-data", "print the data of one of the book's figures",
     NULL, print_figure_data_help, run_figure_data},
#line 511 "book/program.nw"
    {"demo", "show what the program computes so far (run by make)",
     "usage: transformer demo\n\n"
     "Print the data of every figure of the book in the terminal.\n",
     NULL, run_demo},
#line 607 "book/program.nw"
    {"random", "print numbers from the seeded generator (Chapter 2)",
     "usage: transformer random [--seed S] [--stream N] [--count N]\n"
     "                          [--bits | --uniform | --normal]\n\n"
     "Print COUNT numbers of the PCG32 stream (default seed 42, stream 54, count 6),\n"
     "as 32-bit outputs (--bits), uniform in [0,1) (--uniform, the default)\n"
     "or standard normal (--normal).\n"
     "Seeds and streams are integers from 0 to 2^63 - 1.\n",
     NULL, run_random},
#line 684 "book/program.nw"
    {"time-matmul", "time one matrix-multiplication kernel (Chapter 2)",
     "usage: transformer time-matmul [--size N] [--kernel blas|reference]\n\n"
     "Multiply two random N x N matrices (default 256) repeatedly for 0.1 s and print\n"
     "the time of one product and the rate in GFLOP/s.\n",
     NULL, run_time_matmul},
#line 586 "book/gradcheck.nw"
    {"gradcheck", "check the backward functions by finite differences",
     "usage: transformer gradcheck [--layer NAME] [--samples N] [--step H]\n\n"
     "Compare each backward function's gradient with central differences and print the\n"
     "error relative to each tensor's largest gradient. NAME is all (the default), model,\n"
     "linear, softmax, attention, cross-attention, layernorm, layernorm-annotated,\n"
     "feed-forward, embedding or log-softmax. Exits with status 1 if an error reaches its\n"
     "bound (1e-2 for a layer, 5e-2 for the model).\n",
     NULL, run_gradcheck},
#line 712 "book/copy.nw"
    {"copy", "train the copy task and decode examples (Chapter 12)",
     "usage: transformer copy [--epochs N] [--batches N] [--batch-size N] [--layers N]\n"
     "                        [--d-model N] [--d-ff N] [--heads N] [--factor F]\n"
     "                        [--log FILE.csv] [--checkpoint FILE] [--checkpoint-every N]\n"
     "                        [--resume FILE] [--stop-after STEP] [--seed S]\n\n"
     "Train a model to copy sequences of 10 symbols (vocabulary 11; the course's recipe by\n"
     "default: 20 epochs of 20 batches of 80, N = 2, d_model 512, d_ff 2048, 8 heads), then\n"
     "decode 1..10 and random sequences. Exits with status 1 unless every decoding is exact.\n"
     "--factor sets the schedule's factor (0.5: the course's base rate 0.5 times factor 1).\n"
     "--log writes one CSV row per epoch: training and validation loss, rate, time.\n"
     "--checkpoint saves the weights and the whole training state to FILE (safetensors) after\n"
     "every epoch, every N steps with --checkpoint-every, at --stop-after, and on SIGINT or\n"
     "SIGTERM (exit status 130 or 143). --resume continues the run saved in FILE, bit for bit,\n"
     "and keeps saving there; give it the same sizes (--epochs may grow).\n"
     "--seed seeds the three random streams (initial weights, data, dropout; default 1).\n",
     NULL, run_copy},
#line 618 "book/decode.nw"
    {"time-decode", "time greedy decoding with and without the key-value cache (Chapter 14)",
     "usage: transformer time-decode [--decoder cached|recompute] [--batch N] [--len N]\n"
     "                               [--layers N] [--d-model N] [--d-ff N] [--heads N]\n\n"
     "Decode BATCH random sources of LEN tokens (default 8 of 10) greedily with a random\n"
     "model (the copy task's by default: N = 2, d_model 512, d_ff 2048, 8 heads), with the\n"
     "recomputing decoder, the cached one, or (without --decoder) both; print the time of\n"
     "one decoding and, for both, the speed-up. Exits with status 1 if they differ.\n",
     NULL, run_time_decode},
#line 1430 "book/text.nw"
    {"tokenize", "split lines of text into tokens, or join tokens back (Chapter 15)",
     "usage: transformer tokenize [--language en|de] [--lowercase] < TEXT > TOKENS\n"
     "       transformer tokenize [--language en|de] --detokenize < TOKENS > TEXT\n"
     "       transformer tokenize [--language en|de] [--lowercase] --compare REFERENCE\n"
     "                            < TEXT\n\n"
     "Split each line of standard input into tokens separated by single spaces, in the\n"
     "manner of the Moses tokenizer (default language en), optionally lowercased; or join\n"
     "tokens back into text (--detokenize); or compare the tokens with REFERENCE, a file\n"
     "written by Moses, printing the lines that differ and the share that agree.\n"
     "Input must be UTF-8, with no empty line and no line longer than 1000 bytes\n"
     "(2000 for --detokenize).\n",
     NULL, run_tokenize},
#line 1497 "book/text.nw"
    {"vocab", "build the vocabulary of text files (Chapter 15)",
     "usage: transformer vocab [--language en|de] [--lowercase] [--min-freq N]\n"
     "                         [--save VOCAB] FILE...\n\n"
     "Tokenize the FILEs as 'transformer tokenize' does and build their vocabulary: the\n"
     "specials <s> </s> <blank> <unk>, then every token seen at least N times (default 2),\n"
     "the most frequent first, ties in byte order. Print its size; --save writes it to\n"
     "VOCAB, one token a line.\n",
     NULL, run_vocab},
#line 1035 "book/bleu.nw"
    {"bleu", "score translations with corpus BLEU, exactly as sacreBLEU does",
     "usage: transformer bleu HYP REF [REF...] [--lowercase]\n\n"
     "Print the corpus BLEU of the hypotheses in HYP (detokenized text, one sentence\n"
     "per line) against the references in REF (the same number of lines), and its\n"
     "signature: the value sacreBLEU " BLEU_SACREBLEU_VERSION " prints with its defaults\n"
     "(13a tokenizer, exp smoothing, case-sensitive). More REF files give more\n"
     "references per line. --lowercase (or -lc) scores lowercased text.\n"
     "Files must be UTF-8; different line counts are an error (status 1).\n",
     NULL, run_bleu},
#line 860 "book/translate.nw"
    {"train", "train a German-to-English translator on Multi30k (Chapter 18)",
     "usage: transformer train [--data DIR] [--model FILE] [--checkpoint FILE] [--resume FILE]\n"
     "                         [--log FILE.csv] [--epochs N] [--minutes N] [--token-budget N]\n"
     "                         [--layers N] [--d-model N] [--d-ff N] [--heads N]\n"
     "                         [--dropout P] [--smoothing E] [--factor F] [--warmup N]\n"
     "                         [--checkpoint-every N] [--stop-after STEP] [--subset N]\n\n"
     "Train on DIR/train.{de,en} (default data/multi30k), validating on DIR/val.{de,en} after\n"
     "every epoch. The model with the lowest validation loss is saved to FILE (default\n"
     "multi30k.safetensors) with FILE.src.vocab and FILE.tgt.vocab; the whole training state\n"
     "to the checkpoint (default multi30k-last.safetensors) every N steps (500), after every\n"
     "epoch, at --stop-after, after --minutes and on SIGINT/SIGTERM. Defaults: 30 epochs,\n"
     "N = 3, d_model 256, d_ff 1024, 8 heads, dropout 0.1, smoothing 0.1, factor 0.5, warm-up\n"
     "400, 2000 padded tokens per batch. --subset N uses the first N pairs of each file.\n",
     NULL, run_train},
    {"translate", "translate German lines on standard input into English (Chapter 18)",
     "usage: transformer translate [--model FILE] [--beam K] [--alpha A] [--batch N]\n\n"
     "Read German sentences, one a line, and print their English translations, one a line.\n"
     "--model: what 'transformer train' saved (default multi30k.safetensors); --beam: beam\n"
     "size (default 4; 1 is greedy decoding); --alpha: the length penalty's exponent (0.6);\n"
     "--batch: lines decoded together (32).\n",
     NULL, run_translate},
#line 1095 "book/translate.nw"
    {"attention", "print one attention map of a translation (Chapter 18)",
     "usage: transformer attention [--model FILE] [--kind encoder|decoder|cross]\n"
     "                             [--layer L] [--head H|mean] < sentence.de\n\n"
     "Translate the German sentence on standard input and print the attention weights of\n"
     "one head (or their mean, the default) of one layer (default: the last) as a matrix\n"
     "with token labels: rows are queries, columns keys (gnuplot: matrix rowheaders\n"
     "columnheaders). --kind: encoder self-attention, decoder self-attention or the\n"
     "decoder's attention to the source (cross, the default).\n",
     NULL, run_attention},
#line 373 "book/fast.nw"
    {"benchmark", "time training or decoding, for comparison with PyTorch (Chapter 19)",
     "usage: transformer benchmark train [--layers N] [--d-model N] [--d-ff N] [--heads N]\n"
     "                                   [--vocab V] [--batch B] [--len L] [--steps S]\n"
     "                                   [--warmup-steps W] [--threads T]\n"
     "       transformer benchmark decode [same sizes] [--len L] [--sentences K]\n"
     "                                    [--warmup-sentences W] [--threads T]\n\n"
     "train: W warm-up steps, then S timed training steps on random copy-task batches of\n"
     "B sequences of L symbols (dropout 0.1, label smoothing 0.1, Chapter 11's optimizer);\n"
     "prints target tokens/s, ms per step, peak RSS, the FLOPs of a step's matrix products\n"
     "and the rate of OpenBLAS on exactly those products. decode: greedy decoding with the\n"
     "key-value cache of K random sources of L symbols, one at a time; prints sentences/s.\n"
     "Defaults: the copy task's model (N 2, d_model 512, d_ff 2048, 8 heads, V 11), B 80,\n"
     "L 10, S 20, W 3, K 10, 1 thread.\n",
     NULL, run_benchmark},
#line 290 "book/program.nw"
};
enum { COMMAND_COUNT = sizeof commands / sizeof commands[0] };
#line 295 "book/program.nw"
static void print_usage(FILE *out)
{
    fprintf(out, "usage: transformer COMMAND [OPTIONS]\n"
                 "       transformer [COMMAND] --help\n"
                 "       transformer --version\n\n"
                 "The Annotated Transformer in C, version " TRANSFORMER_VERSION ".\n\n"
                 "commands:\n");
    for (int i = 0; i < COMMAND_COUNT; i++)
        fprintf(out, "  %-13s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nenvironment:\n"
                 "  TRANSFORMER_MATMUL=blas|reference   the matrix-multiplication kernel "
                 "(default blas)\n"
                 "  TRANSFORMER_KERNELS=fast|reference  the other kernels (default fast)\n"
                 "  TRANSFORMER_PRODUCTS=split|openblas who threads the products "
                 "(default split)\n"
                 "  OMP_NUM_THREADS=N                   threads (default: the cores)\n");
}
#line 319 "book/program.nw"
int main(int argc, char **argv)
{
    if (argc < 2) usage_error(NULL, "which command?");
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        print_usage(stdout);
        return finish_output();
    }
    if (strcmp(name, "--version") == 0) {
        printf("transformer " TRANSFORMER_VERSION "\n");
        return finish_output();
    }
    if (name[0] == '-') usage_error(NULL, "unknown option '%s'", name);
    for (int i = 0; i < COMMAND_COUNT; i++) {
        if (strcmp(name, commands[i].name) != 0) continue;
        for (int a = 2; a < argc; a++)
            if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
                if (commands[i].print_help) commands[i].print_help(stdout);
                else fputs(commands[i].help, stdout);
                return finish_output();
            }
        /* <<Choose the kernels from the environment>> */
#line 353 "book/program.nw"
        const char *kernel = getenv("TRANSFORMER_MATMUL");
        if (kernel && strcmp(kernel, "reference") == 0) matmul_kernel = MATMUL_REFERENCE;
        else if (kernel && *kernel && strcmp(kernel, "blas") != 0)
            usage_error(NULL, "TRANSFORMER_MATMUL must be 'blas' or 'reference', not '%s'",
                        kernel);
#line 592 "book/fast.nw"
        const char *kernels = getenv("TRANSFORMER_KERNELS");
        if (kernels && strcmp(kernels, "reference") == 0) fast_kernels = false;
        else if (kernels && *kernels && strcmp(kernels, "fast") != 0)
            usage_error(NULL, "TRANSFORMER_KERNELS must be 'fast' or 'reference', not '%s'",
                        kernels);
        const char *products = getenv("TRANSFORMER_PRODUCTS");
        if (products && strcmp(products, "openblas") == 0) split_products = false;
        else if (products && *products && strcmp(products, "split") != 0)
            usage_error(NULL, "TRANSFORMER_PRODUCTS must be 'split' or 'openblas', not '%s'",
                        products);
        set_threads(omp_get_max_threads() < MAX_THREADS ? omp_get_max_threads() : MAX_THREADS);
#line 341 "book/program.nw"
        int status = commands[i].run(argc - 2, argv + 2);
        return status ? status : finish_output();
    }
    usage_error(NULL, "unknown command '%s'", name);
}
