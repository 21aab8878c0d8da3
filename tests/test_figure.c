/* test_figure.c -- the data behind the figures: the numbers, not only that a file exists. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "figure.h"
#include "tests.h"

enum { MAX_ROWS = 128, MAX_COLS = 64, MAX_WORD = 32 };

/* A figure's text split into a grid of words, comment lines dropped. */
typedef struct {
    int rows, cols[MAX_ROWS];
    char word[MAX_ROWS][MAX_COLS][MAX_WORD];
} Grid;

static void parse_grid(Grid *grid, const char *text)
{
    memset(grid, 0, sizeof *grid);
    char *copy = strdup(text), *save_line = NULL;
    for (char *line = strtok_r(copy, "\n", &save_line); line; line = strtok_r(NULL, "\n", &save_line)) {
        if (line[0] == '#') continue;
        ck_assert_int_lt(grid->rows, MAX_ROWS);
        char *save_word = NULL;
        for (char *w = strtok_r(line, " ", &save_word); w; w = strtok_r(NULL, " ", &save_word)) {
            ck_assert_int_lt(grid->cols[grid->rows], MAX_COLS);
            ck_assert_int_lt((int)strlen(w), MAX_WORD);
            strcpy(grid->word[grid->rows][grid->cols[grid->rows]++], w);
        }
        grid->rows++;
    }
    free(copy);
}

START_TEST(figure_mask_subsequent_numbers)
{
    for (int size = 1; size <= 20; size += 19) {
        char *text = figure_text("mask subsequent", size == 1 ? "--size 1" : "--size 20");
        ck_assert_msg(text[0] == '#', "the data starts with a comment saying what it is");
        Grid grid;
        parse_grid(&grid, text);
        ck_assert_int_eq(grid.rows, size);
        int ones = 0;
        for (int i = 0; i < size; i++) {
            ck_assert_int_eq(grid.cols[i], size);
            for (int j = 0; j < size; j++) {
                ck_assert_str_eq(grid.word[i][j], j <= i ? "1" : "0");
                ones += j <= i;
            }
        }
        ck_assert_int_eq(ones, size * (size + 1) / 2);
        free(text);
    }
}
END_TEST

/* Each sentence: a header of 8 key words after the label "key", then 8 rows, each headed by
   its query word (the same words, in order), with 1 exactly where the key is not <blank>
   and j <= i. The sentences are those of the book's batch-mask figure; the counts those of the
   solution of the masks chapter's first exercise. */
START_TEST(figure_mask_batch_numbers)
{
    static const char *const first_words[3][3] = {
        {"<s>", "a", "dog"}, {"<s>", "two", "men"}, {"<s>", "children", "play"}};
    static const int expected_ones[3] = {36, 30, 30};
    static const int expected_padding[3] = {0, 3, 3};
    for (int s = 1; s <= 3; s++) {
        char arguments[32];
        snprintf(arguments, sizeof arguments, "--sentence %d", s);
        char *text = figure_text("mask batch", arguments);
        Grid grid;
        parse_grid(&grid, text);
        ck_assert_int_eq(grid.rows, 9);
        ck_assert_int_eq(grid.cols[0], 9);
        ck_assert_str_eq(grid.word[0][0], "key");
        for (int w = 0; w < 3; w++) ck_assert_str_eq(grid.word[0][1 + w], first_words[s - 1][w]);
        int ones = 0, padding = 0;
        for (int j = 0; j < 8; j++) padding += strcmp(grid.word[0][1 + j], "<blank>") == 0;
        ck_assert_int_eq(padding, expected_padding[s - 1]);
        for (int i = 0; i < 8; i++) {
            ck_assert_int_eq(grid.cols[1 + i], 9);
            ck_assert_str_eq(grid.word[1 + i][0], grid.word[0][1 + i]);
            for (int j = 0; j < 8; j++) {
                int may_attend = strcmp(grid.word[0][1 + j], "<blank>") != 0 && j <= i;
                ck_assert_str_eq(grid.word[1 + i][1 + j], may_attend ? "1" : "0");
                ones += may_attend;
            }
        }
        ck_assert_int_eq(ones, expected_ones[s - 1]);
        free(text);
    }
}
END_TEST

