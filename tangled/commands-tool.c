/* The commands of the first chapters: figure-data, demo, random, time-matmul, gradcheck.
   Generated from the book's chapters by notangle: edit the book, not this file. */
#include "cli.h"
#include "commands.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "figure.h"
/* <<commands-tool.c includes>> */
#include <getopt.h>
#include "gradcheck.h"

/* <<commands-tool.c functions>> */
int run_figure_data(int argc, char **argv)
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
    FigureValue value[FIGURE_MAX_OPTIONS];
    Error problem;
    if (!figure_defaults(kind, value, &problem))
        usage_error("figure-data", "%s", problem.message);
    /* <<Read the figure's options>> */
    struct option table[FIGURE_MAX_OPTIONS + 1];
    bool given[FIGURE_MAX_OPTIONS] = {false};
    int count = 0;
    for (; count < FIGURE_MAX_OPTIONS && kind->options[count].flag; count++)
        table[count] = (struct option){kind->options[count].flag + 2, required_argument, NULL,
                                       count};   /* + 2: the name without "--" */
    table[count] = (struct option){NULL, 0, NULL, 0};
    char **arguments = argv + a - 1;   /* arguments[0]: the figure's last word */
    opterr = 0, optind = 0;
    int found;
    while ((found = getopt_long(argc - a + 1, arguments, ":", table, NULL)) != -1) {
        if (found == '?') usage_error("figure-data", "unknown option '%s'", arguments[optind - 1]);
        const int o = found == ':' ? optopt : found;
        if (!figure_option_read(&kind->options[o], found == ':' ? NULL : optarg, !given[o],
                                &value[o], &problem))
            usage_error("figure-data", "%s", problem.message);
        given[o] = true;
    }
    no_operands("figure-data", a + optind - 1, argc, argv);
    const char *refused = figure_emit(stdout, kind, value);
    if (refused) usage_error("figure-data", "%s", refused);
    return 0;
}

void print_figure_data_help(FILE *out)
{
    fprintf(out, "usage: transformer figure-data FIGURE [OPTIONS] > FILE.dat\n\n"
                 "Print the numbers behind one figure of the book, as gnuplot reads them;\n"
                 "the defaults are the book's settings. `make figure NAME=... ARGS=...'\n"
                 "draws a figure with other settings.\n\n"
                 "figures:\n");
    static const char *const forms[] = {"N", "X", "N,N,...", ""};
    for (int k = 0; k < figure_kind_count; k++) {
        fprintf(out, "  %-16s %s\n", figure_kinds[k].name, figure_kinds[k].summary);
        for (int o = 0; o < FIGURE_MAX_OPTIONS && figure_kinds[k].options[o].flag; o++) {
            const FigureOption *option = &figure_kinds[k].options[o];
            fprintf(out, "      %s %s", option->flag, forms[option->kind]);
            if (option->kind == FIGURE_RECORD) {   /* --curve d=X,f=X,w=X */
                for (const char *key = option->keys; *key; key++)
                    fprintf(out, "%s%c=X", key == option->keys ? "" : ",", *key);
                fprintf(out, "   %s\n          (default %s)\n", option->help, option->fallback);
            } else {
                fprintf(out, "   %s (%.10g to %.10g, default %s)\n", option->help,
                        option->low, option->high, option->fallback);
            }
        }
    }
}

int run_demo(int argc, char **argv)
{
    no_operands("demo", parse_options("demo", NULL, 0, argc, argv), argc, argv);
    printf("The Annotated Transformer in C, version " TRANSFORMER_VERSION
           ": the data of the book's figures\n");
    for (int k = 0; k < figure_kind_count; k++) {
        FigureValue value[FIGURE_MAX_OPTIONS];
        Error problem;
        if (!figure_defaults(&figure_kinds[k], value, &problem))
            die("figure '%s': %s", figure_kinds[k].name, problem.message);
        printf("\n%s: %s\n", figure_kinds[k].name, figure_kinds[k].summary);
        figure_summary(stdout, &figure_kinds[k], value);
    }
    return 0;
}

