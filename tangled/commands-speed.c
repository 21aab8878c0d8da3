/* The commands that time the program: time-decode (the decoding chapter) and benchmark
   (the speed chapter). Generated from the book's chapters by notangle: edit the book. */
#include "cli.h"
#include "commands.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train.h"
/* <<commands-speed.c includes>> */
#include "data.h"
#include "decode.h"
#include <sys/resource.h>
#include "trainer.h"

/* <<commands-speed.c functions>> */
int run_time_decode(int argc, char **argv)
{
    Config config = config_default(11, 11, 2);
    int batch = 8, len = 10;
    bool use[2] = {true, true};   /* recompute, cached */
    /* <<Read the time-decode command's flags>> */
    int decoder = -1;   /* 0: recompute only, 1: cached only, -1: both */
    const Option options[] = {
        {"batch", OPTION_INT, &batch, 1, 4096, NULL, "N sources decoded together"},
        {"len", OPTION_INT, &len, 2, 4096, NULL, "N tokens in a source"},
        {"decoder", OPTION_CHOICE, &decoder, 0, 0, "recompute|cached",
         "the decoder to time (default: both)"},
        MODEL_SIZE_OPTIONS(config),
    };
    no_operands("time-decode", parse_options("time-decode", options,
                                             sizeof options / sizeof *options, argc, argv),
                argc, argv);
    if (decoder >= 0) use[0] = decoder == 0, use[1] = decoder == 1;
    check_model_size("time-decode", &config);
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
    const SourceBatch sources = source_batch(src, keep, batch, len, 0);   /* with its mask */
    /* <<Time the chosen decoders and compare their outputs>> */
    static const char *const names[2] = {"recompute", "cached"};
    double seconds[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        if (!use[k]) continue;
        long repeats = 0;
        const double start = seconds_now();
        do {
            if (k == 0) greedy_decode(&model, out[0], src, sources.keep, batch, len, len, 1);
            else greedy_decode_cached(&model, &cache, out[1], src, sources.keep, batch, len, len,
                                      1);
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
    free(src), free(keep);
    decoder_cache_free(&cache);
    model_free(&model);
    return status;
}

typedef struct {
    bool decoding;                   /* true: time greedy decoding, not training */
    int batch, len, steps, warmup_steps, sentences, warmup_sentences, threads;
} BenchmarkSettings;

static double peak_rss_mib(void)
{
#ifdef TRANSFORMER_BROWSER
    return NAN;   /* WASI's getrusage knows only the times: the peak is unknown */
#else
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_maxrss / 1024.0;   /* ru_maxrss is in KiB on Linux */
#endif
}

typedef void MatmulFunction(int m, int n, int k, float alpha, MatmulOperand a,
                            MatmulOperand b, float beta, float *c, int ldc);

static double replay_gflops(const MatmulLog *log, MatmulFunction *multiply)
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
            multiply(s->m, s->n, s->k, 1.0f,
                     (MatmulOperand){a, s->transpose_a ? s->m : s->k, s->transpose_a},
                     (MatmulOperand){b, s->transpose_b ? s->k : s->n, s->transpose_b},
                     s->accumulate ? 1.0f : 0.0f, c, s->n);
        }
        rounds++;
    } while ((elapsed = seconds_now() - start) < 1.0);
    free(a);
    return (double)rounds * matmul_log_flops(log) / elapsed * 1e-9;
}

static int benchmark_training(Config config, const BenchmarkSettings *s)
{
    const int batch = s->batch, len = s->len, vocab = config.tgt_vocab;
    config.max_len = len;
    const StepSettings settings = {.smoothing = 0.1f, .factor = 0.5, .warmup = 400,
                                   .pad = 0};
    const BatchBounds bounds = fixed_bounds(batch, len);
    Trainer trainer;
    trainer_setup(&trainer, config, 1, &bounds, &settings);
    Model *model = &trainer.model;
    int *full = xmalloc((size_t)batch * len * sizeof *full);          /* [batch][len] */
    MatmulLog log = {0};
    /* <<Warm up, logging the products of the first step>> */
    for (int step = 0; step < s->warmup_steps; step++) {
        copy_task_batch(full, batch, len, vocab, &trainer.progress.data_rng);
        batch_fill(&trainer.batch, full, full, 0);
        compute.log = step == 0 ? &log : NULL;
        train_step(model, &trainer.adam, &trainer.batch, &settings, &trainer.progress.dropout_rng);
        compute.log = NULL;
    }
    /* <<Time the training steps>> */
    double loss = 0.0;
    const double start = seconds_now();
    for (int step = 0; step < s->steps; step++) {
        copy_task_batch(full, batch, len, vocab, &trainer.progress.data_rng);
        batch_fill(&trainer.batch, full, full, 0);
        loss = train_step(model, &trainer.adam, &trainer.batch, &settings,
                          &trainer.progress.dropout_rng);
    }
    const double elapsed = seconds_now() - start;
    if (!isfinite(loss)) die("benchmark: the loss is %g", loss);
    const double seconds_per_step = elapsed / s->steps;
    const int tokens_per_step = batch * (len - 1);
    const double training_rss = peak_rss_mib();   /* before the replay's matrices */
    printf("c train tokens_per_s=%.1f step_ms=%.2f steps=%d tokens_per_step=%d "
           "peak_rss_mib=%.1f params=%zu threads=%d precision=%s flops_per_step=%.0f "
           "sgemm_gflops=%.2f", tokens_per_step / seconds_per_step,
           1e3 * seconds_per_step, s->steps, tokens_per_step, training_rss,
           model_parameter_count(model), s->threads, precision_name(compute.precision),
           matmul_log_flops(&log), replay_gflops(&log, matmul_blas));
    /* <<Print the rate of bfloat16 products on the logged shapes, where the processor has them>> */
    if (bf16_hardware()) {
        const Precision precision = compute.precision;
        compute.precision = PRECISION_BF16;
        printf(" bf16_gflops=%.2f", replay_gflops(&log, matmul));
        compute.precision = precision;
    }
    putchar('\n');
    matmul_log_free(&log);
    free(full);
    trainer_free(&trainer);
    return finish_output();
}