/* The positional-encoding figure: position, then dimensions 4..7 of the table for d_model = 20, checked against
   Equation 5.2 evaluated here. */
START_TEST(figure_positional_encoding_numbers)
{
    char *text = figure_text("pe", "");
    Grid grid;
    parse_grid(&grid, text);
    ck_assert_int_eq(grid.rows, 100);
    for (int p = 0; p < 100; p++) {
        ck_assert_int_eq(grid.cols[p], 5);
        ck_assert_int_eq(atoi(grid.word[p][0]), p);
        for (int c = 1; c < 5; c++) {
            int i = 4 + c - 1;
            double w = pow(10000.0, -(double)(i - i % 2) / 20), angle = p * w;
            double expected = i % 2 ? cos(angle) : sin(angle);
            ck_assert_double_eq_tol(strtod(grid.word[p][c], NULL), expected, 2e-6);
        }
    }
    free(text);
}
END_TEST

/* The .dat files that `make` drew the book's figures from hold exactly what the code
   computes now (make check regenerates them first, like make does). */
static void assert_file_equals(const char *path, const char *expected)
{
    FILE *file = fopen(path, "r");
    ck_assert_msg(file != NULL, "cannot open %s (run from the repository root)", path);
    const size_t size = strlen(expected) + 2;   /* room to see a longer file */
    char *buffer = malloc(size);
    ck_assert_ptr_nonnull(buffer);
    size_t length = fread(buffer, 1, size - 1, file);
    fclose(file);
    buffer[length] = '\0';
    ck_assert_msg(strcmp(buffer, expected) == 0, "%s differs from what the code prints", path);
    free(buffer);
}

START_TEST(figure_files_match_the_code)
{
    static const struct { const char *path, *name, *arguments; } files[] = {
        {"figures/mask-subsequent.dat", "mask subsequent", ""},
        {"figures/mask-batch-1.dat", "mask batch", "--sentence 1"},
        {"figures/mask-batch-2.dat", "mask batch", "--sentence 2"},
        {"figures/mask-batch-3.dat", "mask batch", "--sentence 3"},
        {"figures/positional-encoding.dat", "pe", ""},
        {"figures/smoothing-distribution.dat", "smoothing distribution", ""},
        {"figures/smoothing-confidence.dat", "smoothing confidence", ""},
        {"figures/learning-rate.dat", "lr", ""},
        {"figures/attention-temperature.dat", "temperature", ""},
    };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char *text = figure_text(files[f].name, files[f].arguments);
        assert_file_equals(files[f].path, text);
        free(text);
    }
}
END_TEST

/* Every figure kind has a name, a summary and options whose defaults the option itself
   accepts (figure_defaults reads them as the command line is read). */
START_TEST(figure_table_is_well_formed)
{
    ck_assert_int_ge(figure_kind_count, 2);
    for (int k = 0; k < figure_kind_count; k++) {
        ck_assert_ptr_nonnull(figure_kinds[k].name);
        ck_assert_ptr_nonnull(figure_kinds[k].summary);
        ck_assert(figure_kinds[k].emit != NULL);
        for (int o = 0; o < FIGURE_MAX_OPTIONS && figure_kinds[k].options[o].flag; o++) {
            const FigureOption *option = &figure_kinds[k].options[o];
            ck_assert(strncmp(option->flag, "--", 2) == 0);
            ck_assert_ptr_nonnull(option->fallback);
            ck_assert_ptr_nonnull(option->help);
            ck_assert((option->kind == FIGURE_RECORD) == (option->keys != NULL));
        }
        FigureValue value[FIGURE_MAX_OPTIONS];
        Error error;
        const char *problem = error.message;
        ck_assert_msg(figure_defaults(&figure_kinds[k], value, &error),
                      "%s: %s", figure_kinds[k].name, problem);
    }
}
END_TEST

/* The text of the line of TEXT that starts with PREFIX, without the prefix ("" if none). */
static const char *line_after(const char *text, const char *prefix, char *line, size_t size)
{
    line[0] = '\0';
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, prefix, strlen(prefix)) == 0) {
            snprintf(line, size, "%.*s", (int)strcspn(p + strlen(prefix), "\n"),
                     p + strlen(prefix));
            break;
        }
    return line;
}