int run_random(int argc, char **argv)
{
    long seed = 42, stream = 54, count = 6;
    enum { BITS, UNIFORM, NORMAL };
    int kind = UNIFORM;
    const Option options[] = {
        {"seed", OPTION_LONG, &seed, 0, 0x1p63, NULL,
         "S seed of the generator"},     /* 2^63: up to LONG_MAX */
        {"stream", OPTION_LONG, &stream, 0, 0x1p63, NULL, "N stream of the generator"},
        {"count", OPTION_LONG, &count, 1, 100000000, NULL, "N numbers to print"},
        {"bits", OPTION_SET, &kind, BITS, 0, NULL, "print 32-bit outputs"},
        {"uniform", OPTION_SET, &kind, UNIFORM, 0, NULL,
         "print uniform numbers in [0,1) (the default)"},
        {"normal", OPTION_SET, &kind, NORMAL, 0, NULL, "print standard normal numbers"},
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

int run_time_matmul(int argc, char **argv)
{
    int n = 256, choice = compute.matmul;   /* the choices in MatmulKernel's order */
    const Option options[] = {
        {"size", OPTION_INT, &n, 1, 8192, NULL, "N rows and columns of the matrices"},
        {"kernel", OPTION_CHOICE, &choice, 0, 0, "blas|reference", "the kernel to time"},
    };
    no_operands("time-matmul", parse_options("time-matmul", options,
                                             sizeof options / sizeof *options, argc, argv),
                argc, argv);
    const MatmulKernel kernel = (MatmulKernel)choice;
    /* <<Fill two random matrices and time their product>> */
    size_t size = (size_t)n * n;
    float *a = xmalloc(3 * size * sizeof(float)), *b = a + size, *c = b + size;
    Rng rng;
    rng_seed(&rng, 1, 0);
    for (size_t i = 0; i < 2 * size; i++) a[i] = rng_uniform_between(&rng, -1, 1);
    compute.matmul = kernel;
    long repeats = 0;
    double start = seconds_now(), elapsed;
    do {
        matmul(n, n, n, 1.0f, matrix(a, n), matrix(b, n), 0.0f, c, n);
        repeats++;
    } while ((elapsed = seconds_now() - start) < 0.1);
    double seconds = elapsed / (double)repeats;
    double flops = 2.0 * n * n * (double)n;
    printf("n=%d kernel=%s seconds=%.6g GFLOP/s=%.3f\n", n,
           kernel == MATMUL_BLAS ? "blas" : "reference", seconds, flops / seconds / 1e9);
    free(a);
    return 0;
}

int run_gradcheck(int argc, char **argv)
{
    const char *layer = "all";
    int samples = 20;
    float step = 1e-2f;
    const Option options[] = {
        {"layer", OPTION_TEXT, &layer, 0, 0, NULL,
         "NAME what to check: all, model, or one layer"},
        {"samples", OPTION_INT, &samples, 1, 100000, NULL, "N entries checked in each tensor"},
        {"step", OPTION_FLOAT, &step, 1e-6, 0.5, NULL, "H step of the central differences"},
    };
    no_operands("gradcheck", parse_options("gradcheck", options,
                                           sizeof options / sizeof *options, argc, argv),
                argc, argv);
    /* <<Run the chosen checks and report the worst error>> */
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
        for (int v = 0; v < 5; v++) {   /* v = 4: pre-norm, standard, everything shared */
            printf("model, %s-norm, %s layer norm%s:\n", v & 1 ? "post" : "pre",
                   v & 2 ? "annotated" : "standard",
                   v == 0 ? ", tied generator" : v == 4 ? ", one table for all three" : "");
            worst_model = fmax(worst_model,
                               gradcheck_model(v & 1 ? NORM_POST : NORM_PRE,
                                               v & 2 ? LAYERNORM_ANNOTATED : LAYERNORM_STANDARD,
                                               v == 0 ? 1 : v == 4 ? 2 : 0, samples, step,
                                               stdout));
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
}
