#line 33 "book/program.nw"
/* The transformer command line. Generated from the book's chapters by notangle:
   edit the book, not this file. */
#include "figure.h"
#line 41 "book/program.nw"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#line 93 "book/program.nw"
#include <errno.h>
#line 511 "book/program.nw"
#include <time.h>
#line 532 "book/gradcheck.nw"
#include "gradcheck.h"
#line 250 "book/copy.nw"
#include <unistd.h>
#include "train.h"
#line 458 "book/checkpoint.nw"
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include "checkpoint.h"
#line 541 "book/decode.nw"
#include "decode.h"
#line 1361 "book/text.nw"
#include "text.h"
#line 990 "book/bleu.nw"
#include "bleu.h"
#line 999 "book/translate.nw"
#include "beam.h"
#include "data.h"
#line 181 "book/fast.nw"
#include <sys/resource.h>
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
#line 134 "book/program.nw"
typedef struct {
    const char *flag;
    long long low, high;
    int *target;   /* where the value goes */
} IntegerFlag;

/* If flag is one of flags[0..count), read value into its target and return true. */
static bool read_integer_flag(const char *command, const IntegerFlag *flags, int count,
                              const char *flag, const char *value)
{
    for (int f = 0; f < count; f++)
        if (strcmp(flag, flags[f].flag) == 0) {
            *flags[f].target = (int)parse_integer(command, flag, value, flags[f].low,
                                                  flags[f].high);
            return true;
        }
    return false;
}
#line 161 "book/program.nw"
typedef struct {
    const char *name;
    const char *summary;   /* one line for 'transformer --help' */
    const char *help;      /* the text of 'transformer NAME --help', or NULL and: */
    void (*print_help)(FILE *out);
    int (*run)(int argc, char **argv);   /* argv[0] is the first argument after NAME */
} Command;
#line 305 "book/program.nw"
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
    
#line 328 "book/program.nw"
int value[FIGURE_MAX_OPTIONS] = {0};
for (int o = 0; o < FIGURE_MAX_OPTIONS && kind->options[o].flag; o++)
    value[o] = kind->options[o].fallback;
for (; a < argc; a += 2) {
    int o = 0;
    while (o < FIGURE_MAX_OPTIONS && kind->options[o].flag
           && strcmp(kind->options[o].flag, argv[a]) != 0) o++;
    if (o == FIGURE_MAX_OPTIONS || !kind->options[o].flag)
        usage_error("figure-data", "unknown option '%s' for figure '%s'", argv[a], name);
    const char *text = a + 1 < argc ? argv[a + 1] : NULL;
    value[o] = (int)parse_integer("figure-data", argv[a], text,
                                  kind->options[o].low, kind->options[o].high);
}
#line 321 "book/program.nw"
    const char *problem = kind->emit(stdout, value);
    if (problem) usage_error("figure-data", "%s", problem);
    return 0;
}
#line 347 "book/program.nw"
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
#line 381 "book/program.nw"
static int run_demo(int argc, char **argv)
{
    if (argc > 0) usage_error("demo", "unexpected argument '%s'", argv[0]);
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
#line 469 "book/program.nw"
static int run_random(int argc, char **argv)
{
    unsigned long long seed = 42, stream = 54, count = 6;
    enum { BITS, UNIFORM, NORMAL } kind = UNIFORM;
    for (int a = 0; a < argc; a++) {
        const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(flag, "--seed") == 0)
            seed = parse_integer("random", flag, value, 0, INT64_MAX), a++;
        else if (strcmp(flag, "--stream") == 0)
            stream = parse_integer("random", flag, value, 0, INT64_MAX), a++;
        else if (strcmp(flag, "--count") == 0)
            count = parse_integer("random", flag, value, 1, 100000000), a++;
        else if (strcmp(flag, "--bits") == 0) kind = BITS;
        else if (strcmp(flag, "--uniform") == 0) kind = UNIFORM;
        else if (strcmp(flag, "--normal") == 0) kind = NORMAL;
        else usage_error("random", "unknown option '%s'", flag);
    }
    Rng rng;
    rng_seed(&rng, seed, stream);
    for (unsigned long long i = 0; i < count; i++)
        if (kind == BITS) printf("0x%08lx\n", (unsigned long)rng_next(&rng));
        else printf("%.9g\n", kind == UNIFORM ? rng_uniform(&rng) : rng_normal(&rng));
    return 0;
}
#line 515 "book/program.nw"
static double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

static int run_time_matmul(int argc, char **argv)
{
    int n = 256;
    MatmulKernel kernel = matmul_kernel;
    for (int a = 0; a < argc; a++) {
        const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(flag, "--size") == 0)
            n = (int)parse_integer("time-matmul", flag, value, 1, 8192), a++;
        else if (strcmp(flag, "--kernel") == 0) {
            if (value && strcmp(value, "blas") == 0) kernel = MATMUL_BLAS;
            else if (value && strcmp(value, "reference") == 0) kernel = MATMUL_REFERENCE;
            else usage_error("time-matmul", "--kernel expects 'blas' or 'reference', "
                             "got '%s'", value ? value : "nothing");
            a++;
        } else usage_error("time-matmul", "unknown option '%s'", flag);
    }
    
#line 547 "book/program.nw"
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
#line 539 "book/program.nw"
    return 0;
}
#line 536 "book/gradcheck.nw"
static int run_gradcheck(int argc, char **argv)
{
    const char *layer = "all";
    int samples = 20;
    float step = 1e-2f;
    for (int a = 0; a < argc; a++) {
        const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(flag, "--layer") == 0) {
            if (!value) usage_error("gradcheck", "--layer needs a name");
            layer = value, a++;
        }
        else if (strcmp(flag, "--samples") == 0)
            samples = (int)parse_integer("gradcheck", flag, value, 1, 100000), a++;
        else if (strcmp(flag, "--step") == 0) {
            char *end;
            step = value ? strtof(value, &end) : 0.0f;
            if (!value || *end || !(step > 0.0f && step < 1.0f))
                usage_error("gradcheck", "--step expects a number in (0, 1), got '%s'",
                            value ? value : "nothing");
            a++;
        } else usage_error("gradcheck", "unknown option '%s'", flag);
    }
    