/* The learning-rate figure draws the reader's curves: each column is Equation 11.3 for its
   (d_model, f, w), a key left out takes the first default curve's value, the first --curve
   replaces the book's three, and the legend (#gp) and caption (#tex) name the same numbers. */
START_TEST(figure_learning_rate_follows_its_curves)
{
    char *text = figure_text("lr", "--curve d=256,f=2,w=1000 --curve w=3000 --steps 4000 "
                                    "--every 1000");
    Grid grid;
    parse_grid(&grid, text);
    static const double curve[2][3] = {{256, 2, 1000}, {512, 1, 3000}};
    ck_assert_int_eq(grid.rows, 5);
    for (int r = 0; r < 5; r++) {
        ck_assert_int_eq(grid.cols[r], 3);
        const double s = r == 0 ? 1.0 : 1000.0 * r;
        ck_assert_int_eq(atoi(grid.word[r][0]), 1000 * r);
        for (int c = 0; c < 2; c++) {
            const double expected = curve[c][1] / sqrt(curve[c][0])
                                  * fmin(1.0 / sqrt(s), s * pow(curve[c][2], -1.5));
            ck_assert_double_eq_tol(strtod(grid.word[r][1 + c], NULL), expected,
                                    5.1e-6 * expected);   /* printed to 6 digits */
        }
    }
    char line[512];
    ck_assert_str_eq(line_after(text, "# transformer ", line, sizeof line),
                     "figure-data lr --curve d=256,f=2,w=1000 --curve d=512,f=1,w=3000 "
                     "--steps 4000 --every 1000");
    ck_assert_str_eq(line_after(text, "#gp curves = ", line, sizeof line), "2");
    ck_assert_str_eq(line_after(text, "#gp steps = ", line, sizeof line), "4000");
    ck_assert_str_eq(line_after(text, "#gp title1 = ", line, sizeof line),
                     "'$d_\\mathrm{model} = 256$, $f = 2$, $w = 1000$'");
    ck_assert_str_eq(line_after(text, "#tex \\def\\lrcurves", line, sizeof line),
                     "{$(256, 2, 1000)$ and $(512, 1, 3000)$}\\def\\lrsteps{4000}");
    free(text);
    /* The book's curves share f = 1: the legend leaves it out; 20,000 steps in groups. */
    text = figure_text("lr", "");
    ck_assert_str_eq(line_after(text, "#gp title3 = ", line, sizeof line),
                     "'$d_\\mathrm{model} = 256$, $w = 4000$'");
    ck_assert_ptr_nonnull(strstr(text, "\\def\\lrsteps{20\\,000}"));
    free(text);
}
END_TEST

/* The target mask of a batch of the reader's lengths: sentence 3 of lengths 4, 6, 2 is
   <s> </s> and four <blank>s, cut to the decoder's 5 inputs; its 9 ones are the two real
   keys, j <= i. */
START_TEST(figure_mask_batch_follows_its_lengths)
{
    char *text = figure_text("mask batch", "--lengths 4,6,2 --sentence 3");
    Grid grid;
    parse_grid(&grid, text);
    ck_assert_int_eq(grid.rows, 6);
    static const char *const keys[5] = {"<s>", "</s>", "<blank>", "<blank>", "<blank>"};
    int ones = 0;
    for (int j = 0; j < 5; j++) ck_assert_str_eq(grid.word[0][1 + j], keys[j]);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++) {
            ck_assert_str_eq(grid.word[1 + i][1 + j], j <= i && j < 2 ? "1" : "0");
            ones += j <= i && j < 2;
        }
    ck_assert_int_eq(ones, 9);
    char line[256];
    ck_assert_str_eq(line_after(text, "#tex \\def\\maskbatchlengths", line, sizeof line),
                     "{4, 6 and 2}\\def\\maskbatchlengthsoption{4,6,2}");
    ck_assert_str_eq(line_after(text, "#gp len = ", line, sizeof line), "5");
    free(text);
    /* A longer sentence repeats the book's words: a dog runs on the beach . a */
    text = figure_text("mask batch", "--lengths 10 --sentence 1");
    parse_grid(&grid, text);
    ck_assert_str_eq(grid.word[0][8], ".");
    ck_assert_str_eq(grid.word[0][9], "a");
    free(text);
}
END_TEST

