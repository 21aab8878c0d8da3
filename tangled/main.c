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
#line 482 "book/program.nw"
#include <time.h>
#line 528 "book/gradcheck.nw"
#include "gradcheck.h"
#line 250 "book/copy.nw"
#include <unistd.h>
#include "train.h"
#line 455 "book/checkpoint.nw"
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include "checkpoint.h"
#line 541 "book/decode.nw"
#include "decode.h"
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
#line 136 "book/program.nw"
typedef struct {
    const char *name;
    const char *summary;   /* one line for 'transformer --help' */
    const char *help;      /* the text of 'transformer NAME --help', or NULL and: */
    void (*print_help)(FILE *out);
    int (*run)(int argc, char **argv);   /* argv[0] is the first argument after NAME */
} Command;
#line 276 "book/program.nw"
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
    
#line 299 "book/program.nw"
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
#line 292 "book/program.nw"
    const char *problem = kind->emit(stdout, value);
    if (problem) usage_error("figure-data", "%s", problem);
    return 0;
}
#line 318 "book/program.nw"
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
#line 352 "book/program.nw"
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
#line 440 "book/program.nw"
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
#line 486 "book/program.nw"
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
    
#line 518 "book/program.nw"
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
#line 510 "book/program.nw"
    return 0;
}
#line 532 "book/gradcheck.nw"
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
    
#line 559 "book/gradcheck.nw"
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
#line 555 "book/gradcheck.nw"
}
#line 462 "book/checkpoint.nw"
static volatile sig_atomic_t stop_signal = 0;

