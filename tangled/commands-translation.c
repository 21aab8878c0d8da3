/* The commands that use a trained translator: translate and attention (the translation chapter).
   Generated from the book's chapters by notangle: edit the book, not this file. */
#include "cli.h"
#include "commands.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
/* <<commands-translation.c includes>> */
#include <sys/stat.h>
#include <unistd.h>
#include "data.h"
#include "modelfile.h"
#include "translator.h"
#include "train.h"

/* <<commands-translation.c functions>> */
/* The translator that ships with the book: SHIPPED_MODEL in the current directory, else
   beside the program (its own directory found through /proc/self/exe). */
#define SHIPPED_MODEL "data/multi30k-de-en.safetensors"
static const char *shipped_model(void)
{
    static char path[4096];
    if (access(SHIPPED_MODEL, R_OK) == 0) return SHIPPED_MODEL;
    const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
    path[length > 0 ? length : 0] = '\0';
    char *slash = strrchr(path, '/');
    if (slash == NULL || (size_t)(slash - path) + sizeof SHIPPED_MODEL + 1 > sizeof path)
        return SHIPPED_MODEL;   /* not found: the error will name it */
    snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "%s", SHIPPED_MODEL);
    return access(path, R_OK) == 0 ? path : SHIPPED_MODEL;
}

/* The live line of translate: when it started, whether it is shown, the input's size. */
typedef struct {
    double start;
    bool shown;
    long long input_bytes;   /* 0: unknown (a pipe, a terminal) */
} TranslateProgress;

static TranslateProgress translate_progress_start(bool forced)
{
    struct stat status;
    const bool file = fstat(STDIN_FILENO, &status) == 0 && S_ISREG(status.st_mode);
    return (TranslateProgress){seconds_now(), forced || isatty(STDERR_FILENO),
                               file ? (long long)status.st_size : 0};
}

/* After each window: the lines done, lines a second and, for a file, the share and the ETA. */
static void translate_progress_show(const TranslateProgress *progress, long lines)
{
    if (!progress->shown) return;
    const double elapsed = seconds_now() - progress->start;
    fprintf(stderr, "\rtranslated %ld lines  %.1f lines/s", lines, lines / elapsed);
    const long position = ftell(stdin);
    if (progress->input_bytes > 0 && position > 0) {
        const double share = (double)position / (double)progress->input_bytes;
        const double eta = share < 1.0 ? elapsed / share * (1.0 - share) : 0.0;
        fprintf(stderr, "  %.0f%%  ETA %.0f %s", 100.0 * share, eta < 120 ? eta : eta / 60,
                eta < 120 ? "s" : "min");
    }
    fputs("   ", stderr);
    fflush(stderr);
}

/* The last line: the whole run's count and time, ending the live line. */
static void translate_progress_end(const TranslateProgress *progress, long lines)
{
    if (!progress->shown || lines == 0) return;
    const double elapsed = seconds_now() - progress->start;
    fprintf(stderr, "\rtranslated %ld lines in %.1f s (%.1f lines/s)%24s\n", lines, elapsed,
            lines / elapsed, "");
}

/* Load the model and both vocabularies of the model file at path, or die. */
static void load_model_file(const char *path, Model *model, Vocab *src_vocab,
                            Vocab *tgt_vocab)
{
    Safetensors file;
    const char *error = translation_model_load(path, model, src_vocab, tgt_vocab, &file);
    if (error) die("%s", error);
    safetensors_free(&file);
}

typedef struct {
    const char *model_path;
    TranslatorSettings settings;
    int precision;             /* the speed chapter */
    bool show_progress;
} TranslateFlags;

