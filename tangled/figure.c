/* The data behind the book's figures -- generated from the book's chapters by notangle:
   edit the book, not this file. */
#include "figure.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
/* <<figure.c includes>> */
#include <math.h>
#include "train.h"

/* <<figure.c definitions>> */
static void print_flags(FILE *out, const uint8_t *keep, int rows, int cols)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            fprintf(out, "%d%c", keep[(size_t)i * cols + j], j + 1 < cols ? ' ' : '\n');
}

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

enum { EXAMPLE_BATCH = 3, EXAMPLE_MAX_BATCH = 8, EXAMPLE_MAX_LEN = 32, EXAMPLE_PAD = 2 };
static const char *const example_vocabulary[] = {
    "<s>", "</s>", "<blank>", "<unk>", "a", "dog", "runs", "on", "the", "beach", ".",
    "two", "men", "talk", "children", "play",
};
/* The words between <s> and </s> of the book's three sentences; -1 ends each. */
static const int example_words[EXAMPLE_BATCH][8] = {
    {4, 5, 6, 7, 8, 9, 10, -1},     /* a dog runs on the beach . */
    {11, 12, 13, -1},               /* two men talk              */
    {14, 15, 10, -1},               /* children play .           */
};

static void example_batch(int *tokens, const int *lengths, int batch, int longest)
{
    for (int b = 0; b < batch; b++) {
        const int *words = example_words[b % EXAMPLE_BATCH];
        int available = 0;
        while (words[available] >= 0) available++;
        int *row = tokens + (size_t)b * longest;
        for (int t = 0; t < longest; t++)
            row[t] = t == 0 ? 0
                   : t == lengths[b] - 1 ? 1
                   : t < lengths[b] ? words[(t - 1) % available] : EXAMPLE_PAD;
    }
}

void figure_mask_batch(FILE *out, const int *lengths, int batch, int sentence)
{
    ENSURE(batch >= 1 && batch <= EXAMPLE_MAX_BATCH && sentence >= 1 && sentence <= batch,
           "sentence %d of %d", sentence, batch);
    int longest = 0;
    for (int b = 0; b < batch; b++) {
        ENSURE(lengths[b] >= 2 && lengths[b] <= EXAMPLE_MAX_LEN, "length %d", lengths[b]);
        if (lengths[b] > longest) longest = lengths[b];
    }
    const int len = longest - 1;
    int tokens[EXAMPLE_MAX_BATCH * EXAMPLE_MAX_LEN], inputs[EXAMPLE_MAX_BATCH * EXAMPLE_MAX_LEN];
    example_batch(tokens, lengths, batch, longest);
    for (int b = 0; b < batch; b++)
        for (int t = 0; t < len; t++) inputs[b * len + t] = tokens[b * longest + t];
    uint8_t *keep = xmalloc((size_t)batch * len * len);
    target_mask(keep, inputs, batch, len, EXAMPLE_PAD);

    const int *words = inputs + (size_t)(sentence - 1) * len;
    const uint8_t *flags = keep + (size_t)(sentence - 1) * len * len;
    fprintf(out, "# target mask of sentence %d of %d (padding token %s): row = query, "
                 "column = key, 1 = may attend\nkey", sentence, batch,
            example_vocabulary[EXAMPLE_PAD]);
    for (int j = 0; j < len; j++) fprintf(out, " %s", example_vocabulary[words[j]]);
    fputc('\n', out);
    for (int i = 0; i < len; i++) {
        fprintf(out, "%s", example_vocabulary[words[i]]);
        for (int j = 0; j < len; j++) fprintf(out, " %d", flags[(size_t)i * len + j]);
        fputc('\n', out);
    }
    free(keep);
}

static const char *emit_mask_subsequent(FILE *out, const FigureValue *option)
{
    const int size = (int)option[0].number[0];
    fprintf(out, "#gp size = %d\n#tex \\def\\masksize{%d}\n", size, size);
    figure_mask_subsequent(out, size);
    return NULL;
}