static void note_stop_signal(int signal_number)
{
    stop_signal = signal_number;
    signal(signal_number, SIG_DFL);
}
#line 256 "book/copy.nw"
static int run_copy(int argc, char **argv)
{
    Config config = config_default(11, 11, 2);
    int epochs = 20, batches = 20, batch_size = 80, len = 10;
    const char *log_path = NULL;
    const char *checkpoint_path = NULL, *resume_path = NULL;   /* Chapter 13 */
    long checkpoint_every = 0, stop_after = 0;
    TrainSettings settings = {.smoothing = 0.0f, .factor = 0.5, .warmup = 400, .pad = 0};
    
#line 296 "book/copy.nw"
for (int a = 0; a < argc; a++) {
    const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
    static const struct { const char *flag; long long low, high; } limits[] = {
        {"--epochs", 1, 10000}, {"--batches", 1, 100000}, {"--batch-size", 1, 4096},
        {"--layers", 1, 24}, {"--d-model", 2, 4096}, {"--d-ff", 1, 16384},
        {"--heads", 1, 64}};
    int *target[] = {&epochs, &batches, &batch_size, &config.layers, &config.d_model,
                     &config.d_ff, &config.heads};
    if (strcmp(flag, "--log") == 0) {
        if (!value) usage_error("copy", "--log needs a file name");
        log_path = value, a++;
        continue;
    }
    if (strcmp(flag, "--factor") == 0) {
        settings.factor = parse_number("copy", flag, value, 1e-6, 1e30), a++;
        continue;
    }
    
#line 407 "book/checkpoint.nw"
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
#line 314 "book/copy.nw"
    int f = 0;
    while (f < 7 && strcmp(flag, limits[f].flag) != 0) f++;
    if (f == 7) usage_error("copy", "unknown option '%s'", flag);
    *target[f] = (int)parse_integer("copy", flag, value, limits[f].low, limits[f].high);
    a++;
}
if (config.d_model % config.heads || config.d_model % 2)
    usage_error("copy", "--d-model must be even and a multiple of --heads");
#line 265 "book/copy.nw"
    config.max_len = len;
    Model model;
    model_init(&model, config);
    Rng init_rng;
    rng_seed(&init_rng, 1, 1);
    model_initialize_parameters(&model, &init_rng);
    model_prepare(&model, batch_size, len, len);
    Adam adam;
    adam_init(&adam, &model.parameters, 0.9, 0.98, 1e-9);
    TrainingProgress progress = {.epoch = 1};
    rng_seed(&progress.data_rng, 1, 2), rng_seed(&progress.dropout_rng, 1, 3);
    
#line 425 "book/checkpoint.nw"
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
#line 277 "book/copy.nw"
    Batch batch;
    batch_init(&batch, batch_size, len, len - 1);
    int *data = xmalloc((size_t)batch_size * len * sizeof *data);
    float *d_logprobs = xmalloc((size_t)batch_size * len * config.tgt_vocab * sizeof(float));
    int status = -1;   /* set when training stops early */
    
#line 367 "book/copy.nw"
FILE *log = NULL;
if (log_path) {
    log = fopen(log_path, resume_path ? "a" : "w");
    if (log == NULL) die("%s: cannot create the log: %s", log_path, strerror(errno));
    if (ftell(log) == 0)
        fprintf(log, "epoch,step,train_loss,validation_loss,learning_rate,seconds\n");
}
#line 342 "book/copy.nw"
const bool terminal = isatty(STDOUT_FILENO);
const double start = seconds_now();
const long total_steps = (long)epochs * batches, first_step = adam.step;
#line 472 "book/checkpoint.nw"
if (checkpoint_path) {
    struct sigaction action = {.sa_handler = note_stop_signal, .sa_flags = SA_RESTART};
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
}
#line 346 "book/copy.nw"
while (progress.epoch <= epochs) {
    copy_task_batch(data, batch_size, len, config.src_vocab, &progress.data_rng);
    batch_fill(&batch, data, data, 0);
    const double loss = train_step(&model, &adam, &batch, &settings, d_logprobs,
                                   &progress.dropout_rng);
    
#line 513 "book/checkpoint.nw"
if (!isfinite(loss)) {
    if (terminal) putchar('\n');
    die("step %ld: the loss is %s; stopping%s%s", adam.step,
        isnan(loss) ? "NaN" : "infinite", checkpoint_path ? "; the last checkpoint is kept in " : "",
        checkpoint_path ? checkpoint_path : "");
}
#line 352 "book/copy.nw"
    progress.loss_sum += loss, progress.batch++;
    
#line 410 "book/copy.nw"
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
#line 354 "book/copy.nw"
    if (progress.batch == batches) {
        
#line 377 "book/copy.nw"
if (log) {
    
#line 394 "book/copy.nw"
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
#line 379 "book/copy.nw"
}
if (!terminal) {   /* one line per epoch, flushed: a log file shows progress too */
    printf("epoch %d  loss %.4f  lr %.2e  %.1f s\n", progress.epoch,
           progress.loss_sum / batches,
           learning_rate(adam.step - 1, config.d_model, settings.factor, settings.warmup),
           seconds_now() - start);
    fflush(stdout);
}
#line 356 "book/copy.nw"
        progress.epoch++, progress.batch = 0, progress.loss_sum = 0.0;
    }
    
#line 486 "book/checkpoint.nw"
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
        fprintf(stderr, "transformer: %s at step %ld; the checkpoint is %s\n",
                stop_signal == SIGINT ? "interrupted" : "terminated", adam.step,
                checkpoint_path);
    else
        printf("stopped after step %ld%s%s\n", adam.step, checkpoint_path ? "; saved to " : "",
               checkpoint_path ? checkpoint_path : "");
    status = stop_signal ? 128 + stop_signal : 0;
    break;
}
#line 359 "book/copy.nw"
}
if (terminal) putchar('\n');
if (log && fclose(log) != 0) die("%s: cannot write the log: %s", log_path, strerror(errno));
#line 283 "book/copy.nw"
    if (status < 0) {
        
#line 427 "book/copy.nw"
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
#line 285 "book/copy.nw"
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
for (int a = 0; a < argc; a++) {
    const char *flag = argv[a], *value = a + 1 < argc ? argv[a + 1] : NULL;
    static const struct { const char *flag; long long low, high; } limits[] = {
        {"--batch", 1, 4096}, {"--len", 2, 4096}, {"--layers", 1, 24},
        {"--d-model", 2, 4096}, {"--d-ff", 1, 16384}, {"--heads", 1, 64}};
    int *target[] = {&batch, &len, &config.layers, &config.d_model, &config.d_ff,
                     &config.heads};
    if (strcmp(flag, "--decoder") == 0) {
        const bool cached = value && strcmp(value, "cached") == 0;
        if (!cached && !(value && strcmp(value, "recompute") == 0))
            usage_error("time-decode",
                        "--decoder expects 'cached' or 'recompute', got '%s'",
                        value ? value : "nothing");
        use[0] = !cached, use[1] = cached, a++;
        continue;
    }
    int f = 0;
    while (f < 6 && strcmp(flag, limits[f].flag) != 0) f++;
    if (f == 6) usage_error("time-decode", "unknown option '%s'", flag);
    *target[f] = (int)parse_integer("time-decode", flag, value, limits[f].low,
                                    limits[f].high);
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
    
#line 606 "book/decode.nw"
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

#line 148 "book/program.nw"
static const Command commands[] = {
    
#line 337 "book/program.nw"
{"figure-data", "print the data of one of the book's figures",
 NULL, print_figure_data_help, run_figure_data},
#line 369 "book/program.nw"
{"demo", "show what the program computes so far (run by make)",
 "usage: transformer demo\n\n"
 "Print the data of every figure of the book in the terminal.\n",
 NULL, run_demo},
#line 467 "book/program.nw"
{"random", "print numbers from the seeded generator (Chapter 2)",
 "usage: transformer random [--seed S] [--stream N] [--count N]\n"
 "                          [--bits | --uniform | --normal]\n\n"
 "Print COUNT numbers of the PCG32 stream (default seed 42, stream 54, count 6),\n"
 "as 32-bit outputs (--bits), uniform in [0,1) (--uniform, the default)\n"
 "or standard normal (--normal).\n"
 "Seeds and streams are integers from 0 to 2^63 - 1.\n",
 NULL, run_random},
#line 538 "book/program.nw"
{"time-matmul", "time one matrix-multiplication kernel (Chapter 2)",
 "usage: transformer time-matmul [--size N] [--kernel blas|reference]\n\n"
 "Multiply two random N x N matrices (default 256) repeatedly for 0.1 s and print\n"
 "the time of one product and the rate in GFLOP/s.\n",
 NULL, run_time_matmul},
#line 589 "book/gradcheck.nw"
{"gradcheck", "check the backward functions by finite differences",
 "usage: transformer gradcheck [--layer NAME] [--samples N] [--step H]\n\n"
 "Compare each backward function's gradient with central differences and print the\n"
 "error relative to each tensor's largest gradient. NAME is all (the default), model,\n"
 "linear, softmax, attention, cross-attention, layernorm, layernorm-annotated,\n"
 "feed-forward, embedding or log-softmax. Exits with status 1 if an error reaches its\n"
 "bound (1e-2 for a layer, 5e-2 for the model).\n",
 NULL, run_gradcheck},
#line 456 "book/copy.nw"
{"copy", "train the copy task and decode examples (Chapter 12)",
 "usage: transformer copy [--epochs N] [--batches N] [--batch-size N] [--layers N]\n"
 "                        [--d-model N] [--d-ff N] [--heads N] [--factor F]\n"
 "                        [--log FILE.csv] [--checkpoint FILE] [--checkpoint-every N]\n"
 "                        [--resume FILE] [--stop-after STEP]\n\n"
 "Train a model to copy sequences of 10 symbols (vocabulary 11; the course's recipe by\n"
 "default: 20 epochs of 20 batches of 80, N = 2, d_model 512, d_ff 2048, 8 heads), then\n"
 "decode 1..10 and random sequences. Exits with status 1 unless every decoding is exact.\n"
 "--factor sets the schedule's factor (0.5: the course's base rate 0.5 times factor 1).\n"
 "--log writes one CSV row per epoch: training and validation loss, rate, time.\n"
 "--checkpoint saves the weights and the whole training state to FILE (safetensors) after\n"
 "every epoch, every N steps with --checkpoint-every, at --stop-after, and on SIGINT or\n"
 "SIGTERM (exit status 130 or 143). --resume continues the run saved in FILE, bit for bit,\n"
 "and keeps saving there; give it the same sizes (--epochs may grow).\n",
 NULL, run_copy},
#line 631 "book/decode.nw"
{"time-decode", "time greedy decoding with and without the key-value cache (Chapter 14)",
 "usage: transformer time-decode [--decoder cached|recompute] [--batch N] [--len N]\n"
 "                               [--layers N] [--d-model N] [--d-ff N] [--heads N]\n\n"
 "Decode BATCH random sources of LEN tokens (default 8 of 10) greedily with a random\n"
 "model (the copy task's by default: N = 2, d_model 512, d_ff 2048, 8 heads), with the\n"
 "recomputing decoder, the cached one, or (without --decoder) both; print the time of\n"
 "one decoding and, for both, the speed-up. Exits with status 1 if they differ.\n",
 NULL, run_time_decode},
#line 150 "book/program.nw"
};
enum { COMMAND_COUNT = sizeof commands / sizeof commands[0] };
#line 155 "book/program.nw"
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
                 "(default blas)\n");
}
#line 175 "book/program.nw"
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
        
#line 209 "book/program.nw"
const char *kernel = getenv("TRANSFORMER_MATMUL");
if (kernel && strcmp(kernel, "reference") == 0) matmul_kernel = MATMUL_REFERENCE;
else if (kernel && *kernel && strcmp(kernel, "blas") != 0)
    usage_error(NULL, "TRANSFORMER_MATMUL must be 'blas' or 'reference', not '%s'",
                kernel);
#line 197 "book/program.nw"
        int status = commands[i].run(argc - 2, argv + 2);
        return status ? status : finish_output();
    }
    usage_error(NULL, "unknown command '%s'", name);
}