/* Other dimensions of the positional encoding, and the legend's and caption's settings. */
START_TEST(figure_positional_encoding_follows_its_dimensions)
{
    char *text = figure_text("pe", "--positions 7 --d-model 64 --first 11 --count 3");
    Grid grid;
    parse_grid(&grid, text);
    ck_assert_int_eq(grid.rows, 7);
    for (int p = 0; p < 7; p++) {
        ck_assert_int_eq(grid.cols[p], 4);
        for (int c = 1; c < 4; c++) {
            const int i = 11 + c - 1;
            const double angle = p * pow(10000.0, -(double)(i - i % 2) / 64);
            ck_assert_double_eq_tol(strtod(grid.word[p][c], NULL),
                                    i % 2 ? cos(angle) : sin(angle), 2e-6);
        }
    }
    char line[256];
    ck_assert_str_eq(line_after(text, "#gp first = ", line, sizeof line), "11");
    ck_assert_str_eq(line_after(text, "#gp count = ", line, sizeof line), "3");
    ck_assert_str_eq(line_after(text, "#tex \\def\\pepositions", line, sizeof line),
                     "{7}\\def\\pedmodel{64}\\def\\pedimensions{Dimensions 11 to 13}");
    free(text);
}
END_TEST

/* Label smoothing with another epsilon and vocabulary: each real row puts 1 - eps on its
   target and eps / (V - 2) on every other word but padding (Equation 11.1); the padding row is
   empty. The confidence curve's minimum, zero, lies at x = (1 - eps)(V - 2) / eps = 12. */
START_TEST(figure_label_smoothing_follows_epsilon_and_vocabulary)
{
    char *text = figure_text("smoothing distribution", "--epsilon 0.2 --vocab 7");
    Grid grid;
    parse_grid(&grid, text);
    ck_assert_int_eq(grid.rows, 6);
    ck_assert_int_eq(grid.cols[0], 8);
    for (int r = 1; r < 6; r++) {
        const int target = atoi(grid.word[r][0]);
        for (int w = 0; w < 7; w++) {
            const double expected = target == 0 || w == 0 ? 0.0 : w == target ? 0.8 : 0.04;
            ck_assert_double_eq_tol(strtod(grid.word[r][1 + w], NULL), expected, 1e-6);
        }
    }
    char line[256];
    ck_assert_str_eq(line_after(text, "#tex \\def\\smoothingepsilon", line, sizeof line),
                     "{0.2}\\def\\smoothingvocab{7}");
    free(text);
    text = figure_text("smoothing confidence", "--epsilon 0.25 --vocab 6");
    parse_grid(&grid, text);
    ck_assert_int_eq(grid.rows, 99);
    int lowest = 0;
    for (int r = 0; r < 99; r++)
        if (strtod(grid.word[r][1], NULL) < strtod(grid.word[lowest][1], NULL)) lowest = r;
    ck_assert_int_eq(atoi(grid.word[lowest][0]), 12);
    ck_assert_double_eq_tol(strtod(grid.word[lowest][1], NULL), 0.0, 1e-6);
    ck_assert_str_eq(line_after(text, "#gp epsilon = ", line, sizeof line), "0.25");
    free(text);
}
END_TEST

/* The temperature figure for d_k = 16 and 5 keys: each temperature's weights sum to 1 and
   fall from the best key down, and a hotter temperature gives the best key less; the mean
   entropy grows with the temperature and stays below log K; the point marked at tau = 4 =
   sqrt(d_k) is the curve's value at x = 1, a point of its grid. */