static int benchmark_decoding(Config config, const BenchmarkSettings *s)
{
    const int len = s->len;
    config.max_len = len;
    Model model;
    model_init(&model, config);
    Rng rng;
    rng_seed(&rng, 1, 1);
    model_initialize_parameters(&model, &rng);
    /* <<Round the loaded weights to bfloat16 once, if asked>> */
    if (compute.precision == PRECISION_BF16)
        bf16_weights_use(model.parameters.data, model.parameters.total);
    model_prepare(&model, 1, len, len);
    KVCache cache;
    decoder_cache_init(&cache, &model, 1, len, len);
    int *src = xmalloc(2 * (size_t)len * sizeof *src), *out = src + len;   /* [1][len] */
    uint8_t *keep = xmalloc((size_t)len);                                  /* [1][len] */
    double start = 0.0;
    for (int i = 0; i < s->warmup_sentences + s->sentences; i++) {
        if (i == s->warmup_sentences) start = seconds_now();
        copy_task_batch(src, 1, len, config.src_vocab, &rng);
        const SourceBatch source = source_batch(src, keep, 1, len, 0);   /* with its mask */
        greedy_decode_cached(&model, &cache, out, src, source.keep, 1, len, len, 1);
    }
    const double elapsed = seconds_now() - start;
    printf("c decode sentences_per_s=%.2f peak_rss_mib=%.1f threads=%d\n",
           s->sentences / elapsed, peak_rss_mib(), s->threads);
    free(src), free(keep);
    decoder_cache_free(&cache);
    model_free(&model);
    return finish_output();
}

int run_benchmark(int argc, char **argv)
{
    BenchmarkSettings s = {.batch = 80, .len = 10, .steps = 20, .warmup_steps = 3,
                           .sentences = 10, .warmup_sentences = 2, .threads = 1};
    Config config = config_default(11, 11, 2);
    /* <<Read the benchmark's flags>> */
    int vocab = config.tgt_vocab, precision = default_precision();
    const Option options[] = {
        {"vocab", OPTION_INT, &vocab, 3, 1000000, NULL, "V vocabulary size"},
        {"batch", OPTION_INT, &s.batch, 1, 4096, NULL, "B sequences in a batch"},
        {"len", OPTION_INT, &s.len, 2, 4096, NULL, "L symbols in a sequence"},
        {"steps", OPTION_INT, &s.steps, 1, 1000000, NULL, "S timed training steps"},
        {"warmup-steps", OPTION_INT, &s.warmup_steps, 1, 1000000, NULL,
         "W training steps before the timing"},
        {"sentences", OPTION_INT, &s.sentences, 1, 1000000, NULL, "K timed decodings"},
        {"warmup-sentences", OPTION_INT, &s.warmup_sentences, 0, 1000000, NULL,
         "W decodings before the timing"},
        {"threads", OPTION_INT, &s.threads, 1, MAX_THREADS, NULL, "T threads"},
        PRECISION_OPTION(precision),
        MODEL_SIZE_OPTIONS(config),
    };
    const int mode = parse_options("benchmark", options, sizeof options / sizeof *options, argc,
                                   argv);   /* the operand: train or decode */
    if (mode >= argc || (strcmp(argv[mode], "train") != 0 && strcmp(argv[mode], "decode") != 0))
        usage_error("benchmark", "expects 'train' or 'decode'");
    no_operands("benchmark", mode + 1, argc, argv);
    s.decoding = strcmp(argv[mode], "decode") == 0;
    check_model_size("benchmark", &config);
    set_precision("benchmark", precision);
    config.src_vocab = config.tgt_vocab = vocab;
    set_threads(s.threads);
    return s.decoding ? benchmark_decoding(config, &s) : benchmark_training(config, &s);
}