#line 563 "book/gradcheck.nw"
double worst_layer = 0.0, worst_model = 0.0;
bool ran = false;
for (int i = 0; gradcheck_layer_names[i]; i++)
    if (strcmp(layer, "all") == 0 || strcmp(layer, gradcheck_layer_names[i]) == 0) {
        printf("%s:\n", gradcheck_layer_names[i]);
        worst_layer = fmax(worst_layer,
                           gradcheck_layer(gradcheck_layer_names[i], samples, step, stdout));
        ran = true;
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
    ran = true;
}
if (!ran) usage_error("gradcheck", "unknown layer '%s'", layer);
const bool passed = worst_layer < GRADCHECK_LAYER_BOUND
                    && worst_model < GRADCHECK_MODEL_BOUND;
printf("worst error e: layers %.2e (bound %.0e), model %.2e (bound %.0e): %s\n", worst_layer,
       GRADCHECK_LAYER_BOUND, worst_model, GRADCHECK_MODEL_BOUND,
       passed ? "passed" : "FAILED");
return passed ? 0 : 1;
#line 559 "book/gradcheck.nw"
}
#line 260 "book/copy.nw"
enum { MODEL_SIZE_FLAGS = 4 };

/* Fill flags[0..MODEL_SIZE_FLAGS) with --layers, --d-model, --d-ff and --heads of config. */
static void model_size_flags(IntegerFlag *flags, Config *config)
{
    flags[0] = (IntegerFlag){"--layers", 1, 24, &config->layers};
    flags[1] = (IntegerFlag){"--d-model", 2, 4096, &config->d_model};
    flags[2] = (IntegerFlag){"--d-ff", 1, 16384, &config->d_ff};
    flags[3] = (IntegerFlag){"--heads", 1, 64, &config->heads};
}

static void check_model_size(const char *command, const Config *config)
{
    if (config->d_model % config->heads || config->d_model % 2)
        usage_error(command, "--d-model must be even and a multiple of --heads");
}
#line 465 "book/checkpoint.nw"
static volatile sig_atomic_t stop_signal = 0;

static void note_stop_signal(int signal_number)
{
    stop_signal = signal_number;
    signal(signal_number, SIG_DFL);
}

/* From now on SIGINT and SIGTERM only set stop_signal (the first time). */
static void catch_stop_signals(void)
{
    struct sigaction action = {.sa_handler = note_stop_signal, .sa_flags = SA_RESTART};
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
}