/* Read the translate command's flags. */
static TranslateFlags read_translate_flags(int argc, char **argv)
{
    TranslateFlags flags = {NULL, {4, TRANSLATOR_BATCH, 2.0, false}, PRECISION_FP32,
                            false};   /* alpha chosen on the validation set (Getting to 41) */
    TranslatorSettings *s = &flags.settings;
    const Option options[] = {
        {"model", OPTION_TEXT, &flags.model_path, 0, 0, NULL,
         "FILE the trained model (default: the book's, in data/)"},
        {"lowercase", OPTION_SWITCH, &s->lowercase, 0, 0, NULL,
         "print the model's lowercase English, without the capital letters"},
        {"beam", OPTION_INT, &s->beam_size, 1, 64, NULL, "K beam size (1: greedy decoding)"},
        {"batch", OPTION_INT, &s->batch_limit, 1, 1024, NULL, "N lines decoded together"},
        {"alpha", OPTION_REAL, &s->alpha, 0.0, 10.0, NULL,
         "A exponent of the length penalty (chosen on Multi30k's validation set)"},
        {"progress", OPTION_SWITCH, &flags.show_progress, 0, 0, NULL,
         "a live line on standard error even when it is not a terminal"},
        PRECISION_OPTION(flags.precision),
    };
    no_operands("translate", parse_options("translate", options,
                                           sizeof options / sizeof *options, argc, argv),
                argc, argv);
    set_precision("translate", flags.precision);
    if (!flags.model_path) flags.model_path = shipped_model();
    return flags;
}

/* <<Say which lines of the window were cut>> */
/* Warn of each line of the window that its fill cut to the tokenizer's limit. */
static void warn_of_cut_lines(const LineWindow *w)
{
    for (int i = 0; i < w->count; i++)
        if (w->cut_from[i])
            fprintf(stderr, "transformer: standard input:%ld: warning: a line of %ld bytes, "
                            "translated from its first %zu (at most %d)\n",
                    w->first + i, w->cut_from[i], w->sizes[i], TEXT_MAX_LINE_BYTES);
}

/* <<Stop at the line that cannot be translated>> */
/* Stop at the line after the translated ones, which the translator could not translate or
   whose translation it could not write. */
static _Noreturn void stop_at_line(const Translator *translator,
                                   const TranslateProgress *progress, long translated)
{
    const char *why = translator_error(translator);
    if (translator_output_failed(translator))
        die("translation of line %ld: %s", translated + 1, why);
    translate_progress_show(progress, translated);
    translate_progress_end(progress, translated);
    die("standard input:%ld: %s", translated + 1, why);
}

int run_translate(int argc, char **argv)
{
    const TranslateFlags flags = read_translate_flags(argc, argv);
    Error error;
    Translator *translator = translator_open(flags.model_path, &flags.settings, &error);
    if (!translator) die("%s", error.message);
    LineWindow window;
    line_window_init(&window, translator_window(translator));
    const char **out = xmalloc((size_t)window.capacity * sizeof *out);
    TranslateProgress progress = translate_progress_start(flags.show_progress);
    long translated = 0;   /* lines translated and printed */
    int count;
    while ((count = line_window_fill(&window, stdin, TEXT_MAX_LINE_BYTES)) > 0) {
        warn_of_cut_lines(&window);
        const int done = translator_translate(translator, (const char *const *)window.lines,
                                              window.sizes, count, out);
        for (int i = 0; i < done; i++) puts(out[i]);
        if (done < count) stop_at_line(translator, &progress, translated + done);
        translated += done;
        translate_progress_show(&progress, translated);
    }
    if (count < 0) die("cannot read standard input: %s", strerror(errno));
    translate_progress_end(&progress, translated);
    line_window_free(&window), free(out);
    translator_close(translator);
    return finish_output();
}

