/* test_architecture.c -- figure-data architecture: the sizes and parameter counts that the
   architecture figure of the first chapter prints, against counts derived here independently. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "figure.h"
#include "tests.h"

/* The value of \archNAME in the figure's text, thin spaces (\,) removed; -1 if absent. */
static long long macro_value(const char *text, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\\newcommand{\\arch%s}{", name);
    const char *at = strstr(text, key);
    if (at == NULL) return -1;
    long long value = 0;
    for (at += strlen(key); *at != '}'; at++) {
        if (*at == '\\' && at[1] == ',') { at++; continue; }
        ck_assert_msg(*at >= '0' && *at <= '9', "macro %s is not a number", name);
        value = value * 10 + (*at - '0');
    }
    return value;
}

/* The copy model (V = 11, N = 2, 512, 2048, 8 heads): 14 731 787 parameters, the count of the
   PyTorch reference (tests/golden/parameter-counts.txt, the model chapter's table of counts),
   split by the formulas of its section on initialization: attention 4(d^2 + d), feed-forward
   2 d d_ff + d_ff + d, norm 2d. */
START_TEST(architecture_counts_of_the_copy_model)
{
    char *text = figure_text("architecture", "--layers 2 --d-model 512 --d-ff 2048 --heads 8"
                                                " --src-vocab 11 --tgt-vocab 11");
    long long d = 512, d_ff = 2048, n = 2, v = 11;
    long long attention = 4 * (d * d + d), feed_forward = 2 * d * d_ff + d_ff + d;
    ck_assert_int_eq(macro_value(text, "Total"), 14731787);
    ck_assert_int_eq(macro_value(text, "Attention"), attention);
    ck_assert_int_eq(macro_value(text, "FeedForward"), feed_forward);
    ck_assert_int_eq(macro_value(text, "Norm"), 2 * d);
    ck_assert_int_eq(macro_value(text, "EncoderLayer"), attention + feed_forward + 2 * 2 * d);
    ck_assert_int_eq(macro_value(text, "DecoderLayer"),
                     2 * attention + feed_forward + 3 * 2 * d);
    ck_assert_int_eq(macro_value(text, "AttentionTotal"), 3 * n * attention);
    ck_assert_int_eq(macro_value(text, "FeedForwardTotal"), 2 * n * feed_forward);
    ck_assert_int_eq(macro_value(text, "NormTotal"), 5 * n * 2 * d + 2 * 2 * d);
    ck_assert_int_eq(macro_value(text, "EmbeddingTotal"), 2 * v * d);
    ck_assert_int_eq(macro_value(text, "GeneratorTotal"), v * (d + 1));
    ck_assert_int_eq(macro_value(text, "Dk"), 64);
    ck_assert_int_eq(macro_value(text, "Dff"), 2048);
    free(text);
}
END_TEST

/* The base model with the reference's Multi30k vocabularies: 54 941 424 (the same table), and
   the parts add up to the total. */
START_TEST(architecture_parts_add_up_for_the_base_model)
{
    char *text = figure_text("architecture", "--layers 6 --d-model 512 --d-ff 2048 --heads 8"
                                                " --src-vocab 8315 --tgt-vocab 6384");
    long long total = macro_value(text, "Total"), sum = 0;
    ck_assert_int_eq(total, 54941424);
    const char *parts[] = {"AttentionTotal", "FeedForwardTotal", "NormTotal", "EmbeddingTotal",
                           "GeneratorTotal"};
    for (int p = 0; p < 5; p++) {
        long long count = macro_value(text, parts[p]);
        ck_assert_int_gt(count, 0);
        sum += count;
    }
    ck_assert_int_eq(sum, total);
    ck_assert_int_eq(macro_value(text, "SrcEmbedding"), 8315LL * 512);
    free(text);
}
END_TEST

/* A width that the heads do not divide is one usage line and a non-zero exit. */
START_TEST(architecture_refuses_heads_that_do_not_divide)
{
    const Run *result = run("", "figure-data architecture --d-model 100 --heads 8");
    ck_assert_int_ne(result->status, 0);
    ck_assert_ptr_nonnull(strstr(result->err, "multiple of --heads"));
    ck_assert_str_eq(result->out, "");
}
END_TEST

Suite *architecture_suite(void)
{
    Suite *suite = suite_create("architecture");
    TCase *data = tcase_create("architecture");
    tcase_add_test(data, architecture_counts_of_the_copy_model);
    tcase_add_test(data, architecture_parts_add_up_for_the_base_model);
    tcase_add_test(data, architecture_refuses_heads_that_do_not_divide);
    suite_add_tcase(suite, data);
    return suite;
}