/* The one line on standard error after a signal stopped training at step, saved to path. */
static void report_stop_signal(long step, const char *path)
{
    fprintf(stderr, "transformer: %s at step %ld; the checkpoint is %s\n",
            stop_signal == SIGINT ? "interrupted" : "terminated", step, path);
}
#line 280 "book/copy.nw"
static int run_copy(int argc, char **argv)
{
    Config config = config_default(11, 11, 2);
    int epochs = 20, batches = 20, batch_size = 80, len = 10, seed = 1;
    const char *log_path = NULL;
    const char *checkpoint_path = NULL, *resume_path = NULL;   /* Chapter 13 */
    long checkpoint_every = 0, stop_after = 0;
    TrainSettings settings = {.smoothing = 0.0f, .factor = 0.5, .warmup = 400, .pad = 0};
    
#line 321 "book/copy.nw"
IntegerFlag integers[4 + MODEL_SIZE_FLAGS] = {
    {"--epochs", 1, 10000, &epochs}, {"--batches", 1, 100000, &batches},
    {"--batch-size", 1, 4096, &batch_size}, {"--seed", 0, 1000000000, &seed}};
model_size_flags(integers + 4, &config);
for (int a = 0; a < argc; a++) {
    const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
    if (strcmp(flag, "--log") == 0) {
        if (!value) usage_error("copy", "--log needs a file name");
        log_path = value, a++;
        continue;
    }
    if (strcmp(flag, "--factor") == 0) {
        settings.factor = parse_number("copy", flag, value, 1e-6, 1e30), a++;
        continue;
    }
    
#line 410 "book/checkpoint.nw"
if (strcmp(flag, "--checkpoint") == 0 || strcmp(flag, "--resume") == 0) {
    if (!value || !*value) usage_error("copy", "%s needs a file name", flag);
    *(flag[2] == 'c' ? &checkpoint_path : &resume_path) = value, a++;
    continue;
}
if (strcmp(flag, "--checkpoint-every") == 0 || strcmp(flag, "--stop-after") == 0) {
    *(flag[2] == 'c' ? &checkpoint_every : &stop_after) =
        (long)parse_integer("copy", flag, value, 1, 1000000000), a++;
    continue;
}
#line 337 "book/copy.nw"
    if (!read_integer_flag("copy", integers, 4 + MODEL_SIZE_FLAGS, flag, value))
        usage_error("copy", "unknown option '%s'", flag);
    a++;
}
check_model_size("copy", &config);
#line 289 "book/copy.nw"
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
    
#line 428 "book/checkpoint.nw"
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
Safetensors checkpoint_file;
if (resume_path) {
    const char *error = checkpoint_load(resume_path, &model, &adam, &progress, recipe, 7,
                                        &checkpoint_file);
    if (error) die("%s", error);
    safetensors_free(&checkpoint_file);
    if (!checkpoint_path) checkpoint_path = resume_path;
    printf("resuming %s at step %ld (epoch %d, batch %d)\n", resume_path, adam.step,
           progress.epoch, progress.batch);
}
#line 302 "book/copy.nw"
    Batch batch;
    batch_init(&batch, batch_size, len, len - 1);
    int *data = xmalloc((size_t)batch_size * len * sizeof *data);
    float *d_logprobs = xmalloc((size_t)batch_size * len * config.tgt_vocab * sizeof(float));
    int status = -1;   /* set when training stops early */
    
#line 388 "book/copy.nw"
FILE *log = NULL;
if (log_path) {
    log = fopen(log_path, resume_path ? "a" : "w");
    if (log == NULL) die("%s: cannot create the log: %s", log_path, strerror(errno));
    if (ftell(log) == 0)
        fprintf(log, "epoch,step,train_loss,validation_loss,learning_rate,seconds\n");
}
#line 363 "book/copy.nw"
const bool terminal = isatty(STDOUT_FILENO);
const double start = seconds_now();
const long total_steps = (long)epochs * batches, first_step = adam.step;
#line 491 "book/checkpoint.nw"
if (checkpoint_path) catch_stop_signals();
#line 367 "book/copy.nw"
while (progress.epoch <= epochs) {
    copy_task_batch(data, batch_size, len, config.src_vocab, &progress.data_rng);
    batch_fill(&batch, data, data, 0);
    const double loss = train_step(&model, &adam, &batch, &settings, d_logprobs,
                                   &progress.dropout_rng);
    
#line 525 "book/checkpoint.nw"
if (!isfinite(loss)) {
    if (terminal) putchar('\n');
    die("step %ld: the loss is %s; stopping%s%s", adam.step,
        isnan(loss) ? "NaN" : "infinite", checkpoint_path ? "; the last checkpoint is kept in " : "",
        checkpoint_path ? checkpoint_path : "");
}
#line 373 "book/copy.nw"
    progress.loss_sum += loss, progress.batch++;
    
#line 431 "book/copy.nw"
if (terminal) {
    const double elapsed = seconds_now() - start;
    const long done = adam.step - first_step;   /* steps taken by this process */
    printf("\repoch %d/%d  step %ld/%ld  loss %.4f  %.0f tokens/s  lr %.2e  ETA %.0f s   ",
           progress.epoch, epochs, adam.step, total_steps,
           progress.loss_sum / progress.batch,
           done * (double)batch_size * (len - 1) / elapsed,
           learning_rate(adam.step - 1, config.d_model, settings.factor, settings.warmup),
           elapsed / done * (total_steps - adam.step));
    fflush(stdout);
}
#line 375 "book/copy.nw"
    if (progress.batch == batches) {
        
#line 398 "book/copy.nw"
if (log) {
    
#line 415 "book/copy.nw"
Rng validation_rng;
rng_seed(&validation_rng, (uint64_t)progress.epoch, 4);
double validation = 0.0;
for (int v = 0; v < 2; v++) {
    copy_task_batch(data, batch_size, len, config.src_vocab, &validation_rng);
    batch_fill(&batch, data, data, 0);
    validation += evaluate_batch(&model, &batch, &settings, d_logprobs) / 2;
}
fprintf(log, "%d,%ld,%.6f,%.6f,%.6e,%.3f\n", progress.epoch, adam.step,
        progress.loss_sum / batches,
        validation,
        learning_rate(adam.step - 1, config.d_model, settings.factor, settings.warmup),
        seconds_now() - start);
#line 400 "book/copy.nw"
}
if (!terminal) {   /* one line per epoch, flushed: a log file shows progress too */
    printf("epoch %d  loss %.4f  lr %.2e  %.1f s\n", progress.epoch,
           progress.loss_sum / batches,
           learning_rate(adam.step - 1, config.d_model, settings.factor, settings.warmup),
           seconds_now() - start);
    fflush(stdout);
}
#line 377 "book/copy.nw"
        progress.epoch++, progress.batch = 0, progress.loss_sum = 0.0;
    }
    
#line 500 "book/checkpoint.nw"
const bool stop = stop_signal || (stop_after && adam.step >= stop_after);
if (checkpoint_path && (stop || progress.batch == 0
                        || (checkpoint_every && adam.step % checkpoint_every == 0))) {
    Safetensors scratch;
    const char *error = checkpoint_save(checkpoint_path, &model, &adam, &progress, recipe, 7,
                                        &scratch);
    if (error) die("%s", error);
}
if (stop) {
    if (terminal) putchar('\n');
    if (stop_signal)
        report_stop_signal(adam.step, checkpoint_path);
    else
        printf("stopped after step %ld%s%s\n", adam.step, checkpoint_path ? "; saved to " : "",
               checkpoint_path ? checkpoint_path : "");
    status = stop_signal ? 128 + stop_signal : 0;
    break;
}
#line 380 "book/copy.nw"
}
if (terminal) putchar('\n');
if (log && fclose(log) != 0) die("%s: cannot write the log: %s", log_path, strerror(errno));
#line 308 "book/copy.nw"
    if (status < 0) {
        
#line 448 "book/copy.nw"
double eval_loss = 0.0;
for (int e = 0; e < 5; e++) {
    copy_task_batch(data, batch_size, len, config.src_vocab, &progress.data_rng);
    batch_fill(&batch, data, data, 0);
    eval_loss += evaluate_batch(&model, &batch, &settings, d_logprobs) / 5;
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
#line 310 "book/copy.nw"
        status = exact ? 0 : 1;
    }
    free(data), free(d_logprobs);
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
    
#line 574 "book/decode.nw"
IntegerFlag integers[2 + MODEL_SIZE_FLAGS] = {{"--batch", 1, 4096, &batch},
                                              {"--len", 2, 4096, &len}};
model_size_flags(integers + 2, &config);
for (int a = 0; a < argc; a++) {
    const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
    if (strcmp(flag, "--decoder") == 0) {
        const bool cached = value && strcmp(value, "cached") == 0;
        if (!cached && !(value && strcmp(value, "recompute") == 0))
            usage_error("time-decode",
                        "--decoder expects 'cached' or 'recompute', got '%s'",
                        value ? value : "nothing");
        use[0] = !cached, use[1] = cached, a++;
        continue;
    }
    if (!read_integer_flag("time-decode", integers, 2 + MODEL_SIZE_FLAGS, flag, value))
        usage_error("time-decode", "unknown option '%s'", flag);
    a++;
}
if (config.d_model % config.heads || config.d_model % 2)
    usage_error("time-decode", "--d-model must be even and a multiple of --heads");
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
    
#line 601 "book/decode.nw"
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
#line 1365 "book/text.nw"
static TextLanguage parse_language(const char *command, const char *text)
{
    if (text && strcmp(text, "en") == 0) return TEXT_ENGLISH;
    if (text && strcmp(text, "de") == 0) return TEXT_GERMAN;
    usage_error(command, "--language expects 'en' or 'de', got '%s'",
                text ? text : "nothing");
}
#line 1375 "book/text.nw"
static int run_tokenize(int argc, char **argv)
{
    TextOptions options = {TEXT_ENGLISH, false};
    bool detokenize = false;
    const char *compare = NULL;
    for (int a = 0; a < argc; a++) {
        const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(flag, "--language") == 0)
            options.language = parse_language("tokenize", value), a++;
        else if (strcmp(flag, "--lowercase") == 0) options.lowercase = true;
        else if (strcmp(flag, "--detokenize") == 0) detokenize = true;
        else if (strcmp(flag, "--compare") == 0) {
            if (!value)
                usage_error("tokenize", "--compare expects a file, got 'nothing'");
            compare = value, a++;
        } else usage_error("tokenize", "unknown option '%s'", flag);
    }
    if (detokenize && (compare || options.lowercase))
        usage_error("tokenize", "--detokenize takes neither --compare nor --lowercase");
    if (compare) {
        
#line 1424 "book/text.nw"
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
#line 1396 "book/text.nw"
    } else {
        
#line 1404 "book/text.nw"
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
#line 1398 "book/text.nw"
    }
    return 0;
}
#line 1460 "book/text.nw"
static int run_vocab(int argc, char **argv)
{
    TextOptions options = {TEXT_ENGLISH, false};
    int min_frequency = 2, first_file = argc;
    const char *save = NULL;
    for (int a = 0; a < argc && first_file == argc; a++) {
        const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(flag, "--language") == 0)
            options.language = parse_language("vocab", value), a++;
        else if (strcmp(flag, "--lowercase") == 0) options.lowercase = true;
        else if (strcmp(flag, "--min-freq") == 0)
            min_frequency = (int)parse_integer("vocab", flag, value, 1, 1000000), a++;
        else if (strcmp(flag, "--save") == 0) {
            if (!value) usage_error("vocab", "--save expects a file, got 'nothing'");
            save = value, a++;
        } else if (flag[0] == '-') usage_error("vocab", "unknown option '%s'", flag);
        else first_file = a;
    }
    if (first_file == argc) usage_error("vocab", "which files?");
    
#line 1485 "book/text.nw"
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
printf("vocabulary: %d = %d specials + %d tokens seen at least %d times\n", vocab.size,
       VOCAB_SPECIALS, vocab.size - VOCAB_SPECIALS, min_frequency);
if (save && vocab_save(&vocab, save)) die("%s", vocab.error);
vocab_free(&vocab);
for (int f = 0; f < n_files; f++) tokenized_file_free(&files[f]);
free(files), free(tokens);
#line 1480 "book/text.nw"
    return 0;
}
#line 994 "book/bleu.nw"
static int run_bleu(int argc, char **argv)
{
    bool lowercase = false;
    const char **paths = xmalloc((size_t)(argc + 1) * sizeof *paths);
    int n_paths = 0;
    for (int a = 0; a < argc; a++) {
        if (strcmp(argv[a], "--lowercase") == 0 || strcmp(argv[a], "-lc") == 0)
            lowercase = true;
        else if (argv[a][0] == '-' && argv[a][1] != '\0')
            usage_error("bleu", "unknown option '%s'", argv[a]);
        else paths[n_paths++] = argv[a];
    }
    if (n_paths < 2)
        usage_error("bleu", "expects a hypothesis file and a reference file");
    BleuLines *files = xmalloc((size_t)n_paths * sizeof *files);
    for (int f = 0; f < n_paths; f++) bleu_read_lines(&files[f], paths[f]);
    for (int f = 1; f < n_paths; f++)
        if (files[f].count != files[0].count)
            die("%s has %ld lines but %s has %ld: BLEU needs one reference line for each "
                "hypothesis line", paths[0], files[0].count, paths[f], files[f].count);
    
#line 1022 "book/bleu.nw"
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
#line 1015 "book/bleu.nw"
    for (int f = 0; f < n_paths; f++) bleu_lines_free(&files[f]);
    free(files), free(paths);
    return 0;
}
#line 249 "book/translate.nw"
static int run_train(int argc, char **argv)
{
    const char *data_dir = "data/multi30k", *model_path = "multi30k.safetensors";
    const char *checkpoint_path = "multi30k-last.safetensors", *resume_path = NULL;
    const char *log_path = NULL;
    int epochs = 30, token_budget = 2000, max_minutes = 0;
    long checkpoint_every = 500, stop_after = 0;
    Config config = config_default(0, 0, 3);
    config.d_model = 256, config.d_ff = 1024, config.heads = 8;
    TrainSettings settings = {.smoothing = 0.1f, .factor = 0.5, .warmup = 400};
    
#line 273 "book/translate.nw"
int subset = 0;
IntegerFlag integers[4 + MODEL_SIZE_FLAGS] = {
    {"--epochs", 1, 100000, &epochs}, {"--token-budget", 16, 1000000, &token_budget},
    {"--minutes", 1, 100000, &max_minutes}, {"--subset", 1, 100000000, &subset}};
model_size_flags(integers + 4, &config);
for (int a = 0; a < argc; a++) {
    const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
    static const char *const names[] = {"--data", "--model", "--checkpoint", "--resume",
                                        "--log"};
    const char **paths[] = {&data_dir, &model_path, &checkpoint_path, &resume_path,
                            &log_path};
    int f = 0;
    while (f < 5 && strcmp(flag, names[f]) != 0) f++;
    if (f < 5) {
        if (!value || !*value) usage_error("train", "%s needs a file name", flag);
        *paths[f] = value, a++;
        continue;
    }
    if (read_integer_flag("train", integers, 4 + MODEL_SIZE_FLAGS, flag, value)) {
        a++;
    } else if (strcmp(flag, "--warmup") == 0) {
        settings.warmup = (long)parse_integer("train", flag, value, 1, 10000000), a++;
    } else if (strcmp(flag, "--checkpoint-every") == 0 || strcmp(flag, "--stop-after") == 0) {
        *(flag[2] == 'c' ? &checkpoint_every : &stop_after) =
            (long)parse_integer("train", flag, value, 1, 1000000000), a++;
    } else if (strcmp(flag, "--factor") == 0) {
        settings.factor = parse_number("train", flag, value, 1e-6, 1e30), a++;
    } else if (strcmp(flag, "--smoothing") == 0) {
        settings.smoothing = (float)parse_number("train", flag, value, 0.0, 0.99), a++;
    } else if (strcmp(flag, "--dropout") == 0) {
        config.dropout = (float)parse_number("train", flag, value, 0.0, 0.99), a++;
    } else {
        usage_error("train", "unknown option '%s'", flag);
    }
}
check_model_size("train", &config);
#line 260 "book/translate.nw"
    
#line 576 "book/translate.nw"
const TextOptions german = {TEXT_GERMAN, true}, english = {TEXT_ENGLISH, true};
static const char *const file_names[4] = {"train.de", "train.en", "val.de", "val.en"};
TokenizedFile files[4];
for (int f = 0; f < 4; f++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", data_dir, file_names[f]);
    const char *error = tokenize_file(path, f % 2 ? english : german, &files[f]);
    if (error) die("%s", error);
}
for (int f = 0; f < 4; f += 2)
    if (files[f].lines != files[f + 1].lines)
        die("%s/%s has %ld lines but %s/%s has %ld", data_dir, file_names[f], files[f].lines,
            data_dir, file_names[f + 1], files[f + 1].lines);
Vocab src_vocab, tgt_vocab;
const long train_lines = subset && subset < files[0].lines ? subset : files[0].lines;
vocab_build(&src_vocab, files[0].token, files[0].line_start[train_lines], 2);
vocab_build(&tgt_vocab, files[1].token, files[1].line_start[train_lines], 2);
Corpus train = corpus_number(&files[0], &files[1], &src_vocab, &tgt_vocab, subset, 128);
Corpus validation = corpus_number(&files[2], &files[3], &src_vocab, &tgt_vocab, subset, 128);
for (int f = 0; f < 4; f++) tokenized_file_free(&files[f]);
config.src_vocab = src_vocab.size, config.tgt_vocab = tgt_vocab.size;
const int pad = VOCAB_BLANK;
printf("%d training pairs, %d validation pairs; vocabularies: %d German, %d English\n",
       train.count, validation.count, src_vocab.size, tgt_vocab.size);
fflush(stdout);
#line 261 "book/translate.nw"
    
#line 318 "book/translate.nw"
BatchPlan plan, validation_plan;
batch_plan(&plan, &train, token_budget);
batch_plan(&validation_plan, &validation, token_budget);
int max_pairs = 0, max_src = 0, max_tgt = 0, max_src_tokens = 0, max_tgt_tokens = 0;
const BatchPlan *plans[2] = {&plan, &validation_plan};
for (int p = 0; p < 2; p++)
    for (int b = 0; b < plans[p]->count; b++) {
        const BatchSpan *span = &plans[p]->spans[b];
        if (span->count > max_pairs) max_pairs = span->count;
        if (span->src_len > max_src) max_src = span->src_len;
        if (span->tgt_len > max_tgt) max_tgt = span->tgt_len;
        if (span->count * span->src_len > max_src_tokens)
            max_src_tokens = span->count * span->src_len;
        if (span->count * (span->tgt_len - 1) > max_tgt_tokens)
            max_tgt_tokens = span->count * (span->tgt_len - 1);
    }
config.max_len = max_src > max_tgt ? max_src : max_tgt;
Model model;
model_init(&model, config);
Rng init_rng;
rng_seed(&init_rng, 1, 1);
model_initialize_parameters(&model, &init_rng);
model_prepare_tokens(&model, max_pairs, max_src, max_tgt - 1, max_src_tokens, max_tgt_tokens);
Adam adam;
adam_init(&adam, &model.parameters, 0.9, 0.98, 1e-9);
TrainingProgress progress = {.epoch = 1};
rng_seed(&progress.data_rng, 1, 2), rng_seed(&progress.dropout_rng, 1, 3);
Batch batch;
batch_init(&batch, max_pairs, max_src, max_tgt - 1);
float *d_logprobs = xmalloc((size_t)max_tgt_tokens * config.tgt_vocab * sizeof(float));
int *order = xmalloc((size_t)plan.count * sizeof *order);
#line 356 "book/translate.nw"
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
double best_validation = INFINITY;
if (resume_path) {
    Safetensors file;
    const char *error = checkpoint_load(resume_path, &model, &adam, &progress, recipe, 7,
                                        &file);
    if (error) die("%s", error);
    char value[64];
    if (safetensors_metadata(&file, "best_validation", value, sizeof value))
        best_validation = strtod(value, NULL);
    safetensors_free(&file);
    printf("resuming %s at step %ld (epoch %d, batch %d)\n", resume_path, adam.step,
           progress.epoch, progress.batch);
}
#line 262 "book/translate.nw"
    
#line 388 "book/translate.nw"
FILE *log = NULL;
if (log_path) {
    log = fopen(log_path, resume_path ? "a" : "w");
    if (log == NULL) die("%s: cannot create the log: %s", log_path, strerror(errno));
    if (ftell(log) == 0)
        fprintf(log, "epoch,step,train_loss,validation_loss,learning_rate,seconds,"
                     "tokens_per_second\n");
}
const bool terminal = isatty(STDOUT_FILENO);
const double start = seconds_now();
const long first_step = adam.step;
long tokens_seen = 0;
int status = -1;
catch_stop_signals();   /* a run always has a checkpoint file */
batch_order(order, plan.count, 1, progress.epoch);
while (progress.epoch <= epochs && status < 0) {
    const BatchSpan *span = &plan.spans[order[progress.batch]];
    batch_fill_span(&batch, &train, &plan, span, pad);
    const double loss = train_step(&model, &adam, &batch, &settings, d_logprobs,
                                   &progress.dropout_rng);
    if (!isfinite(loss)) {
        if (terminal) putchar('\n');
        die("step %ld: the loss is %s; stopping; the last checkpoint is kept in %s",
            adam.step, isnan(loss) ? "NaN" : "infinite", checkpoint_path);
    }
    for (int i = 0; i < batch.batch * batch.tgt_len; i++) tokens_seen += batch.tgt_y[i] != pad;
    progress.loss_sum += loss, progress.batch++;
    
#line 450 "book/translate.nw"
if (terminal) {
    const double elapsed = seconds_now() - start;
    const long done = adam.step - first_step;
    const long left = (long)(epochs - progress.epoch) * plan.count + plan.count - progress.batch;
    printf("\repoch %d/%d  batch %d/%d  step %ld  loss %.4f  %.0f tokens/s  lr %.2e  "
           "ETA %.0f min   ", progress.epoch, epochs, progress.batch, plan.count, adam.step,
           progress.loss_sum / progress.batch, tokens_seen / elapsed,
           learning_rate(adam.step - 1, config.d_model, settings.factor, settings.warmup),
           elapsed / done * left / 60);
    fflush(stdout);
}
#line 416 "book/translate.nw"
    const bool epoch_done = progress.batch == plan.count;
    const bool out_of_time = max_minutes && seconds_now() - start >= 60.0 * max_minutes;
    if (epoch_done || out_of_time) {   /* the time budget ends with a validated model too */
        
#line 464 "book/translate.nw"
double validation_sum = 0.0;
long validation_tokens = 0;
for (int b = 0; b < validation_plan.count; b++) {
    batch_fill_span(&batch, &validation, &validation_plan, &validation_plan.spans[b], pad);
    int tokens = 0;
    for (int i = 0; i < batch.batch * batch.tgt_len; i++) tokens += batch.tgt_y[i] != pad;
    validation_sum += evaluate_batch(&model, &batch, &settings, d_logprobs) * tokens;
    validation_tokens += tokens;
}
const double validation_loss = validation_sum / (double)validation_tokens;
const double elapsed = seconds_now() - start;
if (log)
    fprintf(log, "%d,%ld,%.6f,%.6f,%.6e,%.1f,%.0f\n", progress.epoch, adam.step,
            progress.loss_sum / progress.batch, validation_loss,
            learning_rate(adam.step - 1, config.d_model, settings.factor, settings.warmup),
            elapsed, tokens_seen / elapsed);
if (log) fflush(log);
if (!terminal) {
    printf("epoch %d  step %ld  loss %.4f  validation %.4f  %.0f tokens/s  %.1f min\n",
           progress.epoch, adam.step, progress.loss_sum / progress.batch, validation_loss,
           tokens_seen / elapsed, elapsed / 60);
    fflush(stdout);
}
if (validation_loss < best_validation) {
    best_validation = validation_loss;
    
#line 709 "book/translate.nw"
Safetensors scratch;
const char *error = translation_model_save(model_path, &model, &src_vocab, &tgt_vocab,
                                           &scratch);
if (error) die("%s", error);
#line 490 "book/translate.nw"
}
#line 420 "book/translate.nw"
    }
    if (epoch_done) {
        progress.epoch++, progress.batch = 0, progress.loss_sum = 0.0;
        batch_order(order, plan.count, 1, progress.epoch);
    }
    const bool stop = stop_signal || out_of_time || (stop_after && adam.step >= stop_after);
    if (stop || epoch_done || adam.step % checkpoint_every == 0) {
        
#line 719 "book/translate.nw"
char best_text[32];
snprintf(best_text, sizeof best_text, "%.17g", best_validation);
const char *pairs[8][2];
for (int i = 0; i < 7; i++) pairs[i][0] = recipe[i][0], pairs[i][1] = recipe[i][1];
pairs[7][0] = "best_validation", pairs[7][1] = best_text;
Safetensors scratch;
const char *error = checkpoint_save(checkpoint_path, &model, &adam, &progress,
                                    (const char *const (*)[2])pairs, 8, &scratch);
if (error) die("%s", error);
#line 428 "book/translate.nw"
    }
    if (stop) {
        if (terminal) putchar('\n');
        if (stop_signal)
            report_stop_signal(adam.step, checkpoint_path);
        else
            printf("stopped after step %ld (%s); saved to %s\n", adam.step,
                   out_of_time ? "time budget" : "--stop-after", checkpoint_path);
        status = stop_signal ? 128 + stop_signal : 0;
    }
}
if (status < 0) status = 0;
if (terminal && status == 0) putchar('\n');
if (log && fclose(log) != 0) die("%s: cannot write the log: %s", log_path, strerror(errno));
if (isfinite(best_validation))
    printf("best validation loss %.4f; model %s\n", best_validation, model_path);
else
    printf("no validation yet, so no model saved; resume with --resume %s\n",
           checkpoint_path);
#line 263 "book/translate.nw"
    
#line 494 "book/translate.nw"
free(order), free(d_logprobs);
vocab_free(&src_vocab), vocab_free(&tgt_vocab);
batch_free(&batch);
batch_plan_free(&plan), batch_plan_free(&validation_plan);
corpus_free(&train), corpus_free(&validation);
adam_free(&adam);
model_free(&model);
#line 264 "book/translate.nw"
    return status;
}
#line 743 "book/translate.nw"
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
    for (int a = 0; a < argc; a++) {
        const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(flag, "--model") == 0) {
            if (!value || !*value) usage_error("translate", "--model needs a file name");
            model_path = value, a++;
        } else if (strcmp(flag, "--beam") == 0) {
            beam_size = (int)parse_integer("translate", flag, value, 1, 64), a++;
        } else if (strcmp(flag, "--batch") == 0) {
            batch_limit = (int)parse_integer("translate", flag, value, 1, 1024), a++;
        } else if (strcmp(flag, "--alpha") == 0) {
            alpha = parse_number("translate", flag, value, 0.0, 10.0), a++;
        } else {
            usage_error("translate", "unknown option '%s'", flag);
        }
    }
    Model model;
    Vocab src_vocab, tgt_vocab;
    load_translator(model_path, &model, &src_vocab, &tgt_vocab);
    