int run_average(int argc, char **argv)
{
    const char *output = NULL, *cased = NULL;
    bool bf16_weights = false;
    const Option options[] = {
        {"output", OPTION_TEXT, &output, 0, 0, NULL, "FILE the averaged model (required)"},
        {"bf16", OPTION_SWITCH, &bf16_weights, 0, 0, NULL,
         "store the weights as bfloat16: half the size, for shipping"},
        {"recaser", OPTION_TEXT, &cased, 0, 0, NULL,
         "ENGLISH learn the capital letters from this cased file (train.en)"},
    };
    const int first = parse_options("average", options, 3, argc, argv);
    const int count = argc - first;
    if (count < 1) usage_error("average", "expects one or more model files");
    if (!output) usage_error("average", "expects --output FILE");
    Error probe;
    if (safetensors_can_write(output, &probe)) die("%s", probe.message);
    Model mean, model;
    Vocab src_vocab, tgt_vocab, other_src, other_tgt;
    load_model_file(argv[first], &mean, &src_vocab, &tgt_vocab);
    const size_t n = mean.parameters.total;
    double *sum = xmalloc(n * sizeof *sum);
    for (size_t i = 0; i < n; i++) sum[i] = mean.parameters.data[i];
    for (int k = 1; k < count; k++) {
        load_model_file(argv[first + k], &model, &other_src, &other_tgt);
        /* <<Refuse a model of another configuration or vocabularies>> */
        bool same = true;
        for (int i = 0; same && i < config_key_count; i++) {   /* what a model file holds */
            const ConfigKey *key = &config_keys[i];
            same = !key->alias
                   || config_get(&mean.config, key) == config_get(&model.config, key);
        }
        for (int v = 0; same && v < src_vocab.size; v++)
            same = strcmp(src_vocab.token[v], other_src.token[v]) == 0;
        for (int v = 0; same && v < tgt_vocab.size; v++)
            same = strcmp(tgt_vocab.token[v], other_tgt.token[v]) == 0;
        if (!same)
            die("%s: not a model of the same run as %s (other sizes or vocabularies)",
                argv[first + k], argv[first]);
        for (size_t i = 0; i < n; i++) sum[i] += model.parameters.data[i];
        model_free(&model), vocab_free(&other_src), vocab_free(&other_tgt);
    }
    for (size_t i = 0; i < n; i++) mean.parameters.data[i] = (float)(sum[i] / count);
    if (cased) 
               /* <<Learn the capital letters anew from the cased file>> */
               {
                   TokenizedFile file;
                   if (tokenize_file(cased, (TextOptions){TEXT_ENGLISH, false}, &file)) die("%s", file.error.message);
                   recaser_free(&tgt_vocab.cases);
                   recaser_learn(&tgt_vocab.cases, &file, file.lines);
                   tokenized_file_free(&file);
               }
    const char *error = translation_model_save(output, &mean, &src_vocab, &tgt_vocab,
                                               bf16_weights, &probe);
    if (error) die("%s", error);
    printf("%s: the mean of %d model%s\n", output, count, count == 1 ? "" : "s");
    free(sum), model_free(&mean), vocab_free(&src_vocab), vocab_free(&tgt_vocab);
    return finish_output();
}

int run_calibration(int argc, char **argv)
{
    const char *model_path = NULL, *data_dir = "data/multi30k";
    int bins = 15, precision = PRECISION_FP32;   /* Guo and colleagues' 15 bins */
    const Option options[] = {
        {"model", OPTION_TEXT, &model_path, 0, 0, NULL,
         "FILE the trained model (default: the book's, in data/)"},
        {"data", OPTION_TEXT, &data_dir, 0, 0, NULL, "DIR the corpus (its val.de, val.en)"},
        {"bins", OPTION_INT, &bins, 1, CALIBRATION_MAX_BINS, NULL, "B bins of confidence"},
        PRECISION_OPTION(precision),
    };
    no_operands("calibration", parse_options("calibration", options,
                                             sizeof options / sizeof *options, argc, argv),
                argc, argv);
    set_precision("calibration", precision);
    Model model;
    Vocab src_vocab, tgt_vocab;
    load_model_file(model_path ? model_path : shipped_model(), &model, &src_vocab, &tgt_vocab);
    /* <<Number the validation pairs with the model's vocabularies>> */
    TokenizedFile files[2];
    static const char *const names[2] = {"val.de", "val.en"};
    for (int f = 0; f < 2; f++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", data_dir, names[f]);
        const TextOptions text = {f ? TEXT_ENGLISH : TEXT_GERMAN, true};   /* lowercased */
        const char *error = tokenize_file(path, text, &files[f]);
        if (error) die("%s", error);
    }
    if (files[0].lines != files[1].lines)
        die("%s/val.de has %ld lines but %s/val.en has %ld", data_dir, files[0].lines, data_dir,
            files[1].lines);
    Corpus pairs = corpus_number(&files[0], &files[1], &src_vocab, &tgt_vocab, 0,
                                 model.config.max_len);
    tokenized_file_free(&files[0]), tokenized_file_free(&files[1]);
    Calibration table = calibration_start(bins);
    /* <<Add the predictions of every validation batch to the table>> */
    BatchPlan plan;
    batch_plan(&plan, &pairs, 2000);
    const BatchBounds most = batch_plan_bounds(&plan, &plan);
    model_prepare_tokens(&model, most.pairs, most.src_len, most.tgt_len - 1, most.src_tokens,
                         most.tgt_tokens);
    Batch batch;
    batch_init(&batch, most.pairs, most.src_len, most.tgt_len - 1);
    for (int b = 0; b < plan.count; b++) {
        batch_fill_span(&batch, &pairs, &plan, &plan.spans[b], VOCAB_BLANK);
        const float *logprobs = model_forward(&model, &batch, NULL);
        calibration_add(&table, logprobs, batch.tgt_y, batch.batch * batch.tgt_len,
                        model.config.tgt_vocab, VOCAB_BLANK);
    }
    batch_free(&batch);
    /* <<Print the calibration table>> */
    long right = 0;
    double sure = 0.0;
    printf("# low high predictions confidence accuracy\n");
    for (int b = 0; b < bins; b++) {
        const long n = table.count[b];
        right += table.correct[b], sure += table.confidence[b];
        if (n) printf("%.4f %.4f %ld %.4f %.4f\n", (double)b / bins, (double)(b + 1) / bins, n,
                      table.confidence[b] / n, (double)table.correct[b] / n);
        else printf("%.4f %.4f 0 nan nan\n", (double)b / bins, (double)(b + 1) / bins);
    }
    const long n = calibration_predictions(&table);
    printf("# predictions %ld\n# accuracy %.4f\n# confidence %.4f\n", n, (double)right / n,
           sure / n);
    printf("# nll %.4f\n# ece %.4f\n", -table.log_likelihood / n, calibration_error(&table));
    batch_plan_free(&plan), corpus_free(&pairs);
    vocab_free(&src_vocab), vocab_free(&tgt_vocab), model_free(&model);
    return finish_output();
}

