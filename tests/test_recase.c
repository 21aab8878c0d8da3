/* test_recase.c -- capital letters (book/recase.nw): the recaser's lowercasing against the
   tokenizer's, the table learned from cased text (votes outside a line's first token, the
   most frequent form, the lowercase form on a tie), its text read back and its refusals,
   recasing a line, the table kept by the model file, and the translator's capitals and
   --lowercase on the command line. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "modelfile.h"
#include "recase.h"
#include "tests.h"
#include "text.h"
#include "translator.h"
#include "utf8.h"

static void temporary_path(char *path, size_t size, const char *name)
{
    snprintf(path, size, "/tmp/transformer-recase-%ld-%s", (long)getpid(), name);
}

/* The table learned from text (lines of cased English). */
static void learn(Recaser *r, const char *text)
{
    char path[256];
    temporary_path(path, sizeof path, "cased.en");
    FILE *out = fopen(path, "w");
    ck_assert_ptr_nonnull(out);
    fputs(text, out);
    ck_assert_int_eq(fclose(out), 0);
    TokenizedFile file;
    ck_assert_ptr_null(tokenize_file(path, (TextOptions){TEXT_ENGLISH, false}, &file));
    recaser_learn(r, &file, file.lines);
    tokenized_file_free(&file);
    unlink(path);
}

/* Run the shell command made of format and its arguments; its exit status. */
static int shell(const char *format, ...)
{
    char command[4096];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(command, sizeof command, format, arguments);
    va_end(arguments);
    return system(command);
}

static const char *recased(const Recaser *r, const char *line)
{
    static char buffer[256];
    snprintf(buffer, sizeof buffer, "%s", line);
    recase_line(r, buffer);
    return buffer;
}

/* For every character of U+0021-U+00FF that the tokenizer keeps as one token, the form
   "C" of the word the tokenizer makes of it is accepted (the recaser lowercases as the
   tokenizer does), and a form whose lowercase is another word is refused. */
START_TEST(recaser_lowercases_as_the_tokenizer)
{
    static TextLine line;
    int letters = 0;
    for (uint32_t c = 0x21; c <= 0xFF; c++) {
        char form[8], text[64];
        Error error;
        const int n = utf8_encode(c, form);
        form[n] = '\0';
        /* a character the tokenizer keeps as it is, one token, then lowercases */
        if (tokenize_line((TextOptions){TEXT_ENGLISH, false}, form, (size_t)n, &line)
            || line.count != 1 || strcmp(line.text, form) != 0
            || tokenize_line((TextOptions){TEXT_ENGLISH, true}, form, (size_t)n, &line))
            continue;
        Recaser r;
        snprintf(text, sizeof text, "%.8s %s\n", line.text, form);
        ck_assert_msg(recaser_read(&r, text, &error) == NULL, "U+%04X: %s", (unsigned)c, error.message);
        recaser_free(&r);
        letters += strcmp(line.text, form) != 0;
    }
    ck_assert_int_eq(letters, 26 + 30);   /* A-Z, U+00C0-U+00DE without U+00D7 */
    Recaser r;
    Error error;
    ck_assert_ptr_nonnull(recaser_read(&r, "b A\n", &error));
    ck_assert_str_eq(error.message, "recaser line 1 has a form that is not its word");
}
END_TEST

START_TEST(recaser_learns_each_words_usual_form)
{
    Recaser r;
    learn(&r, "The dog saw Boston .\n"
              "A man from Boston and I .\n"
              "Boston is where I live .\n"      /* first token: no vote */
              "We met The Who and the band .\n"  /* "the" 1, "The" 1: a tie, lowercase */
              "Now Paris , now paris , now Paris .\n");
    ck_assert_int_eq(r.count, 4);
    ck_assert_str_eq(r.word[0], "boston");
    ck_assert_str_eq(r.form[0], "Boston");
    ck_assert_str_eq(r.word[1], "i");
    ck_assert_str_eq(r.form[1], "I");
    ck_assert_str_eq(r.word[2], "paris");
    ck_assert_str_eq(r.form[2], "Paris");
    ck_assert_str_eq(r.word[3], "who");
    ck_assert_str_eq(r.form[3], "Who");
    /* its text reads back as the same table */
    char *text = recaser_text(&r);
    Error error;
    ck_assert_str_eq(text, "boston Boston\ni I\nparis Paris\nwho Who\n");
    Recaser back;
    ck_assert_ptr_null(recaser_read(&back, text, &error));
    ck_assert_int_eq(back.count, 4);
    ck_assert_str_eq(back.form[2], "Paris");
    recaser_free(&back), free(text), recaser_free(&r);
}
END_TEST