static const char *emit_mask_batch(FILE *out, const FigureValue *option)
{
    const int batch = option[0].count, sentence = (int)option[1].number[0];
    if (batch > EXAMPLE_MAX_BATCH) return "--lengths: at most 8 sentences";
    if (sentence > batch) return "--sentence: the batch has fewer sentences (see --lengths)";
    int lengths[EXAMPLE_MAX_BATCH], longest = 0;
    fputs("#tex \\def\\maskbatchlengths{", out);
    for (int b = 0; b < batch; b++) {
        lengths[b] = (int)option[0].number[b];
        if (lengths[b] > longest) longest = lengths[b];
        fprintf(out, "%s%d", b == 0 ? "" : b + 1 < batch ? ", " : " and ", lengths[b]);
    }
    fputs("}\\def\\maskbatchlengthsoption{", out);
    for (int b = 0; b < batch; b++) fprintf(out, "%s%d", b ? "," : "", lengths[b]);
    fprintf(out, "}\n#gp len = %d\n#gp sentences = %d\n", longest - 1, batch);
    figure_mask_batch(out, lengths, batch, sentence);
    return NULL;
}

bool figure_option_read(const FigureOption *option, const char *text, bool replace,
                        FigureValue *value, Error *problem)
{
    if (replace || option->kind != FIGURE_RECORD) value->count = 0;
    const char *p = text ? text : "";
    bool good = *p != '\0';
    if (option->kind == FIGURE_RECORD) {
        /* <<Read one record of named numbers>> */
        const int keys = (int)strlen(option->keys);
        double record[FIGURE_MAX_NUMBERS];
        for (int k = 0; k < keys; k++) {
            char *end;
            const char *key = strchr(option->fallback, option->keys[k]);
            record[k] = key && key[1] == '=' ? strtod(key + 2, &end) : 0.0;
        }
        while (good) {
            const char *key = strchr(option->keys, *p);
            char *end;
            errno = 0;
            const double x = key && *p && p[1] == '=' ? strtod(p + 2, &end) : 0.0;
            good = key && *p && p[1] == '=' && end != p + 2 && errno != ERANGE
                && x >= option->low && x <= option->high && (*end == '\0' || *end == ',');
            if (good) record[key - option->keys] = x;
            if (!good || *end == '\0') break;
            p = end + 1;
        }
        if (good && value->count + keys > FIGURE_MAX_NUMBERS) {
            error_set(problem, "%s given too often (at most %d times)", option->flag,
                      FIGURE_MAX_NUMBERS / keys);
            return false;
        }
        for (int k = 0; good && k < keys; k++) value->number[value->count++] = record[k];
    } else {
        /* <<Read numbers separated by commas>> */
        const bool integer = option->kind != FIGURE_REAL;
        const int most = option->kind == FIGURE_INTEGERS ? FIGURE_MAX_NUMBERS : 1;
        while (good) {
            char *end;
            errno = 0;
            const double x = strtod(p, &end);
            good = end != p && errno != ERANGE && x >= option->low && x <= option->high
                && (!integer || strspn(p, " \t\n\v\f\r+-0123456789") == (size_t)(end - p))
                && value->count < most && (*end == '\0' || *end == ',');
            if (good) value->number[value->count++] = x;
            if (!good || *end == '\0') break;
            p = end + 1;
        }
    }
    if (good) return true;
    const char *what = option->kind == FIGURE_INTEGER ? "an integer"
                     : option->kind == FIGURE_REAL ? "a number"
                     : option->kind == FIGURE_INTEGERS ? "integers separated by commas, each"
                     : "KEY=NUMBER pairs separated by commas, keys";
    if (option->kind == FIGURE_RECORD)
        error_set(problem, "%s expects %s among '%s', got '%s'", option->flag, what,
                  option->keys, text ? text : "nothing");
    else
        error_set(problem, "%s expects %s from %.10g to %.10g, got '%s'", option->flag,
                  what, option->low, option->high, text ? text : "nothing");
    return false;
}

bool figure_defaults(const FigureKind *kind, FigureValue *value, Error *problem)
{
    for (int o = 0; o < FIGURE_MAX_OPTIONS && kind->options[o].flag; o++) {
        const FigureOption *option = &kind->options[o];
        char text[256];
        value[o].count = 0;
        for (const char *p = option->fallback; *p; ) {
            const size_t length = strcspn(p, " ");
            snprintf(text, sizeof text, "%.*s", (int)length, p);
            if (!figure_option_read(option, text, false, &value[o], problem))
                return false;
            p += length + (p[length] == ' ');
        }
    }
    return true;
}

