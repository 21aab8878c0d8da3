#line 548 "book/program.nw"
/* The data behind the book's figures -- generated from the book's chapters by notangle:
   edit the book, not this file. */
#include "figure.h"
#include <stdlib.h>
#include <string.h>
/* <<figure.c includes>> */
#line 187 "book/training.nw"
#include <math.h>
#include "train.h"
/* <<figure.c definitions>> */
#line 275 "book/masks.nw"
static void print_flags(FILE *out, const uint8_t *keep, int rows, int cols)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            fprintf(out, "%d%c", keep[(size_t)i * cols + j], j + 1 < cols ? ' ' : '\n');
}

#line 285 "book/masks.nw"
void figure_mask_subsequent(FILE *out, int size)
{
    ENSURE(size >= 1, "subsequent mask of size %d", size);
    uint8_t *keep = xmalloc((size_t)size * size);
    subsequent_mask(keep, size);
    fprintf(out, "# subsequent mask, T = %d: row i = query, column j = key, "
                 "1 = may attend\n", size);
    print_flags(out, keep, size, size);
    free(keep);
}
#line 302 "book/masks.nw"
enum { EXAMPLE_BATCH = 3, EXAMPLE_TARGET_LEN = 9, EXAMPLE_PAD = 2 };
static const char *const example_vocabulary[] = {
    "<s>", "</s>", "<blank>", "<unk>", "a", "dog", "runs", "on", "the", "beach", ".",
    "two", "men", "talk", "children", "play",
};
/* Whole target sentences, <s> ... </s>, padded with <blank> to the longest. */
static const int example_targets[EXAMPLE_BATCH][EXAMPLE_TARGET_LEN] = {
    {0, 4, 5, 6, 7, 8, 9, 10, 1},       /* <s> a dog runs on the beach . </s> */
    {0, 11, 12, 13, 1, 2, 2, 2, 2},     /* <s> two men talk </s>              */
    {0, 14, 15, 10, 1, 2, 2, 2, 2},     /* <s> children play . </s>           */
};
#line 321 "book/masks.nw"
void figure_mask_batch(FILE *out, int sentence)
{
    enum { LEN = EXAMPLE_TARGET_LEN - 1 };
    ENSURE(sentence >= 1 && sentence <= EXAMPLE_BATCH, "sentence %d", sentence);
    int tokens[EXAMPLE_BATCH][LEN];
    uint8_t keep[EXAMPLE_BATCH][LEN][LEN];
    for (int b = 0; b < EXAMPLE_BATCH; b++)
        for (int t = 0; t < LEN; t++) tokens[b][t] = example_targets[b][t];
    target_mask(&keep[0][0][0], &tokens[0][0], EXAMPLE_BATCH, LEN, EXAMPLE_PAD);

    const int *words = tokens[sentence - 1];
    fprintf(out, "# target mask of sentence %d of %d (padding token %s): row = query, "
                 "column = key, 1 = may attend\nkey", sentence, EXAMPLE_BATCH,
            example_vocabulary[EXAMPLE_PAD]);
    for (int j = 0; j < LEN; j++) fprintf(out, " %s", example_vocabulary[words[j]]);
    fputc('\n', out);
    for (int i = 0; i < LEN; i++) {
        fprintf(out, "%s", example_vocabulary[words[i]]);
        for (int j = 0; j < LEN; j++) fprintf(out, " %d", keep[sentence - 1][i][j]);
        fputc('\n', out);
    }
}
#line 356 "book/masks.nw"
static const char *emit_mask_subsequent(FILE *out, const int *option)
{
    figure_mask_subsequent(out, option[0]);
    return NULL;
}

static const char *emit_mask_batch(FILE *out, const int *option)
{
    figure_mask_batch(out, option[0]);
    return NULL;
}
#line 642 "book/program.nw"
/* Which part of the model a parameter belongs to, from its PyTorch name. */
typedef enum { PART_ATTENTION, PART_FEED_FORWARD, PART_NORM, PART_EMBEDDING,
               PART_GENERATOR, PART_COUNT } ModelPart;