START_TEST(figure_temperature_flattens_the_weights)
{
    enum { KEYS = 5, GRID = 49, TAUS = 3 };   /* the grid: 2^(i/8), i = -32..16 */
    char *text = figure_text("temperature", "--dk 16 --keys 5 --tau 1,4,64 --rows 50");
    Grid grid;
    parse_grid(&grid, text);
    ck_assert_int_eq(grid.rows, KEYS + GRID + TAUS);
    for (int t = 0; t < TAUS; t++) {
        double sum = 0.0;
        for (int j = 0; j < KEYS; j++) {
            const double p = strtod(grid.word[j][2 + t], NULL);
            sum += p;
            if (j > 0) ck_assert_double_le(p, strtod(grid.word[j - 1][2 + t], NULL));
        }
        ck_assert_double_eq_tol(sum, 1.0, 1e-5);
        if (t > 0)
            ck_assert_double_lt(strtod(grid.word[0][2 + t], NULL),
                                strtod(grid.word[0][1 + t], NULL));
    }
    const char *at_one = NULL;
    for (int r = KEYS; r < KEYS + GRID; r++) {
        const double entropy = strtod(grid.word[r][1], NULL);
        ck_assert_double_le(entropy, log((double)KEYS) + 1e-6);
        if (r > KEYS) ck_assert_double_ge(entropy, strtod(grid.word[r - 1][1], NULL) - 1e-6);
        if (strcmp(grid.word[r][0], "1") == 0) at_one = grid.word[r][1];
    }
    ck_assert_ptr_nonnull(at_one);
    ck_assert_str_eq(grid.word[KEYS + GRID + 1][0], "4");
    ck_assert_str_eq(grid.word[KEYS + GRID + 1][2], at_one);
    free(text);
}
END_TEST

/* A figure's first line is the command that prints it, every option written out: read
   back, it gives the same data, whatever the options were. */
/* figure-data heads: the five macros; the fused projection equals the per-head ones (here
   exactly); setting X_q's columns 2-3 to zero changes head 1's queries (it reads them), and
   another seed draws another W_0. */
START_TEST(figure_heads_reads_every_column)
{
    char *text = figure_text("heads", "");
    static const char *const names[5] = {"headsW", "headsQone", "headsQtwo", "headsQoneCut",
                                         "headsFusedDiff"};
    char body[5][256];
    for (int i = 0; i < 5; i++) {
        char key[64];
        snprintf(key, sizeof key, "\\newcommand{\\%s}{", names[i]);
        const char *at = strstr(text, key);
        ck_assert_msg(at != NULL, "no %s", names[i]);
        ck_assert_int_eq(sscanf(at + strlen(key), "%255[^}]", body[i]), 1);
    }
    ck_assert_double_le(fabs(atof(body[4])), 1e-5);
    ck_assert_str_ne(body[1], body[3]);   /* head 1 reads columns 2-3 */
    int ampersands = 0;
    for (const char *c = body[0]; *c; c++) ampersands += *c == '&';
    ck_assert_int_eq(ampersands, 12);   /* W_0 is 4 x 4: three a row */
    char *other = figure_text("heads", "--seed 2");
    ck_assert_str_ne(text, other);
    free(text), free(other);
}
END_TEST