/* <<Print the command of a figure>> */
static void print_command(FILE *out, const FigureKind *kind, const FigureValue *value,
                          const char *dashes)
{
    fprintf(out, "figure-data %s", kind->name);
    for (int o = 0; o < FIGURE_MAX_OPTIONS && kind->options[o].flag; o++) {
        const FigureOption *option = &kind->options[o];
        const int keys = option->kind == FIGURE_RECORD ? (int)strlen(option->keys) : 0;
        for (int i = 0; i < value[o].count; i++) {
            if (keys ? i % keys == 0 : i == 0) fprintf(out, " %s%s ", dashes, option->flag + 2);
            else fputc(',', out);
            if (keys) fprintf(out, "%c=", option->keys[i % keys]);
            fprintf(out, "%.10g", value[o].number[i]);
        }
    }
}

const char *figure_emit(FILE *out, const FigureKind *kind, const FigureValue *value)
{
    char *text = NULL;
    size_t length = 0;
    FILE *data = open_memstream(&text, &length);
    if (data == NULL) die("out of memory opening a memory stream");   /* as xmalloc */
    fputs("# transformer ", data);
    print_command(data, kind, value, "--");
    fputs("\n#tex \\def\\figuresettings{\\texttt{transformer ", data);
    print_command(data, kind, value, "-{}-");   /* -- would be a dash in LaTeX */
    fputs("}}\n", data);
    const char *problem = kind->emit(data, value);
    if (fclose(data) != 0) die("out of memory writing the data of figure '%s'", kind->name);
    if (problem == NULL) fwrite(text, 1, length, out);
    free(text);
    return problem;
}

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

static const char *emit_architecture(FILE *out, const FigureValue *option)
{
    int value[6];
    for (int o = 0; o < 6; o++) value[o] = (int)option[o].number[0];
    Config config = config_default(value[4], value[5], value[0]);
    config.d_model = value[1], config.d_ff = value[2], config.heads = value[3];
    config.max_len = 1;   /* the positional table is not a parameter */
    if (config.d_model % config.heads != 0 || config.d_model % 2 != 0)
        return "--d-model must be even and a multiple of --heads";
    Model model;
    model_init(&model, config);
    size_t part[PART_COUNT] = {0}, total = model_parameter_count(&model);
    for (int i = 0; i < model.parameters.count; i++)
        part[model_part(model.parameters.views[i].name)] += model.parameters.views[i].size;
    /* <<Print the architecture's sizes and counts as macros>> */
    fprintf(out, "%% a pre-norm model, the generator not tied to the target embedding\n");
    const char *size_name[] = {"Layers", "DModel", "Dff", "Heads", "SrcVocab", "TgtVocab"};
    for (int o = 0; o < 6; o++) print_count_macro(out, size_name[o], (size_t)value[o]);
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
    model_free(&model);
    return NULL;
}

void figure_summary(FILE *out, const FigureKind *kind, const FigureValue *option)
{
    char *text = NULL, *picture = NULL;
    size_t text_length = 0, picture_length = 0;
    FILE *data = open_memstream(&text, &text_length);
    if (data == NULL) die("out of memory opening a memory stream");   /* as xmalloc */
    const char *problem = figure_emit(data, kind, option);
    ENSURE(problem == NULL, "figure '%s' refused its defaults: %s", kind->name, problem);
    FILE *drawing = fclose(data) == 0 ? open_memstream(&picture, &picture_length) : NULL;
    if (drawing == NULL) die("out of memory capturing the data of figure '%s'", kind->name);
    long numbers = 0, ones = 0;
    bool binary = true;
    for (const char *line = text; *line; ) {
        size_t line_length = strcspn(line, "\n");
        if (line[0] != '#') {
            /* <<Count the numbers of one line and draw them>> */
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
        }
        line += line_length + (line[line_length] == '\n');
    }
    if (fclose(drawing) != 0) die("out of memory drawing figure '%s'", kind->name);
    if (binary) fputs(picture, out);
    fprintf(out, "  %ld numbers", numbers);
    if (binary) fprintf(out, ", %ld ones", ones);
    fputc('\n', out);
    free(text);
    free(picture);
}

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