static ModelPart model_part(const char *name)
{
    if (strstr(name, "attn.")) return PART_ATTENTION;
    if (strstr(name, "feed_forward.")) return PART_FEED_FORWARD;
    if (strstr(name, "embed.")) return PART_EMBEDDING;
    if (strstr(name, "generator.")) return PART_GENERATOR;
    return PART_NORM;   /* a_2 and b_2 of a sublayer's or a stack's norm */
}

/* The sum of the sizes of the parameter views whose names start with prefix. */
static size_t parameters_under(const Model *model, const char *prefix)
{
    size_t count = 0;
    for (int i = 0; i < model->parameters.count; i++)
        if (strncmp(model->parameters.views[i].name, prefix, strlen(prefix)) == 0)
            count += model->parameters.views[i].size;
    return count;
}
#line 670 "book/program.nw"
static void print_count_macro(FILE *out, const char *name, size_t count)
{
    char digits[32], grouped[96] = "";
    int n = snprintf(digits, sizeof digits, "%zu", count);
    for (int i = 0; i < n; i++) {
        size_t at = strlen(grouped);
        if (i > 0 && (n - i) % 3 == 0) strcpy(grouped + at, "\\,"), at += 2;
        grouped[at] = digits[i], grouped[at + 1] = '\0';
    }
    fprintf(out, "\\newcommand{\\arch%s}{%s}\n", name, grouped);
}
#line 688 "book/program.nw"
static const char *emit_architecture(FILE *out, const int *option)
{
    Config config = config_default(option[4], option[5], option[0]);
    config.d_model = option[1], config.d_ff = option[2], config.heads = option[3];
    config.max_len = 1;   /* the positional table is not a parameter */
    if (config.d_model % config.heads != 0 || config.d_model % 2 != 0)
        return "--d-model must be even and a multiple of --heads";
    Model model;
    model_init(&model, config);
    size_t part[PART_COUNT] = {0}, total = model_parameter_count(&model);
    for (int i = 0; i < model.parameters.count; i++)
        part[model_part(model.parameters.views[i].name)] += model.parameters.views[i].size;
    /* <<Print the architecture's sizes and counts as macros>> */
#line 712 "book/program.nw"
    fprintf(out, "%% transformer figure-data architecture --layers=%d --d-model=%d --d-ff=%d"
                 " --heads=%d --src-vocab=%d --tgt-vocab=%d (pre-norm, generator not tied)\n",
            option[0], option[1], option[2], option[3], option[4], option[5]);
    const char *size_name[] = {"Layers", "DModel", "Dff", "Heads", "SrcVocab", "TgtVocab"};
    for (int o = 0; o < 6; o++) print_count_macro(out, size_name[o], (size_t)option[o]);
    print_count_macro(out, "Dk", (size_t)(config.d_model / config.heads));
    print_count_macro(out, "Attention", parameters_under(&model, "encoder.layers.0.self_attn."));
    print_count_macro(out, "FeedForward",
                      parameters_under(&model, "encoder.layers.0.feed_forward."));
    print_count_macro(out, "Norm", parameters_under(&model, "encoder.layers.0.sublayer.0."));
    print_count_macro(out, "EncoderLayer", parameters_under(&model, "encoder.layers.0."));
    print_count_macro(out, "DecoderLayer", parameters_under(&model, "decoder.layers.0."));
    print_count_macro(out, "SrcEmbedding", parameters_under(&model, "src_embed."));
    print_count_macro(out, "TgtEmbedding", parameters_under(&model, "tgt_embed."));
    const char *part_name[PART_COUNT] = {"AttentionTotal", "FeedForwardTotal", "NormTotal",
                                         "EmbeddingTotal", "GeneratorTotal"};
    for (int p = 0; p < PART_COUNT; p++) {
        print_count_macro(out, part_name[p], part[p]);
        fprintf(out, "\\newcommand{\\arch%sPercent}{%.0f}\n", part_name[p],
                100.0 * (double)part[p] / (double)total);
    }
    print_count_macro(out, "Total", total);
#line 701 "book/program.nw"
    model_free(&model);
    return NULL;
}
#line 792 "book/program.nw"
void figure_summary(FILE *out, const FigureKind *kind, const int *option)
{
    char *text = NULL, *picture = NULL;
    size_t text_length = 0, picture_length = 0;
    FILE *data = open_memstream(&text, &text_length);
    if (data == NULL) die("cannot open a memory stream");
    const char *problem = kind->emit(data, option);
    ENSURE(problem == NULL, "figure '%s' refused its defaults: %s", kind->name, problem);
    FILE *drawing = fclose(data) == 0 ? open_memstream(&picture, &picture_length) : NULL;
    if (drawing == NULL) die("cannot capture the data of figure '%s'", kind->name);
    long numbers = 0, ones = 0;
    bool binary = true;
    for (const char *line = text; *line; ) {
        size_t line_length = strcspn(line, "\n");
        if (line[0] != '#') {
            /* <<Count the numbers of one line and draw them>> */
#line 824 "book/program.nw"
            long numbers_before = numbers;
            for (const char *word = line; word < line + line_length; ) {
                size_t word_length = strcspn(word, " \n");
                char *after;
                double x = strtod(word, &after);
                if (word_length > 0 && after == word + word_length) {
                    if (numbers++ == numbers_before) fputs("  ", drawing);
                    ones += x == 1;
                    binary = binary && (x == 0 || x == 1);
                    fputc(x == 1 ? '#' : '.', drawing);
                }
                word += word_length + (word[word_length] == ' ');
            }
            if (numbers > numbers_before) fputc('\n', drawing);
#line 808 "book/program.nw"
        }
        line += line_length + (line[line_length] == '\n');
    }
    if (fclose(drawing) != 0) die("cannot draw the data of figure '%s'", kind->name);
    if (binary) fputs(picture, out);
    fprintf(out, "  %ld numbers", numbers);
    if (binary) fprintf(out, ", %ld ones", ones);
    fputc('\n', out);
    free(text);
    free(picture);
}
#line 193 "book/embeddings.nw"
void figure_positional_encoding(FILE *out, int positions, int d_model, int first, int count)
{
    ENSURE(first >= 0 && count >= 1 && first + count <= d_model, "dimensions %d+%d of %d",
           first, count, d_model);
    float *table = xmalloc((size_t)positions * d_model * sizeof *table);
    positional_encoding_table(table, positions, d_model);
    fprintf(out, "# positional encoding, d_model = %d: position, then dimensions %d to %d\n",
            d_model, first, first + count - 1);
    for (int p = 0; p < positions; p++) {
        fprintf(out, "%d", p);
        for (int i = first; i < first + count; i++)
            fprintf(out, " %.7g", table[(size_t)p * d_model + i]);
        fputc('\n', out);
    }
    free(table);
}

