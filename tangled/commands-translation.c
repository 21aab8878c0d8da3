#line 140 "book/program.nw"
/* The commands that use a trained translator: translate and attention (the translation chapter).
   Generated from the book's chapters by notangle: edit the book, not this file. */
#include "cli.h"
#include "commands.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
/* <<commands-translation.c includes>> */
#line 22 "book/translate-commands.nw"
#include <sys/stat.h>
#include <unistd.h>
#include "beam.h"
#include "data.h"
#include "modelfile.h"
/* <<commands-translation.c functions>> */
#line 43 "book/translate-commands.nw"
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
#line 70 "book/translate-commands.nw"
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
#line 115 "book/translate-commands.nw"
/* Load the translator saved at path (weights and both vocabularies), or die. */
static void load_translator(const char *path, Model *model, Vocab *src_vocab,
                            Vocab *tgt_vocab)
{
    Safetensors file;
    const char *error = translation_model_load(path, model, src_vocab, tgt_vocab, &file);
    if (error) die("%s", error);
    safetensors_free(&file);
}

int run_translate(int argc, char **argv)
{
    const char *model_path = NULL;   /* the shipped translator */
    int beam_size = 4, batch_limit = 32, precision = PRECISION_FP32;   /* the speed chapter */
    double alpha = 2.0;   /* chosen on the validation set (Getting to 41); the paper's: 0.6 */
    bool show_progress = false;
    const Option options[] = {
        {"model", OPTION_TEXT, &model_path, 0, 0, NULL,
         "FILE the trained model (default: the book's, in data/)"},
        {"beam", OPTION_INT, &beam_size, 1, 64, NULL, "K beam size (1: greedy decoding)"},
        {"batch", OPTION_INT, &batch_limit, 1, 1024, NULL, "N lines decoded together"},
        {"alpha", OPTION_REAL, &alpha, 0.0, 10.0, NULL,
         "A exponent of the length penalty (chosen on Multi30k's validation set)"},
        {"progress", OPTION_SWITCH, &show_progress, 0, 0, NULL,
         "a live line on standard error even when it is not a terminal"},
        PRECISION_OPTION(precision),
    };
    no_operands("translate", parse_options("translate", options,
                                           sizeof options / sizeof *options, argc, argv),
                argc, argv);
    set_precision("translate", precision);
    Model model;
    Vocab src_vocab, tgt_vocab;
    load_translator(model_path ? model_path : shipped_model(), &model, &src_vocab, &tgt_vocab);
    /* <<Round the loaded weights to bfloat16 once, if asked>> */
#line 2067 "book/fast.nw"
    if (compute.precision == PRECISION_BF16)
        bf16_weights_use(model.parameters.data, model.parameters.total);
#line 150 "book/translate-commands.nw"
    /* <<Translate standard input in batches>> */
#line 169 "book/translate-commands.nw"
    const int max_len = model.config.max_len, vocab = model.config.tgt_vocab;
    const int window = 4 * batch_limit;   /* lines read, then sorted by length */
    model_prepare(&model, batch_limit, max_len, 1);
    KVCache cache;
    decoder_cache_init(&cache, &model, batch_limit * beam_size, max_len, max_len - 1);
    Beam beam;
    beam_init(&beam, batch_limit, beam_size, max_len, vocab);
    DecodeSettings settings = decode_settings(VOCAB_START, VOCAB_END, VOCAB_BLANK, max_len);
    settings.alpha = (float)alpha;
    int *numbered = xmalloc((size_t)window * max_len * sizeof *numbered);   /* [window][max_len] */
    int *lengths_in = xmalloc((size_t)window * sizeof *lengths_in);
    int *order = xmalloc((size_t)window * sizeof *order);       /* the window, by length */
    int *starts = xmalloc((size_t)(max_len + 2) * sizeof *starts);
    int *src = xmalloc((size_t)batch_limit * max_len * sizeof *src);
    uint8_t *src_keep = xmalloc((size_t)batch_limit * max_len);
    int *batch_out = xmalloc((size_t)batch_limit * max_len * sizeof *batch_out);
    int *batch_lengths = xmalloc((size_t)batch_limit * sizeof *batch_lengths);
    int *out = xmalloc((size_t)window * max_len * sizeof *out);   /* [window][max_len] */
    int *lengths = xmalloc((size_t)window * sizeof *lengths);
    static TextLine tokens, text;
    LineReader line = {0};
    char joined[TEXT_MAX_TOKENIZED_BYTES + 1];
    const TextOptions german = {TEXT_GERMAN, true};
    long line_number = 0;
    char refusal[TEXT_ERROR_MAX + 64] = "";   /* why reading stopped at an unusable line */
    TranslateProgress progress = translate_progress_start(show_progress);
    bool more = true;
    while (more) {
        int count = 0;
        /* <<Read, tokenize and number up to a window of lines>> */
#line 244 "book/translate-commands.nw"
        while (count < window) {
            const long length = read_line(stdin, &line);
            if (length < 0) {
                if (ferror(stdin)) die("cannot read standard input: %s", strerror(errno));
                more = false;
                break;
            }
            line_number = line.number;
            const char *error = tokenize_line(german, line.text, (size_t)length, &tokens);
            if (error && tokens.blank) {
                lengths_in[count++] = 0;   /* a blank line, kept */
                continue;
            }
            if (error) {   /* the lines before it are still translated and printed, then it stops */
                snprintf(refusal, sizeof refusal, "standard input:%ld: %s", line_number, error);
                more = false;
                break;
            }
            lengths_in[count] = number_sentence(numbered + (size_t)count * max_len, tokens.text,
                                                &src_vocab, max_len);
            count++;
        }
#line 199 "book/translate-commands.nw"
        if (count == 0) break;
        /* <<Order the window's lines by length>> */
#line 273 "book/translate-commands.nw"
        memset(starts, 0, (size_t)(max_len + 2) * sizeof *starts);
        for (int w = 0; w < count; w++) starts[lengths_in[w] + 1]++;
        for (int n = 1; n <= max_len + 1; n++) starts[n] += starts[n - 1];
        for (int w = 0; w < count; w++) order[starts[lengths_in[w]]++] = w;
#line 201 "book/translate-commands.nw"
        int blanks = 0;   /* the blank lines come first in the order: nothing to decode */
        while (blanks < count && lengths_in[order[blanks]] == 0) lengths[order[blanks++]] = 0;
        for (int first = blanks; first < count; first += batch_limit) {
            const int batch = count - first < batch_limit ? count - first : batch_limit;
            int src_len = 1;
            /* <<Gather the batch's sources, padded to the longest>> */
#line 282 "book/translate-commands.nw"
            for (int b = 0; b < batch; b++)
                if (lengths_in[order[first + b]] > src_len) src_len = lengths_in[order[first + b]];
            for (int b = 0; b < batch; b++) {
                const int w = order[first + b];
                int *row = src + (size_t)b * src_len;
                memcpy(row, numbered + (size_t)w * max_len, (size_t)lengths_in[w] * sizeof *row);
                for (int i = lengths_in[w]; i < src_len; i++) row[i] = VOCAB_BLANK;
            }
#line 207 "book/translate-commands.nw"
            padding_mask(src_keep, src, batch, src_len, VOCAB_BLANK);
            const SourceBatch sources = {src, src_keep, batch, src_len};
            if (beam_size == 1)
                greedy_translate(&model, &cache, batch_out, batch_lengths, NULL, &sources,
                                 &settings);
            else
                beam_search(&model, &cache, &beam, batch_out, batch_lengths, NULL, &sources,
                            &settings);
            for (int b = 0; b < batch; b++) {   /* each output to its line's place */
                const int w = order[first + b];
                memcpy(out + (size_t)w * max_len, batch_out + (size_t)b * max_len,
                       (size_t)max_len * sizeof *out);
                lengths[w] = batch_lengths[b];
            }
        }
        /* <<Turn each output into text and print it>> */
#line 299 "book/translate-commands.nw"
        for (int b = 0; b < count; b++) {
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
            if (tgt_vocab.subwords) used = vocab_join_subwords(joined, used);
            if (used == 0) {   /* a blank line, or the model ended at once: still one line */
                putchar('\n');
                continue;
            }
            if (detokenize_line(TEXT_ENGLISH, joined, used, &text))
                die("translation of line %ld: %s", line_number - count + b + 1, text.error);
            puts(text.text);
        }
#line 223 "book/translate-commands.nw"
        translate_progress_show(&progress, line_number - (*refusal != '\0'));
    }
    translate_progress_end(&progress, line_number - (*refusal != '\0'));
    if (*refusal) die("%s", refusal);
    free(numbered), free(lengths_in), free(order), free(starts), free(src), free(src_keep);
    free(batch_out), free(batch_lengths), free(out), free(lengths), free(line.text);
    beam_free(&beam);
    decoder_cache_free(&cache);
#line 151 "book/translate-commands.nw"
    vocab_free(&src_vocab), vocab_free(&tgt_vocab);
    model_free(&model);
    return finish_output();
}
#line 996 "book/translate.nw"
int run_average(int argc, char **argv)
{
    const char *output = NULL;
    bool bf16_weights = false;
    const Option options[] = {
        {"output", OPTION_TEXT, &output, 0, 0, NULL, "FILE the averaged model (required)"},
        {"bf16", OPTION_SWITCH, &bf16_weights, 0, 0, NULL,
         "store the weights as bfloat16: half the size, for shipping"},
    };
    const int first = parse_options("average", options, 2, argc, argv);
    const int count = argc - first;
    if (count < 1) usage_error("average", "expects one or more model files");
    if (!output) usage_error("average", "expects --output FILE");
    Safetensors probe;
    if (safetensors_can_write(output, &probe)) die("%s", probe.error);
    Model mean, model;
    Vocab src_vocab, tgt_vocab, other_src, other_tgt;
    load_translator(argv[first], &mean, &src_vocab, &tgt_vocab);
    const size_t n = mean.parameters.total;
    double *sum = xmalloc(n * sizeof *sum);
    for (size_t i = 0; i < n; i++) sum[i] = mean.parameters.data[i];
    for (int k = 1; k < count; k++) {
        load_translator(argv[first + k], &model, &other_src, &other_tgt);
        /* <<Refuse a model of another configuration or vocabularies>> */
#line 1037 "book/translate.nw"
        const Config *a = &mean.config, *b = &model.config;
        bool same = a->src_vocab == b->src_vocab && a->tgt_vocab == b->tgt_vocab
                    && a->layers == b->layers && a->d_model == b->d_model && a->d_ff == b->d_ff
                    && a->heads == b->heads && a->max_len == b->max_len && a->norm == b->norm
                    && a->layernorm == b->layernorm && a->tie_generator == b->tie_generator
                    && a->tie_source == b->tie_source;
        for (int v = 0; same && v < src_vocab.size; v++)
            same = strcmp(src_vocab.token[v], other_src.token[v]) == 0;
        for (int v = 0; same && v < tgt_vocab.size; v++)
            same = strcmp(tgt_vocab.token[v], other_tgt.token[v]) == 0;
        if (!same)
            die("%s: not a model of the same run as %s (other sizes or vocabularies)",
                argv[first + k], argv[first]);
#line 1020 "book/translate.nw"
        for (size_t i = 0; i < n; i++) sum[i] += model.parameters.data[i];
        model_free(&model), vocab_free(&other_src), vocab_free(&other_tgt);
    }
    for (size_t i = 0; i < n; i++) mean.parameters.data[i] = (float)(sum[i] / count);
    const char *error = translation_model_save(output, &mean, &src_vocab, &tgt_vocab,
                                               bf16_weights, &probe);
    if (error) die("%s", error);
    printf("%s: the mean of %d model%s\n", output, count, count == 1 ? "" : "s");
    free(sum), model_free(&mean), vocab_free(&src_vocab), vocab_free(&tgt_vocab);
    return finish_output();
}
#line 1363 "book/translate.nw"
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
        {"head", OPTION_TEXT, &head_text, 0, 0, NULL, "H head, from 0, or mean"},
    };
    no_operands("attention", parse_options("attention", options,
                                           sizeof options / sizeof *options, argc, argv),
                argc, argv);
    const char *kind = kinds[kind_index];
    const int head = strcmp(head_text, "mean") == 0   /* -1: the mean over heads */
                     ? -1 : (int)parse_integer("attention", "--head", head_text, 0, 63);
    Model model;
    Vocab src_vocab, tgt_vocab;
    load_translator(model_path ? model_path : shipped_model(), &model, &src_vocab, &tgt_vocab);
    const Config *c = &model.config;
    if (layer < 0) layer = c->layers - 1;
    if (layer >= c->layers) usage_error("attention", "--layer: the model has %d", c->layers);
    if (head >= c->heads) usage_error("attention", "--head: the model has %d", c->heads);
    /* <<Translate the sentence on standard input greedily>> */