static const char *emit_positional_encoding(FILE *out, const FigureValue *option)
{
    const int positions = (int)option[0].number[0], d_model = (int)option[1].number[0],
              first = (int)option[2].number[0], count = (int)option[3].number[0];
    if (d_model % 2 != 0) return "--d-model must be even";
    if (first >= d_model) return "--first must be smaller than --d-model";
    if (first + count > d_model) return "--first plus --count goes past --d-model";
    fprintf(out, "#gp positions = %d\n#gp first = %d\n#gp count = %d\n", positions, first,
            count);
    fprintf(out, "#tex \\def\\pepositions{%d}\\def\\pedmodel{%d}\\def\\pedimensions{%s %d%s",
            positions, d_model, count > 1 ? "Dimensions" : "Dimension", first,
            count > 2 ? " to " : count > 1 ? " and " : "");
    if (count > 1) fprintf(out, "%d", first + count - 1);
    fputs("}\n", out);
    figure_positional_encoding(out, positions, d_model, first, count);
    return NULL;
}

enum { TEMPERATURE_MAX_KEYS = 64, TEMPERATURE_MAX_DK = 512 };

/* scores[j] = q . k_j, not scaled, for a query and keys of width dk drawn from rng. */
static void draw_scores(Rng *rng, int dk, int keys, float *scores)
{
    float q[TEMPERATURE_MAX_DK];
    for (int c = 0; c < dk; c++) q[c] = rng_normal(rng);
    for (int j = 0; j < keys; j++) {
        double s = 0.0;
        for (int c = 0; c < dk; c++) s += (double)q[c] * rng_normal(rng);
        scores[j] = (float)s;
    }
}

/* p = softmax(scores / tau) over keys, and its entropy in nats. */
static double weights_at(float *p, const float *scores, int keys, double tau)
{
    float scaled[TEMPERATURE_MAX_KEYS];
    for (int j = 0; j < keys; j++) scaled[j] = (float)(scores[j] / tau);
    softmax_rows(p, scaled, 1, keys);
    double entropy = 0.0;
    for (int j = 0; j < keys; j++)
        if (p[j] > 0.0f) entropy -= p[j] * log(p[j]);
    return entropy;
}