static const char *emit_positional_encoding(FILE *out, const int *option)
{
    if (option[1] % 2 != 0) return "--d-model must be even";
    if (option[2] >= option[1]) return "--first must be smaller than --d-model";
    int count = option[1] - option[2] < 4 ? option[1] - option[2] : 4;
    figure_positional_encoding(out, option[0], option[1], option[2], count);
    return NULL;
}
#line 135 "book/training.nw"
static const char *emit_smoothing_distribution(FILE *out, const int *option)
{
    enum { V = 5, ROWS = 5 };
    const int targets[ROWS] = {2, 1, 0, 3, 3};
    float dist[ROWS * V];
    label_smoothing_distribution(dist, targets, ROWS, V, 0, 0.4f);
    fprintf(out, "# label smoothing, V = 5, eps = 0.4, padding 0: "
                 "row = target, column = word\n");
    fprintf(out, "target 0 1 2 3 4\n");
    for (int r = 0; r < ROWS; r++) {
        fprintf(out, "%d", targets[r]);
        for (int w = 0; w < V; w++) fprintf(out, " %.4g", dist[r * V + w]);
        fputc('\n', out);
    }
    return NULL;
}
#line 160 "book/training.nw"
static const char *emit_smoothing_confidence(FILE *out, const int *option)
{
    enum { V = 5 };
    const int target = 1;
    fprintf(out, "# label smoothing, eps = 0.1: "
                 "x, loss for p proportional to (0, x, 1, 1, 1)\n");
    for (int x = 1; x <= 99; x++) {
        const float d = (float)x + 3.0f;
        const float logprobs[V] = {-INFINITY, logf((float)x / d), logf(1.0f / d),
                                   logf(1.0f / d), logf(1.0f / d)};
        float grad[V];
        int tokens;
        fprintf(out, "%d %.6g\n", x,
                label_smoothing_loss(grad, logprobs, &target, 1, V, 0, 0.1f, &tokens));
    }
    return NULL;
}
#line 251 "book/training.nw"
static const char *emit_learning_rate(FILE *out, const int *option)
{
    const int every = option[1];
    fprintf(out, "# learning rate: step, then "
                 "[512, 1, 4000], [512, 1, 8000], [256, 1, 4000]\n");
    for (long s = 0; s <= option[0]; s += every)
        fprintf(out, "%ld %.6g %.6g %.6g\n", s, learning_rate(s, 512, 1.0, 4000),
                learning_rate(s, 512, 1.0, 8000), learning_rate(s, 256, 1.0, 4000));
    return NULL;
}