/* <<Translate the sentence on standard input greedily>> */
/* The sentence on standard input and its greedy translation, as a batch of one pair. */
static Batch sentence_pair(Translator *translator)
{
    LineReader line = {0};
    const long length = read_line(stdin, &line);
    if (length < 0 && ferror(stdin)) die("cannot read standard input: %s", strerror(errno));
    if (length < 0) die("standard input: no sentence to translate");
    Batch pair;
    const char *error = translator_pair(translator, line.text, (size_t)length, &pair);
    if (error) die("standard input:1: %s", error);
    if (read_line(stdin, &line) >= 0)
        die("standard input:2: a map is of one sentence; give attention one line");
    free(line.text);
    return pair;
}

int run_attention(int argc, char **argv)
{
    static const char *const kinds[3] = {"encoder", "decoder", "cross"};
    const char *model_path = NULL, *head_text = "mean";   /* the shipped translator */
    int kind_index = 2, layer = -1;   /* -1: the last layer */
    const Option options[] = {
        {"model", OPTION_TEXT, &model_path, 0, 0, NULL,
         "FILE the trained model (default: the book's, in data/)"},
        {"kind", OPTION_CHOICE, &kind_index, 0, 0, "encoder|decoder|cross",
         "which attention"},
        {"layer", OPTION_INT, &layer, 0, 63, NULL, "L layer (default: the last)"},
        {"head", OPTION_TEXT, &head_text, 0, 0, NULL, "H head, from 0, mean or all"},
    };
    no_operands("attention", parse_options("attention", options,
                                           sizeof options / sizeof *options, argc, argv),
                argc, argv);
    const char *kind = kinds[kind_index];
    const int head = strcmp(head_text, "mean") == 0 ? -1   /* the mean over heads */
                     : strcmp(head_text, "all") == 0 ? -2  /* every head in turn */
                     : (int)parse_integer("attention", "--head", head_text, 0, 63);
    Error error;
    Translator *translator = translator_open(model_path ? model_path : shipped_model(),
                                             &(TranslatorSettings){1, 1, 0.6, false}, &error);
    if (!translator) die("%s", error.message);
    const Config *c = &translator_model(translator)->config;
    if (layer < 0) layer = c->layers - 1;
    if (layer >= c->layers) usage_error("attention", "--layer: the model has %d", c->layers);
    if (head >= c->heads) usage_error("attention", "--head: the model has %d", c->heads);
    Batch pair = sentence_pair(translator);
    /* <<Run the model on the pair and print the chosen weights>> */
    const int src_len = pair.src_len, tgt_len = pair.tgt_len;
    Model *model = translator_model(translator);
    model_prepare(model, 1, c->max_len, c->max_len);
    model_forward(model, &pair, NULL);
    const bool encoder = strcmp(kind, "encoder") == 0, cross = strcmp(kind, "cross") == 0;
    const AttentionActs *acts = encoder ? &model->encoder_acts[layer].self_attn
                                : cross ? &model->decoder_acts[layer].src_attn
                                        : &model->decoder_acts[layer].self_attn;
    const int rows = encoder ? src_len : tgt_len, cols = encoder || cross ? src_len : tgt_len;
    const int *row_tokens = encoder ? pair.src : pair.tgt;
    const int *col_tokens = encoder || cross ? pair.src : pair.tgt;
    const Vocab *row_vocab = translator_vocab(translator, !encoder);
    const Vocab *col_vocab = translator_vocab(translator, !(encoder || cross));
    const float *probs = model_activation(model, acts->probs);   /* [h][rows][cols] */
    const int first = head == -2 ? 0 : head, last = head == -2 ? c->heads - 1 : head;
    for (int shown = first; shown <= last; shown++) {   /* one head, the mean (-1), or each */
        if (shown > first) printf("\n\n");   /* gnuplot's next block */
        /* <<Print the weights of head shown (the mean if $-1$)>> */
        char head_name[16] = "mean";   /* %.0d would hide a 0 */
        if (shown >= 0) snprintf(head_name, sizeof head_name, "%d", shown);
        printf("# %s attention, layer %d, head %s: rows are queries, columns keys\n",
               kind, layer, head_name);
        printf("-");
        for (int j = 0; j < cols; j++) printf(" %s", vocab_token(col_vocab, col_tokens[j]));
        putchar('\n');
        for (int i = 0; i < rows; i++) {
            printf("%s", vocab_token(row_vocab, row_tokens[i]));
            for (int j = 0; j < cols; j++) {
                double weight = 0.0;
                for (int h = 0; h < c->heads; h++)
                    if (shown < 0 || h == shown)
                        weight += probs[((size_t)h * rows + i) * cols + j];
                printf(" %.5f", shown < 0 ? weight / c->heads : weight);
            }
            putchar('\n');
        }
    }
    batch_free(&pair);
    translator_close(translator);
    return finish_output();
}