#line 787 "book/translate.nw"
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
    
#line 823 "book/translate.nw"
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
#line 807 "book/translate.nw"
    if (batch == 0) break;
    padding_mask(src_keep, src, batch, src_len, VOCAB_BLANK);
    if (beam_size == 1)
        greedy_translate(&model, &cache, out, lengths, NULL, src, src_keep, batch, src_len,
                         &settings);
    else
        beam_search(&model, &cache, &beam, out, lengths, NULL, src, src_keep, batch, src_len,
                    &settings);
    
#line 854 "book/translate.nw"
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
#line 816 "book/translate.nw"
}
free(src), free(src_keep), free(out), free(lengths);
beam_free(&beam);
decoder_cache_free(&cache);
#line 777 "book/translate.nw"
    vocab_free(&src_vocab), vocab_free(&tgt_vocab);
    model_free(&model);
    return finish_output();
}
#line 1018 "book/translate.nw"
static int run_attention(int argc, char **argv)
{
    const char *model_path = "multi30k.safetensors", *kind = "cross";
    int layer = -1, head = -1;   /* -1: the last layer; the mean over heads */
    for (int a = 0; a < argc; a++) {
        const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(flag, "--model") == 0 && value) model_path = value, a++;
        else if (strcmp(flag, "--kind") == 0 && value
                 && (!strcmp(value, "encoder") || !strcmp(value, "decoder")
                     || !strcmp(value, "cross")))
            kind = value, a++;
        else if (strcmp(flag, "--layer") == 0)
            layer = (int)parse_integer("attention", flag, value, 0, 63), a++;
        else if (strcmp(flag, "--head") == 0 && value && strcmp(value, "mean") == 0)
            head = -1, a++;
        else if (strcmp(flag, "--head") == 0)
            head = (int)parse_integer("attention", flag, value, 0, 63), a++;
        else
            usage_error("attention", "unknown option or bad value: '%s'", flag);
    }
    Model model;
    Vocab src_vocab, tgt_vocab;
    load_translator(model_path, &model, &src_vocab, &tgt_vocab);
    const Config *c = &model.config;
    if (layer < 0) layer = c->layers - 1;
    if (layer >= c->layers) usage_error("attention", "--layer: the model has %d", c->layers);
    if (head >= c->heads) usage_error("attention", "--head: the model has %d", c->heads);
    