#line 556 "book/program.nw"
const FigureKind figure_kinds[] = {
    /* <<figure kinds>> */
#line 349 "book/masks.nw"
    {"mask subsequent", "the subsequent mask of size T",
     {{"--size", 1, 512, 20, "T, the sequence length"}}, emit_mask_subsequent},
    {"mask batch", "the target mask of one sentence of a padded batch of three",
     {{"--sentence", 1, EXAMPLE_BATCH, 1, "which sentence"}}, emit_mask_batch},
#line 739 "book/program.nw"
    {"architecture", "sizes and parameter counts of a model, as LaTeX macros",
     {{"--layers", 1, 64, 6, "N, layers in the encoder and in the decoder"},
      {"--d-model", 2, 8192, 512, "d_model"},
      {"--d-ff", 1, 32768, 2048, "d_ff"},
      {"--heads", 1, 256, 8, "h, attention heads"},
      {"--src-vocab", 1, 1000000, 8315, "source vocabulary"},
      {"--tgt-vocab", 1, 1000000, 6384, "target vocabulary"}}, emit_architecture},
#line 225 "book/embeddings.nw"
    {"pe", "dimensions FIRST..FIRST+3 of the positional encoding",
     {{"--positions", 1, 10000, 100, "positions"},
      {"--d-model", 2, 4096, 20, "d_model, even"},
      {"--first", 0, 4095, 4, "first dimension shown"}}, emit_positional_encoding},
#line 180 "book/training.nw"
    {"smoothing distribution", "the smoothed targets of the course's example",
     {{NULL, 0, 0, 0, NULL}}, emit_smoothing_distribution},
    {"smoothing confidence", "the loss as the model grows confident",
     {{NULL, 0, 0, 0, NULL}}, emit_smoothing_confidence},
#line 264 "book/training.nw"
    {"lr", "the learning-rate schedule of the course's three settings",
     {{"--steps", 1, 1000000, 20000, "last step"},
      {"--every", 1, 100000, 20, "print every Nth step"}},
     emit_learning_rate},
#line 558 "book/program.nw"
};
const int figure_kind_count = sizeof figure_kinds / sizeof figure_kinds[0];