START_TEST(recaser_refuses_a_table_it_cannot_use)
{
    static const struct { const char *text, *message; } bad[] = {
        {"i I", "recaser line 1 has no newline"},
        {"i I\nboston\n", "recaser line 2 is not 'word form'"},
        {" I\n", "recaser line 1 is not 'word form'"},
        {"paris Paris\nboston Boston\n", "recaser line 2 is out of order"},
        {"i I\ni I\n", "recaser line 2 is out of order"},
        {"paris PaRiS\nrome Milan\n", "recaser line 2 has a form that is not its word"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        Recaser r;
        Error error;
        ck_assert_ptr_nonnull(recaser_read(&r, bad[i].text, &error));
        ck_assert_str_eq(error.message, bad[i].message);
        ck_assert_int_eq(r.count, 0);
    }
    Recaser empty;
    Error error;
    ck_assert_ptr_null(recaser_read(&empty, "", &error));
    ck_assert_int_eq(empty.count, 0);
    recaser_free(&empty);
}
END_TEST

START_TEST(recase_line_writes_forms_and_raises_the_first_letter)
{
    Recaser r;
    Error error;
    ck_assert_ptr_null(recaser_read(&r, "boston Boston\ni I\n\xc3\xa9mile \xc3\x89mile\n", &error));
    ck_assert_str_eq(recased(&r, "a man from boston ."), "A man from Boston .");
    ck_assert_str_eq(recased(&r, "\" i think so , \" he said ."), "\" I think so , \" he said .");
    ck_assert_str_eq(recased(&r, "( the dog ) ."), "( The dog ) .");
    ck_assert_str_eq(recased(&r, "2 dogs in boston"), "2 dogs in Boston");
    ck_assert_str_eq(recased(&r, "\xc3\xa9t\xc3\xa9 in paris"), "\xc3\x89t\xc3\xa9 in paris");
    ck_assert_str_eq(recased(&r, "\xc3\xa9mile ."), "\xc3\x89mile .");
    ck_assert_str_eq(recased(&r, "bostonian"), "Bostonian");   /* not in the table */
    ck_assert_str_eq(recased(&r, ""), "");
    recaser_free(&r);
}
END_TEST

/* A model file keeps the target vocabulary's table; a file without one loads with none. */
START_TEST(model_file_keeps_the_recaser)
{
    Config config = config_default(10, 10, 1);
    config.d_model = 8, config.d_ff = 16, config.heads = 2, config.max_len = 12;
    Model model;
    model_init(&model, config);
    Vocab src, tgt;
    static char *const tokens[6] = {"a", "b", "c", "d", "e", "f"};
    vocab_build(&src, tokens, 6, 1), vocab_build(&tgt, tokens, 6, 1);
    char path[256], bare[256];
    Error error;
    temporary_path(path, sizeof path, "model.safetensors");
    temporary_path(bare, sizeof bare, "bare.safetensors");
    Error failed;
    ck_assert_ptr_null(translation_model_save(bare, &model, &src, &tgt, false, &failed));
    ck_assert_ptr_null(recaser_read(&tgt.cases, "a A\nf F\n", &error));
    ck_assert_ptr_null(translation_model_save(path, &model, &src, &tgt, false, &failed));
    Model back;
    Vocab src_back, tgt_back;
    Safetensors file;
    const char *loaded = translation_model_load(path, &back, &src_back, &tgt_back, &file);
    ck_assert_msg(loaded == NULL, "%s", loaded);
    ck_assert_int_eq(tgt_back.cases.count, 2);
    ck_assert_str_eq(tgt_back.cases.form[1], "F");
    ck_assert_int_eq(src_back.cases.count, 0);
    safetensors_free(&file), model_free(&back), vocab_free(&src_back), vocab_free(&tgt_back);
    loaded = translation_model_load(bare, &back, &src_back, &tgt_back, &file);
    ck_assert_msg(loaded == NULL, "%s", loaded);
    ck_assert_int_eq(tgt_back.cases.count, 0);
    safetensors_free(&file), model_free(&back), vocab_free(&src_back), vocab_free(&tgt_back);
    unlink(path), unlink(bare);
    model_free(&model), vocab_free(&src), vocab_free(&tgt);
}
END_TEST

/* The shipped translator, its table learned anew by transformer average --recaser: the same
   English with its capitals, and with --lowercase the lowercase text of the file without
   one. */
START_TEST(cli_translate_writes_capitals_and_lowercase_on_request)
{
    const char *t = transformer_binary();
    char model[256], out[256];
    temporary_path(model, sizeof model, "cased.safetensors");
    temporary_path(out, sizeof out, "out.en");
    ck_assert_int_eq(shell("%s average data/multi30k-de-en.safetensors --bf16 --recaser "
                           "data/multi30k/train.en --output %s > /dev/null", t, model), 0);
    ck_assert_int_eq(shell("printf 'Zwei Hunde spielen in Boston.\\n\\nEin Mann.\\n' | %s "
                           "translate --model %s > %s && printf 'Zwei Hunde spielen in "
                           "Boston.\\n' | %s translate --model %s --lowercase >> %s",
                           t, model, out, t, model, out), 0);
    FILE *in = fopen(out, "r");
    ck_assert_ptr_nonnull(in);
    char lines[4][256];
    for (int i = 0; i < 4; i++) ck_assert_ptr_nonnull(fgets(lines[i], sizeof lines[i], in));
    fclose(in);
    ck_assert_msg(lines[0][0] == 'T' && strstr(lines[0], "Boston"), "%s", lines[0]);
    ck_assert_str_eq(lines[1], "\n");
    ck_assert_int_eq(lines[2][0], 'A');
    ck_assert_msg(lines[3][0] == 't' && strstr(lines[3], "boston"), "%s", lines[3]);
    unlink(model), unlink(out);
}
END_TEST

/* transformer recase of what translate --lowercase prints is what translate prints, on the
   first 40 lines of test2016 (the book scores recorded lowercase translations this way). */
START_TEST(recase_command_agrees_with_translate)
{
    const char *t = transformer_binary();
    char cased[256], lower[256];
    temporary_path(cased, sizeof cased, "cased.en");
    temporary_path(lower, sizeof lower, "recased.en");
    ck_assert_int_eq(shell("head -40 data/multi30k/test2016.de | %s translate > %s && "
                           "head -40 data/multi30k/test2016.de | %s translate --lowercase | "
                           "%s recase > %s && cmp -s %s %s", t, cased, t, t, lower, cased,
                           lower), 0);
    static char text[65536];
    read_text(cased, text, sizeof text);
    ck_assert_msg(text[0] >= 'A' && text[0] <= 'Z', "%.80s", text);
    unlink(cased), unlink(lower);
}
END_TEST

Suite *recase_suite(void)
{
    Suite *suite = suite_create("recase");
    TCase *recaser = tcase_create("recaser");
    tcase_add_test(recaser, recaser_lowercases_as_the_tokenizer);
    tcase_add_test(recaser, recaser_learns_each_words_usual_form);
    tcase_add_test(recaser, recaser_refuses_a_table_it_cannot_use);
    tcase_add_test(recaser, recase_line_writes_forms_and_raises_the_first_letter);
    tcase_add_test(recaser, model_file_keeps_the_recaser);
    tcase_add_test(recaser, cli_translate_writes_capitals_and_lowercase_on_request);
    tcase_add_test(recaser, recase_command_agrees_with_translate);
    suite_add_tcase(suite, recaser);
    return suite;
}