static int by_score_descending(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

static const char *emit_temperature(FILE *out, const FigureValue *option)
{
    const int dk = (int)option[0].number[0], keys = (int)option[1].number[0];
    const FigureValue *tau = &option[2];
    const int rows = (int)option[3].number[0];
    Rng rng;
    rng_seed(&rng, (uint64_t)option[4].number[0], 54);   /* transformer random's stream */
    float *scores = xmalloc((size_t)rows * keys * sizeof *scores), p[TEMPERATURE_MAX_KEYS];
    for (int r = 0; r < rows; r++) draw_scores(&rng, dk, keys, scores + (size_t)r * keys);
    /* <<Print the temperature figure's settings>> */
    fprintf(out, "#gp dk = %d\n#gp keys = %d\n#gp rows = %d\n#gp taus = \"", dk, keys, rows);
    for (int t = 0; t < tau->count; t++) fprintf(out, "%s%g", t ? " " : "", tau->number[t]);
    fprintf(out, "\"\n#tex \\def\\temperaturedk{%d}\\def\\temperaturekeys{%d}"
                 "\\def\\temperaturerows{%d}\\def\\temperaturetaus{", dk, keys, rows);
    for (int t = 0; t < tau->count; t++) fprintf(out, "%s%g", t ? ", " : "", tau->number[t]);
    fprintf(out, "}\n");
    float first[TEMPERATURE_MAX_KEYS];
    memcpy(first, scores, (size_t)keys * sizeof *first);
    qsort(first, (size_t)keys, sizeof *first, by_score_descending);
    float weight[FIGURE_MAX_NUMBERS][TEMPERATURE_MAX_KEYS];   /* [tau][key] */
    for (int t = 0; t < tau->count; t++) weights_at(weight[t], first, keys, tau->number[t]);
    fprintf(out, "# the first query: key (by score), score, weight at each tau\n");
    for (int j = 0; j < keys; j++) {
        fprintf(out, "%d %.6g", j + 1, first[j]);
        for (int t = 0; t < tau->count; t++) fprintf(out, " %.6g", weight[t][j]);
        fputc('\n', out);
    }
    /* <<Print the mean entropy against the temperature>> */
    int lowest = -32;   /* 2^(-32/8) = 1/16 */
    while (pow(2.0, lowest / 8.0) * sqrt(dk) > 1.0) lowest -= 8;
    fprintf(out, "\n\n# mean entropy of %d queries: tau / sqrt(d_k), entropy (nats)\n", rows);
    for (int i = lowest; i <= 16; i++) {
        const double x = pow(2.0, i / 8.0);
        double sum = 0.0;
        for (int r = 0; r < rows; r++)
            sum += weights_at(p, scores + (size_t)r * keys, keys, x * sqrt(dk));
        fprintf(out, "%.6g %.6g\n", x, sum / rows);
    }
    fprintf(out, "\n\n# at the temperatures given: tau, tau / sqrt(d_k), mean entropy\n");
    for (int t = 0; t < tau->count; t++) {
        double sum = 0.0;
        for (int r = 0; r < rows; r++)
            sum += weights_at(p, scores + (size_t)r * keys, keys, tau->number[t]);
        fprintf(out, "%g %.6g %.6g\n", tau->number[t], tau->number[t] / sqrt(dk), sum / rows);
    }
    free(scores);
    return NULL;
}

/* Print rows x cols numbers of m (leading dimension ld), in tenths, as the body of a LaTeX
   matrix. */
static void print_matrix_macro(FILE *out, const char *name, const float *m, int rows,
                               int cols, int ld)
{
    fprintf(out, "\\newcommand{\\%s}{", name);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            fprintf(out, "%.1f%s", round(10.0 * m[(size_t)r * ld + c]) / 10.0 + 0.0,
                    c + 1 < cols ? " & " : r + 1 < rows ? " \\\\ " : "}\n");
}

static const char *emit_heads(FILE *out, const FigureValue *option)
{
    enum { T = 2, D = 4, DK = 2 };
    const float x[T][D] = {{1, 2, 3, 4}, {5, 6, 7, 8}};   /* the worked example's X_q */
    float w[D][D], zero[D] = {0}, fused[T][D], head[2][T][DK], cut[T][D], head_cut[T][DK];
    Rng rng;
    rng_seed(&rng, (uint64_t)option[0].number[0], 0);
    for (int i = 0; i < D; i++)
        for (int j = 0; j < D; j++) w[i][j] = roundf(5.0f * rng_normal(&rng)) / 10.0f;
    linear_forward(&fused[0][0], &x[0][0], &w[0][0], zero, T, D, D);
    for (int a = 0; a < 2; a++)   /* head a: rows a DK .. a DK + DK - 1 of W_0 */
        linear_forward(&head[a][0][0], &x[0][0], &w[a * DK][0], zero, T, D, DK);
    memcpy(cut, x, sizeof cut);
    for (int t = 0; t < T; t++) cut[t][2] = cut[t][3] = 0.0f;
    linear_forward(&head_cut[0][0], &cut[0][0], &w[0][0], zero, T, D, DK);
    double difference = 0.0;
    for (int a = 0; a < 2; a++)
        for (int t = 0; t < T; t++)
            for (int c = 0; c < DK; c++)
                difference = fmax(difference, fabs(fused[t][a * DK + c] - head[a][t][c]));
    print_matrix_macro(out, "headsW", &w[0][0], D, D, D);
    print_matrix_macro(out, "headsQone", &head[0][0][0], T, DK, DK);
    print_matrix_macro(out, "headsQtwo", &head[1][0][0], T, DK, DK);
    print_matrix_macro(out, "headsQoneCut", &head_cut[0][0], T, DK, DK);
    fprintf(out, "\\newcommand{\\headsFusedDiff}{%g}\n", difference);
    return NULL;
}

static const char *emit_smoothing_distribution(FILE *out, const FigureValue *option)
{
    enum { ROWS = 5, MAX_V = 64 };
    const float epsilon = (float)option[0].number[0];
    const int V = (int)option[1].number[0];
    const int targets[ROWS] = {2, 1, 0, 3, 3};
    float dist[ROWS * MAX_V];
    label_smoothing_distribution(dist, targets, ROWS, V, 0, epsilon);
    fprintf(out, "#gp epsilon = %g\n#gp vocab = %d\n"
                 "#tex \\def\\smoothingepsilon{%g}\\def\\smoothingvocab{%d}\n",
            epsilon, V, epsilon, V);
    fprintf(out, "# label smoothing, V = %d, eps = %g, padding 0: "
                 "row = target, column = word\ntarget", V, epsilon);
    for (int w = 0; w < V; w++) fprintf(out, " %d", w);
    fputc('\n', out);
    for (int r = 0; r < ROWS; r++) {
        fprintf(out, "%d", targets[r]);
        for (int w = 0; w < V; w++) fprintf(out, " %.4g", dist[r * V + w]);
        fputc('\n', out);
    }
    return NULL;
}

static const char *emit_smoothing_confidence(FILE *out, const FigureValue *option)
{
    enum { MAX_V = 64 };
    const float epsilon = (float)option[0].number[0];
    const int V = (int)option[1].number[0];
    const int target = 1;
    fprintf(out, "#gp epsilon = %g\n#gp vocab = %d\n"
                 "#tex \\def\\confidenceepsilon{%g}\\def\\confidencevocab{%d}\n",
            epsilon, V, epsilon, V);
    fprintf(out, "# label smoothing, V = %d, eps = %g: "
                 "x, loss for p proportional to (0, x, 1, ..., 1)\n", V, epsilon);
    for (int x = 1; x <= 99; x++) {
        const float d = (float)x + (float)(V - 2);
        float logprobs[MAX_V], grad[MAX_V];
        logprobs[0] = -INFINITY;
        logprobs[1] = logf((float)x / d);
        for (int w = 2; w < V; w++) logprobs[w] = logf(1.0f / d);
        int tokens;
        fprintf(out, "%d %.6g\n", x,
                label_smoothing_loss(grad, logprobs, &target, 1, V, 0, epsilon, &tokens));
    }
    return NULL;
}

static const char *emit_learning_rate(FILE *out, const FigureValue *option)
{
    const FigureValue *curve = &option[0];
    const int curves = curve->count / 3;
    const long steps = (long)option[1].number[0], every = (long)option[2].number[0];
    for (int c = 0; c < curves; c++) {
        const double d = curve->number[3 * c], f = curve->number[3 * c + 1],
                     w = curve->number[3 * c + 2];
        if (d < 1 || d != floor(d)) return "--curve: d (d_model) must be a positive integer";
        if (f <= 0) return "--curve: f (the factor) must be positive";
        if (w < 1 || w != floor(w)) return "--curve: w (warm-up steps) must be a positive integer";
    }
    /* <<Print the curves' settings for the legend and the caption>> */
    static const char *const symbol[3] = {"d_\\mathrm{model}", "f", "w"};
    bool differs[3] = {false, false, false}, any = false;
    for (int k = 0; k < 3; k++) {
        for (int c = 1; c < curves; c++)
            differs[k] = differs[k] || curve->number[3 * c + k] != curve->number[k];
        any = any || differs[k];
    }
    fprintf(out, "#gp curves = %d\n#gp steps = %ld\n", curves, steps);
    for (int c = 0; c < curves; c++) {
        fprintf(out, "#gp title%d = '", c + 1);
        for (int k = 0, shown = 0; k < 3; k++)
            if (differs[k] || !any)
                fprintf(out, "%s$%s = %g$", shown++ ? ", " : "", symbol[k], curve->number[3 * c + k]);
        fputs("'\n", out);
    }
    fputs("#tex \\def\\lrcurves{", out);
    for (int c = 0; c < curves; c++)
        fprintf(out, "%s$(%g, %g, %g)$", c == 0 ? "" : c + 1 < curves ? ", " : " and ",
                curve->number[3 * c], curve->number[3 * c + 1], curve->number[3 * c + 2]);
    fputs("}\\def\\lrsteps{", out);   /* 20\\,000: digits in groups of three */
    char digits[24];
    const int length = snprintf(digits, sizeof digits, "%ld", steps);
    for (int i = 0; i < length; i++)
        fprintf(out, "%s%c", i > 0 && length > 4 && (length - i) % 3 == 0 ? "\\," : "", digits[i]);
    fputs("}\n", out);
    fputs("# learning rate: step, then one column per curve [d_model, factor, warmup]:", out);
    for (int c = 0; c < curves; c++)
        fprintf(out, " [%g, %g, %g]", curve->number[3 * c], curve->number[3 * c + 1],
                curve->number[3 * c + 2]);
    fputc('\n', out);
    for (long s = 0; s <= steps; s += every) {
        fprintf(out, "%ld", s);
        for (int c = 0; c < curves; c++)
            fprintf(out, " %.6g", learning_rate(s, (int)curve->number[3 * c],
                                                 curve->number[3 * c + 1],
                                                 (long)curve->number[3 * c + 2]));
        fputc('\n', out);
    }
    return NULL;
}

size_t parameter_count_of(const Config *c)
{
    const size_t d = (size_t)c->d_model, ff = (size_t)c->d_ff;
    const size_t attention = 4 * (d * d + d), feed_forward = 2 * d * ff + ff + d, norm = 2 * d;
    size_t count = (size_t)c->layers * ((attention + feed_forward + 2 * norm)           /* encoder */
                                        + (2 * attention + feed_forward + 3 * norm));  /* decoder */
    if (c->norm == NORM_PRE) count += 2 * norm;   /* the stacks' final norms */
    count += ((c->tie_source ? 0 : (size_t)c->src_vocab) + (size_t)c->tgt_vocab) * d;
    count += c->tie_generator ? (size_t)c->tgt_vocab : (size_t)c->tgt_vocab * (d + 1);
    return count;
}

Config scaling_translator(void)
{
    Config c = config_default(7723, 7723, 3);   /* one vocabulary of 7723 pieces */
    c.d_model = 256, c.d_ff = 1024;
    c.tie_source = c.tie_generator = true;
    return c;
}

static const char *emit_scaling(FILE *out, const FigureValue *option)
{
    const Config base = config_default(8315, 6384, 6), multi30k = scaling_translator();
    const Config *models[2] = {&base, &multi30k};
    const double step_seconds[2] = {option[0].number[0] * 1e-3, option[1].number[0] * 1e-3};
    const double alpha = option[2].number[0] * 1e-6;              /* s a message */
    const double bandwidth[2] = {10e9 / 8, 100e9 / 8};           /* bytes/s */
    fprintf(out, "# P, then for the base model (%zu parameters, %.3f s a step) and the "
                 "Multi30k model (%zu, %.3f s),\n# over 10 and 100 Gbit/s: step time (s) and "
                 "efficiency; latency %.0f us a message\n",
            parameter_count_of(&base), step_seconds[0], parameter_count_of(&multi30k),
            step_seconds[1], alpha * 1e6);
    fprintf(out, "#tex \\def\\scalingbase{%.3g}\\def\\scalingmulti{%.3g}"
                 "\\def\\scalinglatency{%.0f}\n", step_seconds[0], step_seconds[1], alpha * 1e6);
    for (int p = 1; p <= 64; p *= 2) {
        fprintf(out, "%d", p);
        for (int m = 0; m < 2; m++)
            for (int n = 0; n < 2; n++) {
                const double bytes = 4.0 * (double)parameter_count_of(models[m]);
                const double comm = 2.0 * (p - 1) * alpha
                                    + 2.0 * (p - 1) / p * bytes / bandwidth[n];
                const double step = step_seconds[m] + comm;
                fprintf(out, " %.4f %.4f", step, step_seconds[m] / step);
            }
        fputc('\n', out);
    }
    return NULL;
}

const FigureKind figure_kinds[] = {
    /* <<figure kinds>> */
    {"mask subsequent", "the subsequent mask of size T",
     {{"--size", FIGURE_INTEGER, 1, 512, "20", "T, the sequence length", NULL}},
     emit_mask_subsequent},
    {"mask batch", "the target mask of one sentence of a padded batch",
     {{"--lengths", FIGURE_INTEGERS, 2, EXAMPLE_MAX_LEN, "9,5,5",
       "the sentences' lengths, <s> and </s> included", NULL},
      {"--sentence", FIGURE_INTEGER, 1, EXAMPLE_MAX_BATCH, "1", "which sentence", NULL}},
     emit_mask_batch},
    {"architecture", "sizes and parameter counts of a model, as LaTeX macros",
     {{"--layers", FIGURE_INTEGER, 1, 64, "6", "N, layers in the encoder and in the decoder",
       NULL},
      {"--d-model", FIGURE_INTEGER, 2, 8192, "512", "d_model", NULL},
      {"--d-ff", FIGURE_INTEGER, 1, 32768, "2048", "d_ff", NULL},
      {"--heads", FIGURE_INTEGER, 1, 256, "8", "h, attention heads", NULL},
      {"--src-vocab", FIGURE_INTEGER, 1, 1000000, "8315", "source vocabulary", NULL},
      {"--tgt-vocab", FIGURE_INTEGER, 1, 1000000, "6384", "target vocabulary", NULL}},
     emit_architecture},
    {"pe", "dimensions of the positional encoding",
     {{"--positions", FIGURE_INTEGER, 1, 10000, "100", "positions", NULL},
      {"--d-model", FIGURE_INTEGER, 2, 4096, "20", "d_model, even", NULL},
      {"--first", FIGURE_INTEGER, 0, 4095, "4", "first dimension shown", NULL},
      {"--count", FIGURE_INTEGER, 1, 8, "4", "how many dimensions", NULL}},
     emit_positional_encoding},
    {"temperature", "a query's attention weights and their entropy at several temperatures",
     {{"--dk", FIGURE_INTEGER, 1, TEMPERATURE_MAX_DK, "64", "d_k, the width of a head", NULL},
      {"--keys", FIGURE_INTEGER, 2, TEMPERATURE_MAX_KEYS, "10", "keys of the query", NULL},
      {"--tau", FIGURE_INTEGERS, 1, 1000, "1,8,16", "temperatures tau, whole numbers", NULL},
      {"--rows", FIGURE_INTEGER, 1, 5000, "2000", "queries averaged for the entropy", NULL},
      {"--seed", FIGURE_INTEGER, 0, 1e6, "7", "seed of the generator", NULL}},
     emit_temperature},
    {"heads", "two heads' queries from a random projection, per head and fused, as LaTeX",
     {{"--seed", FIGURE_INTEGER, 1, 1e6, "1", "seed of the random projection W_0", NULL}},
     emit_heads},
    {"smoothing distribution", "the smoothed targets of the course's example",
     {{"--epsilon", FIGURE_REAL, 0, 0.99, "0.4", "epsilon, the smoothing", NULL},
      {"--vocab", FIGURE_INTEGER, 4, 64, "5", "V, words in the vocabulary", NULL}},
     emit_smoothing_distribution},
    {"smoothing confidence", "the loss as the model grows confident",
     {{"--epsilon", FIGURE_REAL, 0, 0.99, "0.1", "epsilon, the smoothing", NULL},
      {"--vocab", FIGURE_INTEGER, 3, 64, "5", "V, words in the vocabulary", NULL}},
     emit_smoothing_confidence},
    {"lr", "the learning-rate schedule, one curve per setting",
     {{"--curve", FIGURE_RECORD, 0, 1e7, "d=512,f=1,w=4000 d=512,f=1,w=8000 d=256,f=1,w=4000",
       "one curve: d_model, factor, warm-up; repeat for more", "dfw"},
      {"--steps", FIGURE_INTEGER, 1, 1000000, "20000", "last step", NULL},
      {"--every", FIGURE_INTEGER, 1, 100000, "20", "print every Nth step", NULL}},
     emit_learning_rate},
    {"scaling", "step time and efficiency of P processes, projected",
     {{"--base-ms", FIGURE_INTEGER, 1, 600000, "1000",
       "compute time of a base-model step, ms (the book: measured)", NULL},
      {"--multi30k-ms", FIGURE_INTEGER, 1, 600000, "500",
       "compute time of a Multi30k-model step, ms (the book: measured)", NULL},
      {"--latency-us", FIGURE_INTEGER, 0, 100000, "30", "latency of one message, microseconds",
       NULL}},
     emit_scaling},
};
const int figure_kind_count = sizeof figure_kinds / sizeof figure_kinds[0];
