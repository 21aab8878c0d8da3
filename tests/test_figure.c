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
        char *text = figure_text("mask subsequent", (int[]){size});
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
   and j <= i. The sentences are those of the book's Figure 3.2; the counts those of the
   solution of Exercise 3.1. */
START_TEST(figure_mask_batch_numbers)
{
    static const char *const first_words[3][3] = {
        {"<s>", "a", "dog"}, {"<s>", "two", "men"}, {"<s>", "children", "play"}};
    static const int expected_ones[3] = {36, 30, 30};
    static const int expected_padding[3] = {0, 3, 3};
    for (int s = 1; s <= 3; s++) {
        char *text = figure_text("mask batch", (int[]){s});
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

/* Figure 5.1: position, then dimensions 4..7 of the table for d_model = 20, checked against
   Equation 5.2 evaluated here. */
START_TEST(figure_positional_encoding_numbers)
{
    char *text = figure_text("pe", (int[]){100, 20, 4});
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
    char buffer[16384];
    size_t length = fread(buffer, 1, sizeof buffer - 1, file);
    fclose(file);
    buffer[length] = '\0';
    ck_assert_str_eq(buffer, expected);
}

START_TEST(figure_files_match_the_code)
{
    char *text = figure_text("mask subsequent", (int[]){20});
    assert_file_equals("figures/mask-subsequent.dat", text);
    free(text);
    for (int s = 1; s <= 3; s++) {
        char path[64];
        snprintf(path, sizeof path, "figures/mask-batch-%d.dat", s);
        text = figure_text("mask batch", (int[]){s});
        assert_file_equals(path, text);
        free(text);
    }
    text = figure_text("pe", (int[]){100, 20, 4});
    assert_file_equals("figures/positional-encoding.dat", text);
    free(text);
}
END_TEST

/* Every figure kind has a name, a summary and options whose defaults lie in their range. */
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
            ck_assert_int_le(option->low, option->fallback);
            ck_assert_int_le(option->fallback, option->high);
        }
    }
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
    suite_add_tcase(suite, data);
    return suite;
}