#line 1402 "book/translate.nw"
    static TextLine tokens;
    LineReader line = {0};
    const long length = read_line(stdin, &line);
    if (length < 0 && ferror(stdin)) die("cannot read standard input: %s", strerror(errno));
    if (length < 0) die("standard input: no sentence to translate");
    if (tokenize_line((TextOptions){TEXT_GERMAN, true}, line.text, (size_t)length, &tokens))
        die("standard input:1: %s", tokens.error);
    if (read_line(stdin, &line) >= 0)
        die("standard input:2: a map is of one sentence; give attention one line");
    free(line.text);
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
    greedy_translate(&model, &cache, out, &out_len, NULL,
                     &(SourceBatch){src, keep, 1, src_len}, &settings);
    decoder_cache_free(&cache);
#line 1390 "book/translate.nw"
    /* <<Run the model on the pair and print the chosen weights>> */
#line 1431 "book/translate.nw"
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
    char head_name[16] = "mean";
    if (head >= 0) snprintf(head_name, sizeof head_name, "%d", head);   /* %.0d hides a 0 */
    printf("# %s attention, layer %d, head %s: rows are queries, columns keys\n", kind, layer,
           head_name);
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
#line 1391 "book/translate.nw"
    vocab_free(&src_vocab), vocab_free(&tgt_vocab);
    model_free(&model);
    return finish_output();
}