#line 1054 "book/translate.nw"
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
#line 1046 "book/translate.nw"
    
#line 1079 "book/translate.nw"
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
#line 1047 "book/translate.nw"
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
    
#line 278 "book/fast.nw"
for (int step = 0; step < s->warmup_steps; step++) {
    copy_task_batch(full, batch, len, vocab, &data_rng);
    batch_fill(&data, full, full, 0);
    matmul_log = step == 0 ? &log : NULL;
    train_step(&model, &adam, &data, &settings, d_logprobs, &dropout_rng);
    matmul_log = NULL;
}
#line 258 "book/fast.nw"
    
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
    
#line 354 "book/fast.nw"
int vocab = config.tgt_vocab;
IntegerFlag integers[8 + MODEL_SIZE_FLAGS] = {
    {"--vocab", 3, 1000000, &vocab}, {"--batch", 1, 4096, &s.batch},
    {"--len", 2, 4096, &s.len}, {"--steps", 1, 1000000, &s.steps},
    {"--warmup-steps", 1, 1000000, &s.warmup_steps},
    {"--sentences", 1, 1000000, &s.sentences},
    {"--warmup-sentences", 0, 1000000, &s.warmup_sentences},
    {"--threads", 1, MAX_THREADS, &s.threads}};
model_size_flags(integers + 8, &config);
for (int a = 1; a < argc; a += 2)
    if (!read_integer_flag("benchmark", integers, 8 + MODEL_SIZE_FLAGS, argv[a],
                           a + 1 < argc ? argv[a + 1] : NULL))
        usage_error("benchmark", "unknown option '%s'", argv[a]);