/* One English line of standard input recased into out (blank: ""). NULL, or the reason. */
static const char *recase_text(const Recaser *r, const char *line, size_t length,
                               TextLine *tokens, TextLine *out)
{
    if (tokenize_line((TextOptions){TEXT_ENGLISH, true}, line, length, tokens))
        return tokens->blank ? (out->text[0] = '\0', NULL) : tokens->error.message;
    recase_line(r, tokens->text);
    return detokenize_line(TEXT_ENGLISH, tokens->text, strlen(tokens->text), out);
}

int run_recase(int argc, char **argv)
{
    const char *model_path = NULL;
    const Option options[] = {
        {"model", OPTION_TEXT, &model_path, 0, 0, NULL,
         "FILE the model whose table recases (default: the book's, in data/)"},
    };
    no_operands("recase", parse_options("recase", options, 1, argc, argv), argc, argv);
    Model model;
    Vocab src_vocab, tgt_vocab;
    load_model_file(model_path ? model_path : shipped_model(), &model, &src_vocab, &tgt_vocab);
    if (tgt_vocab.cases.count == 0)
        die("%s: the model file has no recaser", model_path ? model_path : shipped_model());
    static TextLine tokens, out;
    LineReader line = {0};
    for (long length; (length = read_line(stdin, &line)) >= 0;) {
        const char *problem = recase_text(&tgt_vocab.cases, line.text, (size_t)length,
                                          &tokens, &out);
        if (problem) die("standard input:%ld: %s", line.number, problem);
        puts(out.text);
    }
    if (ferror(stdin)) die("cannot read standard input: %s", strerror(errno));
    free(line.text), model_free(&model), vocab_free(&src_vocab), vocab_free(&tgt_vocab);
    return finish_output();
}