START_TEST(figure_header_reproduces_the_data)
{
    static const struct { const char *name, *arguments; } cases[] = {
        {"mask subsequent", "--size 7"}, {"mask batch", "--lengths 3,4,5,6 --sentence 4"},
        {"pe", "--count 2"}, {"smoothing distribution", "--epsilon 0.3"},
        {"smoothing confidence", "--vocab 9"}, {"lr", "--curve f=2 --curve d=128 --every 500"},
        {"temperature", "--dk 8 --tau 2,3 --rows 10"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *text = figure_text(cases[c].name, cases[c].arguments), line[512];
        line_after(text, "# transformer figure-data ", line, sizeof line);
        const size_t name = strlen(cases[c].name);
        ck_assert_msg(strncmp(line, cases[c].name, name) == 0 && line[name] == ' ', "%s", line);
        char *again = figure_text(cases[c].name, line + name + 1);
        ck_assert_str_eq(again, text);
        free(again);
        free(text);
    }
}
END_TEST

/* Values an option must refuse, with the flag named, and the way records accumulate. */
START_TEST(figure_options_refuse_bad_values)
{
    const FigureOption *size = &figure_kinds[0].options[0], *lengths = NULL, *curve = NULL;
    for (int k = 0; k < figure_kind_count; k++) {
        if (strcmp(figure_kinds[k].name, "mask batch") == 0) lengths = &figure_kinds[k].options[0];
        if (strcmp(figure_kinds[k].name, "lr") == 0) curve = &figure_kinds[k].options[0];
    }
    ck_assert_str_eq(size->flag, "--size");
    ck_assert_ptr_nonnull(lengths);
    ck_assert_ptr_nonnull(curve);
    FigureValue value;
    Error error;
    const char *problem = error.message;   /* what the reads below write */
    static const char *const bad_integers[] = {"0", "513", "20x", "1e3", "20.0", "", "5,6"};
    for (size_t i = 0; i < sizeof bad_integers / sizeof bad_integers[0]; i++) {
        ck_assert_msg(!figure_option_read(size, bad_integers[i], true, &value, &error), "%s", bad_integers[i]);
        ck_assert_ptr_nonnull(strstr(problem, "--size expects an integer from 1 to 512"));
    }
    ck_assert(figure_option_read(size, " +3", true, &value, &error));
    ck_assert_double_eq(value.number[0], 3);   /* as parse_integer reads it */
    ck_assert(!figure_option_read(size, NULL, true, &value, &error));
    ck_assert_ptr_nonnull(strstr(problem, "got 'nothing'"));
    static const char *const bad_lists[] = {"9,,5", "9,5,", ",9", "9;5", "1,5"};
    for (size_t i = 0; i < sizeof bad_lists / sizeof bad_lists[0]; i++)
        ck_assert_msg(!figure_option_read(lengths, bad_lists[i], true, &value, &error), "%s", bad_lists[i]);
    ck_assert(figure_option_read(lengths, "9,5", true, &value, &error));
    ck_assert_int_eq(value.count, 2);
    static const char *const bad_records[] = {"x=3", "d=", "d=5,", "d=5,q=1", "dw=3", "=4",
                                              "d=5 w=3", "w=-1"};
    for (size_t i = 0; i < sizeof bad_records / sizeof bad_records[0]; i++) {
        ck_assert_msg(!figure_option_read(curve, bad_records[i], true, &value, &error), "%s", bad_records[i]);
        ck_assert_ptr_nonnull(strstr(problem, "--curve expects"));
    }
    ck_assert(figure_option_read(curve, "w=2000", true, &value, &error));
    ck_assert(figure_option_read(curve, "f=0.5,d=64", false, &value, &error));
    ck_assert_int_eq(value.count, 6);
    FigureValue full = value;
    for (int more = 2; more < FIGURE_MAX_NUMBERS / 3; more++)
        ck_assert(figure_option_read(curve, "w=1", false, &full, &error));
    ck_assert(!figure_option_read(curve, "w=1", false, &full, &error));
    ck_assert_str_eq(problem, "--curve given too often (at most 8 times)");
    static const double expected[6] = {512, 1, 2000, 64, 0.5, 4000};
    for (int i = 0; i < 6; i++) ck_assert_double_eq(value.number[i], expected[i]);
}
END_TEST

Suite *figure_suite(void)
{
    Suite *suite = suite_create("figure data");
    TCase *data = tcase_create("figure data");
    tcase_add_test(data, figure_mask_subsequent_numbers);
    tcase_add_test(data, figure_mask_batch_numbers);
    tcase_add_test(data, figure_positional_encoding_numbers);
    tcase_add_test(data, figure_files_match_the_code);
    tcase_add_test(data, figure_table_is_well_formed);
    tcase_add_test(data, figure_learning_rate_follows_its_curves);
    tcase_add_test(data, figure_mask_batch_follows_its_lengths);
    tcase_add_test(data, figure_positional_encoding_follows_its_dimensions);
    tcase_add_test(data, figure_label_smoothing_follows_epsilon_and_vocabulary);
    tcase_add_test(data, figure_header_reproduces_the_data);
    tcase_add_test(data, figure_heads_reads_every_column);
    tcase_add_test(data, figure_temperature_flattens_the_weights);
    tcase_add_test(data, figure_options_refuse_bad_values);
    suite_add_tcase(suite, data);
    return suite;
}