check_model_size("benchmark", &config);
config.src_vocab = config.tgt_vocab = vocab;
#line 348 "book/fast.nw"
    set_threads(s.threads);
    return s.decoding ? benchmark_decoding(config, &s) : benchmark_training(config, &s);
}

#line 173 "book/program.nw"
static const Command commands[] = {
    
#line 366 "book/program.nw"
{"figure-data", "print the data of one of the book's figures",
 NULL, print_figure_data_help, run_figure_data},
#line 398 "book/program.nw"
{"demo", "show what the program computes so far (run by make)",
 "usage: transformer demo\n\n"
 "Print the data of every figure of the book in the terminal.\n",
 NULL, run_demo},
#line 496 "book/program.nw"
{"random", "print numbers from the seeded generator (Chapter 2)",
 "usage: transformer random [--seed S] [--stream N] [--count N]\n"
 "                          [--bits | --uniform | --normal]\n\n"
 "Print COUNT numbers of the PCG32 stream (default seed 42, stream 54, count 6),\n"
 "as 32-bit outputs (--bits), uniform in [0,1) (--uniform, the default)\n"
 "or standard normal (--normal).\n"
 "Seeds and streams are integers from 0 to 2^63 - 1.\n",
 NULL, run_random},
#line 567 "book/program.nw"
{"time-matmul", "time one matrix-multiplication kernel (Chapter 2)",
 "usage: transformer time-matmul [--size N] [--kernel blas|reference]\n\n"
 "Multiply two random N x N matrices (default 256) repeatedly for 0.1 s and print\n"
 "the time of one product and the rate in GFLOP/s.\n",
 NULL, run_time_matmul},
#line 593 "book/gradcheck.nw"
{"gradcheck", "check the backward functions by finite differences",
 "usage: transformer gradcheck [--layer NAME] [--samples N] [--step H]\n\n"
 "Compare each backward function's gradient with central differences and print the\n"
 "error relative to each tensor's largest gradient. NAME is all (the default), model,\n"
 "linear, softmax, attention, cross-attention, layernorm, layernorm-annotated,\n"
 "feed-forward, embedding or log-softmax. Exits with status 1 if an error reaches its\n"
 "bound (1e-2 for a layer, 5e-2 for the model).\n",
 NULL, run_gradcheck},
#line 477 "book/copy.nw"
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
#line 626 "book/decode.nw"
{"time-decode", "time greedy decoding with and without the key-value cache (Chapter 14)",
 "usage: transformer time-decode [--decoder cached|recompute] [--batch N] [--len N]\n"
 "                               [--layers N] [--d-model N] [--d-ff N] [--heads N]\n\n"
 "Decode BATCH random sources of LEN tokens (default 8 of 10) greedily with a random\n"
 "model (the copy task's by default: N = 2, d_model 512, d_ff 2048, 8 heads), with the\n"
 "recomputing decoder, the cached one, or (without --decoder) both; print the time of\n"
 "one decoding and, for both, the speed-up. Exits with status 1 if they differ.\n",
 NULL, run_time_decode},
#line 1437 "book/text.nw"
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
#line 1509 "book/text.nw"
{"vocab", "build the vocabulary of text files (Chapter 15)",
 "usage: transformer vocab [--language en|de] [--lowercase] [--min-freq N]\n"
 "                         [--save VOCAB] FILE...\n\n"
 "Tokenize the FILEs as 'transformer tokenize' does and build their vocabulary: the\n"
 "specials <s> </s> <blank> <unk>, then every token seen at least N times (default 2),\n"
 "the most frequent first, ties in byte order. Print its size; --save writes it to\n"
 "VOCAB, one token a line.\n",
 NULL, run_vocab},
#line 1039 "book/bleu.nw"
{"bleu", "score translations with corpus BLEU, exactly as sacreBLEU does",
 "usage: transformer bleu HYP REF [REF...] [--lowercase]\n\n"
 "Print the corpus BLEU of the hypotheses in HYP (detokenized text, one sentence\n"
 "per line) against the references in REF (the same number of lines), and its\n"
 "signature: the value sacreBLEU " BLEU_SACREBLEU_VERSION " prints with its defaults\n"
 "(13a tokenizer, exp smoothing, case-sensitive). More REF files give more\n"
 "references per line. --lowercase (or -lc) scores lowercased text.\n"
 "Files must be UTF-8; different line counts are an error (status 1).\n",
 NULL, run_bleu},
#line 873 "book/translate.nw"
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
#line 1111 "book/translate.nw"
{"attention", "print one attention map of a translation (Chapter 18)",
 "usage: transformer attention [--model FILE] [--kind encoder|decoder|cross]\n"
 "                             [--layer L] [--head H|mean] < sentence.de\n\n"
 "Translate the German sentence on standard input and print the attention weights of\n"
 "one head (or their mean, the default) of one layer (default: the last) as a matrix\n"
 "with token labels: rows are queries, columns keys (gnuplot: matrix rowheaders\n"
 "columnheaders). --kind: encoder self-attention, decoder self-attention or the\n"
 "decoder's attention to the source (cross, the default).\n",
 NULL, run_attention},
#line 372 "book/fast.nw"
{"benchmark", "time training or decoding, for comparison with PyTorch (Chapter 19)",
 "usage: transformer benchmark train [--layers N] [--d-model N] [--d-ff N] [--heads N]\n"
 "                                   [--vocab V] [--batch B] [--len L] [--steps S]\n"
 "                                   [--warmup-steps W] [--threads T]\n"
 "       transformer benchmark decode [same sizes] [--len L] [--sentences K]\n"
 "                                    [--warmup-sentences W] [--threads T]\n\n"
 "train: W warm-up steps, then S timed training steps on random copy-task batches of\n"
 "B sequences of L symbols (dropout 0.1, label smoothing 0.1, Chapter 11's optimizer);\n"
 "prints target"
 "tokens/s, ms per step, peak RSS, the FLOPs of a step's matrix products and the rate\n"
 "of OpenBLAS on exactly those products. decode: greedy decoding with the key-value\n"
 "cache of K random sources of L symbols, one at a time; prints sentences/s.\n"
 "Defaults: the copy task's model (N 2, d_model 512, d_ff 2048, 8 heads, V 11), B 80,\n"
 "L 10, S 20, W 3, K 10, 1 thread.\n",
 NULL, run_benchmark},
#line 175 "book/program.nw"
};
enum { COMMAND_COUNT = sizeof commands / sizeof commands[0] };
#line 180 "book/program.nw"
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
#line 204 "book/program.nw"
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
        
#line 238 "book/program.nw"
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
#line 226 "book/program.nw"
        int status = commands[i].run(argc - 2, argv + 2);
        return status ? status : finish_output();
    }
    usage_error(NULL, "unknown command '%s'", name);
}
