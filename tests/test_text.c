/* test_text.c -- text to tokens (book/text.nw): the tokenizer on tricky lines of the corpus
   and on rules the corpus does not reach, its lowercasing, the refusal of bad lines with one
   message naming the byte, the file and the line, the detokenizer, the agreement with the
   Moses-tokenized reference, the vocabulary and its subwords (byte-pair encoding), and the
   tokenize and vocab commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests.h"
#include "text.h"
#include "vocab.h"
#include "utf8.h"

static const TextOptions english = {TEXT_ENGLISH, true}, german = {TEXT_GERMAN, true};

static void assert_tokens(TextOptions options, const char *line, const char *expected)
{
    static TextLine result;
    const char *error = tokenize_line(options, line, strlen(line), &result);
    ck_assert_msg(error == NULL, "'%s' refused: %s", line, error);
    ck_assert_msg(strcmp(result.text, expected) == 0,
                  "'%s'\n  gave     '%s'\n  expected '%s'", line, result.text, expected);
    int spaces = 0;
    for (const char *c = result.text; *c; c++) spaces += *c == ' ';
    ck_assert_int_eq(result.count, spaces + 1);
}

/* Lines of the training files (some shortened) with the reference's tokens, its escapes
   undone; except for &amp;, which Moses splits into "& amp ;" and we decode. */
START_TEST(text_tokenizes_tricky_corpus_lines)
{
    assert_tokens(german, "Ein Mann macht das \xE2\x80\x9EHook \xE2\x80\x99" "em "
                          "Horns\xE2\x80\x9C-Zeichen. ",
                  "ein mann macht das \" hook \" em horns \" -zeichen .");
    assert_tokens(german, "Eine Frau verl\xC3\xA4sst Trader Joe\xE2\x80\x98s, mit einem Wagen.",
                  "eine frau verl\xC3\xA4sst trader joe ' s , mit einem wagen .");
    assert_tokens(german, "Arbeiter um B\xC3\xBCsche neben einem Schild von McDonald\xE2\x80\x99s.",
                  "arbeiter um b\xC3\xBCsche neben einem schild von mcdonald ' s.");
    assert_tokens(german, "Ein junger Mann sieht sich eine Levi\xE2\x80\x98s Anzeige an, die "
                          "sagt: \xE2\x80\x9EWir sind alle Arbeitnehmer.\xE2\x80\x9C",
                  "ein junger mann sieht sich eine levi ' s anzeige an , die sagt : \" wir "
                  "sind alle arbeitnehmer \" .");
    assert_tokens(german, "Ein M\xC3\xA4" "dchen macht ein Bild von Freund/in, der/die lehnt.",
                  "ein m\xC3\xA4" "dchen macht ein bild von freund / in , der / die lehnt .");
    assert_tokens(german, "Ein Hund mit der Nummer\xC2\xA0" "6 nimmt an einem Rennen teil.",
                  "ein hund mit der nummer 6 nimmt an einem rennen teil .");
    assert_tokens(german, "Ein Paar,  das\tmit einem Luftballon unterwegs ist.  ",
                  "ein paar , das mit einem luftballon unterwegs ist .");
    assert_tokens(german, "Ein Mann in einem schwarz-gelben T-Shirt \xE2\x80\x93 am 3. Mai.",
                  "ein mann in einem schwarz-gelben t-shirt - am 3. mai .");
    assert_tokens(german, "Ein Schild mit der Aufschrift \xE2\x80\x9E" "50 %\xE2\x80\x9C.",
                  "ein schild mit der aufschrift \" 50 % \" .");
    assert_tokens(german, "Windhunde laufen und Nr. 8 ist in F\xC3\xBChrung.",
                  "windhunde laufen und nr . 8 ist in f\xC3\xBChrung .");
    assert_tokens(german, "Ein Mann mit einen blauen # 5-Trikot, schl\xC3\xA4gt einen Softball.",
                  "ein mann mit einen blauen # 5-trikot , schl\xC3\xA4gt einen softball .");
    assert_tokens(german, "Flugbegleiter_in zeigt, wie die Rettungswesten verwendet werden,",
                  "flugbegleiter _ in zeigt , wie die rettungswesten verwendet werden ,");
    assert_tokens(german, "@@", "@ @");
    assert_tokens(english, "A little-league baseball player, wearing a white #19 jersey.",
                  "a little-league baseball player , wearing a white # 19 jersey .");
    assert_tokens(english, "A gas station name m&amp;h with gas the price of $ 2.52.",
                  "a gas station name m & h with gas the price of $ 2.52 .");
    assert_tokens(english, "Texas A&amp;M's Ryan Tannehill is nearly sacked.",
                  "texas a & m 's ryan tannehill is nearly sacked .");
    assert_tokens(english, "A giant ruler at \"Washington Farms\".",
                  "a giant ruler at \" washington farms . \"");
    assert_tokens(english, "The images aren't showing up, so I 'm going to assume it.",
                  "the images aren 't showing up , so i ' m going to assume it .");
    assert_tokens(english, "The soccer ball over #5's head and the dogs' bowls.",
                  "the soccer ball over # 5 's head and the dogs ' bowls .");
    assert_tokens(english, "The baby is sitting in an adult'", "the baby is sitting in an adult'");
    assert_tokens(english, "A man and a woman on a motorcycle .`",
                  "a man and a woman on a motorcycle . '");
    assert_tokens(english, "A man is standing in front of a Prince St. cafe.",
                  "a man is standing in front of a prince st. cafe .");
    assert_tokens(english, "People are standing near 3rd St.", "people are standing near 3rd st .");
    assert_tokens(english, "Paper cutouts of the letter \"P\".",
                  "paper cutouts of the letter \" p . \"");
    assert_tokens(english, "A s.c.u.b.a. diver is doing the splits. Located on a mountain.",
                  "a s.c.u.b.a. diver is doing the splits. located on a mountain .");
}
END_TEST

/* Rules that no line of the corpus needs; the expected tokens are those of the Moses
   scripts (commit 3a0631a), escapes undone. */
START_TEST(text_tokenizes_beyond_the_corpus)
{
    assert_tokens(english, "He said ''hello'' and left.", "he said \" hello \" and left .");
    assert_tokens(english, "Rock 'n' roll in the 1990's, 'twas fun.",
                  "rock ' n ' roll in the 1990 's , ' twas fun .");
    assert_tokens(english, "Prices: 12 500 dollars, 3,5 or 1,500; etc...",
                  "prices : 12 500 dollars , 3,5 or 1,500 ; etc ...");
    assert_tokens(english, "Prices: 12\xC2\xA0" "500 dollars.", "prices : 12.500 dollars .");
    assert_tokens(german, "Es kostet 12\xC2\xA0" "500 Euro.", "es kostet 12,500 euro .");
    assert_tokens(english, "Text \xE2\x80\xA6 more \xE2\x80\x94 and \xE2\x80\x93 dash",
                  "text ... more - and - dash");
    assert_tokens(english, "She said \"Stop.\" Then, \"go\", he said.",
                  "she said \" stop . \" then , \" go , \" he said .");
    assert_tokens(english, "Mr. Smith met Dr. Who at 5 p.m. today.",
                  "mr. smith met dr. who at 5 p.m. today .");
    assert_tokens(german, "Er sagte: \xE2\x80\x9EHallo\xE2\x80\x9C, und ging.",
                  "er sagte : \" hallo \" , und ging .");
    assert_tokens(german, "\xE2\x80\x9EHallo,\xE2\x80\x9C sagte er.",
                  "\" hallo \" , sagte er .");
    assert_tokens(german, "Er sagte \xE2\x80\x9EHallo.\xE2\x80\x9C Dann ging er.",
                  "er sagte \" hallo \" . dann ging er .");
    assert_tokens(german, "Am 3. Mai kostet es 12 500 Euro, d.h. viel.",
                  "am 3. mai kostet es 12 500 euro , d.h. viel .");
    assert_tokens(german, "Der Mann (links) tr\xC3\xA4gt ein T-Shirt.",
                  "der mann ( links ) tr\xC3\xA4gt ein t-shirt .");
    /* A control character other than a space is dropped; a byte order mark too. */
    assert_tokens(english, "\xEF\xBB\xBF" "a\x1B" "b c", "ab c");
}
END_TEST

START_TEST(text_lowercases_ascii_and_latin1)
{
    assert_tokens(german, "\xC3\x84PFEL \xC3\x96L \xC3\x9C" "BER STRA\xC3\x9F" "E \xC3\x80 LA "
                          "CR\xC3\x88ME \xC3\x91" "AND\xC3\x9A",
                  "\xC3\xA4pfel \xC3\xB6l \xC3\xBC" "ber stra\xC3\x9F" "e \xC3\xA0 la "
                  "cr\xC3\xA8me \xC3\xB1" "and\xC3\xBA");
    /* The multiplication sign U+00D7 sits among the capitals but is no letter; the capital
       sharp s U+1E9E and Greek are beyond Latin-1 and keep their case. */
    assert_tokens(english, "2\xC3\x97" "3 \xE1\xBA\x9E \xCE\xA9",
                  "2 \xC3\x97 3 \xE1\xBA\x9E \xCE\xA9");
    const TextOptions cased = {TEXT_GERMAN, false};
    assert_tokens(cased, "\xC3\x84pfel und Birnen.", "\xC3\x84pfel und Birnen .");
    /* Cased, "Nr" is an abbreviation and the ordinal stays whole at the end of the line. */
    assert_tokens(cased, "Mr. Potato Head am Nr. 5.", "Mr. Potato Head am Nr. 5.");
}
END_TEST

static void assert_refused(TextOptions options, const char *line, size_t length,
                           const char *says)
{
    static TextLine result;
    const char *error = tokenize_line(options, line, length, &result);
    ck_assert_msg(error != NULL, "'%.40s' accepted as '%s'", line, result.text);
    ck_assert_msg(strstr(error, says) != NULL, "'%s' not in '%s'", says, error);
    ck_assert_msg(strchr(error, '\n') == NULL, "not one line: %s", error);
}

START_TEST(text_refuses_invalid_utf8_and_empty_lines)
{
    static const struct { const char *line, *says; } bad[] = {
        {"a\xFF", "invalid UTF-8 at byte 2: a byte that UTF-8 never uses (0xFF)"},
        {"\x80", "byte 1: a continuation byte without a leading byte (0x80)"},
        {"ab\xC0\xAF", "byte 3: an overlong encoding (0xC0)"},
        {"\xE0\x80\xAF", "byte 1: an overlong encoding (0xE0 0x80 0xAF)"},
        {"\xF0\x80\x80\xAF", "byte 1: an overlong encoding (0xF0 0x80 0x80 0xAF)"},
        {"\xED\xA0\x80", "byte 1: a surrogate (0xED 0xA0 0x80)"},
        {"\xED\xBF\xBF", "byte 1: a surrogate (0xED 0xBF 0xBF)"},
        {"\xF4\x90\x80\x80", "byte 1: a code point beyond U+10FFFF (0xF4 0x90 0x80 0x80)"},
        {"abc\xC3", "byte 4: a truncated sequence (0xC3)"},
        {"\xE2\x80x", "byte 1: a truncated sequence (0xE2 0x80 0x78)"},
        {"", "empty line"},
        {" \t\xC2\xA0 ", "empty line"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_refused(english, bad[i].line, strlen(bad[i].line), bad[i].says);
    assert_refused(english, "a\0b", 3, "a NUL byte at byte 2");
    /* The last code point, and the last ones before and after the surrogates, pass. */
    assert_tokens(english, "\xF4\x8F\xBF\xBF \xED\x9F\xBF \xEE\x80\x80",
                  "\xF4\x8F\xBF\xBF \xED\x9F\xBF \xEE\x80\x80");
}
END_TEST

/* 1000 bytes pass and 1001 do not; and no line of 1000 bytes, however full of punctuation,
   overflows a buffer: the tokens are at most twice as long as the line. */
START_TEST(text_line_length_limits)
{
    static char line[TEXT_MAX_LINE_BYTES + 2];
    static TextLine result;
    memset(line, 'a', TEXT_MAX_LINE_BYTES + 1);
    assert_refused(english, line, TEXT_MAX_LINE_BYTES + 1,
                   "line too long: 1001 bytes (at most 1000)");
    ck_assert_ptr_null(tokenize_line(english, line, TEXT_MAX_LINE_BYTES, &result));
    ck_assert_int_eq(result.count, 1);
    static const char *const patterns[] = {
        "(", "''", "a''", "\xE2\x80\xA6", "\xE2\x80\x94", "a\xE2\x80\x94", "&amp;",
        "a.", "a'", ",", "a,", "..", "\xE2\x80\x9E", "'a", "1\xC2\xA0"};
    for (int language = 0; language < 2; language++)
        for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
            const size_t size = strlen(patterns[p]), copies = TEXT_MAX_LINE_BYTES / size;
            for (size_t k = 0; k < copies; k++) memcpy(line + k * size, patterns[p], size);
            const TextOptions options = {language ? TEXT_GERMAN : TEXT_ENGLISH, true};
            const char *error = tokenize_line(options, line, copies * size, &result);
            ck_assert_msg(error == NULL, "'%s' x %zu: %s", patterns[p], copies, error);
            ck_assert_uint_le(strlen(result.text), 2 * copies * size);
        }
}
END_TEST

static void temporary_path(char *path, size_t size, const char *name)
{
    snprintf(path, size, "/tmp/transformer-test-%ld-%s", (long)getpid(), name);
}

static void write_file(const char *path, const char *text, size_t length)
{
    FILE *out = fopen(path, "wb");
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(fwrite(text, 1, length, out), length);
    ck_assert_int_eq(fclose(out), 0);
}

static void assert_starts_with(const char *text, const char *start)
{
    ck_assert_msg(text && strncmp(text, start, strlen(start)) == 0, "expected '%s...', got '%s'",
                  start, text);
    ck_assert_msg(strchr(text, '\n') == NULL, "not one line: %s", text);
}

/* A file whose third line is bad is refused with "PATH:3: ...". */
START_TEST(text_file_errors_name_the_file_and_line)
{
    static const struct { const char *text, *says; } bad[] = {
        {"A dog.\nA cat.\nA \xC3\x28 bird.\n", ":3: invalid UTF-8 at byte 3"},
        {"A dog.\nA cat.\n\nA bird.\n", ":3: empty line"},
        {"A dog.\nA cat.\n   \n", ":3: empty line"}};
    char path[128], expected[256];
    temporary_path(path, sizeof path, "bad.txt");
    TokenizedFile file;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(path, bad[i].text, strlen(bad[i].text));
        snprintf(expected, sizeof expected, "%s%s", path, bad[i].says);
        assert_starts_with(tokenize_file(path, english, &file), expected);
        tokenized_file_free(&file);
    }
    /* 999 letters and a full stop make the longest line; the last line has no newline. */
    static char text[2 * TEXT_MAX_LINE_BYTES];
    memset(text, 'a', TEXT_MAX_LINE_BYTES - 1);
    strcpy(text + TEXT_MAX_LINE_BYTES - 1, ".\nb");
    write_file(path, text, strlen(text));
    ck_assert_ptr_null(tokenize_file(path, english, &file));
    ck_assert_int_eq(file.lines, 2);
    ck_assert_int_eq(file.count, 3);
    ck_assert_int_eq(file.line_start[0], 0);
    ck_assert_int_eq(file.line_start[1], 2);
    ck_assert_int_eq(file.line_start[2], 3);
    ck_assert_uint_eq(strlen(file.token[0]), TEXT_MAX_LINE_BYTES - 1);
    ck_assert_str_eq(file.token[1], ".");
    ck_assert_str_eq(file.token[2], "b");
    tokenized_file_free(&file);
    memset(text, 'a', TEXT_MAX_LINE_BYTES + 1);
    strcpy(text + TEXT_MAX_LINE_BYTES + 1, "\n");
    write_file(path, text, strlen(text));
    snprintf(expected, sizeof expected, "%s:1: line too long: 1001 bytes", path);
    assert_starts_with(tokenize_file(path, english, &file), expected);
    tokenized_file_free(&file);
    unlink(path);
    snprintf(expected, sizeof expected, "cannot open %s: ", path);
    assert_starts_with(tokenize_file(path, english, &file), expected);
    tokenized_file_free(&file);
}
END_TEST

static void assert_detokenized(const char *tokens, const char *expected)
{
    static TextLine result;
    const char *error = detokenize_line(TEXT_ENGLISH, tokens, strlen(tokens), &result);
    ck_assert_msg(error == NULL, "'%s' refused: %s", tokens, error);
    ck_assert_msg(strcmp(result.text, expected) == 0,
                  "'%s'\n  gave     '%s'\n  expected '%s'", tokens, result.text, expected);
}

START_TEST(text_detokenizes)
{
    assert_detokenized("a dog .", "a dog.");
    assert_detokenized("a man 's hat", "a man's hat");
    assert_detokenized("they aren 't here ; i 'm sure !", "they aren't here; i'm sure!");
    assert_detokenized("a sign that says \" stop \" , in red .",
                       "a sign that says \"stop\", in red.");
    assert_detokenized("the dogs ' bowls", "the dogs' bowls");
    assert_detokenized("a globe about 4 ' wide", "a globe about 4' wide");
    assert_detokenized("while they ' re watching", "while they 're watching");
    assert_detokenized("a sign that says ' free dinner ' .", "a sign that says 'free dinner'.");
    assert_detokenized("jackson 's ' thriller ' video", "jackson's 'thriller' video");
    assert_detokenized("a ( red ) car at 11 : 27 for $ 2.52 , 50 % off ...",
                       "a (red) car at 11:27 for $2.52, 50% off...");
    assert_detokenized("a t-shirt - and # 5 : a", "a t-shirt - and #5: a");
    assert_detokenized("  two   spaces\tand a tab ", "two spaces and a tab");
    static TextLine result;
    ck_assert_ptr_nonnull(strstr(detokenize_line(TEXT_ENGLISH, "  ", 2, &result),
                                 "empty line"));
    ck_assert_ptr_nonnull(strstr(detokenize_line(TEXT_ENGLISH, "a \xC3", 3, &result),
                                 "invalid UTF-8 at byte 3"));
}
END_TEST

/* A file of Multi30k: data/multi30k holds the raw text; the reference tokenization is in
   the shared copy of the Multi30k repository, or also in data/multi30k. */
static FILE *open_corpus(const char *name, char *path, size_t size)
{
    static const char *const directories[] = {"data/multi30k", "../shared/data/multi30k"};
    for (int d = 0; d < 2; d++) {
        snprintf(path, size, "%s/%s", directories[d], name);
        FILE *file = fopen(path, "r");
        if (file) return file;
    }
    ck_abort_msg("%s not found in data/multi30k or ../shared/data/multi30k", name);
    return NULL;
}

/* At least 99% of the validation lines agree with Moses, in both languages (all of them
   do). 1014 lines a language: some 10 ms. */
START_TEST(text_agrees_with_the_reference_on_val)
{
    static const char *const language[2] = {"de", "en"};
    for (int l = 0; l < 2; l++) {
        char raw_name[32], reference_name[48], raw_path[128], reference_path[128];
        snprintf(raw_name, sizeof raw_name, "val.%s", language[l]);
        snprintf(reference_name, sizeof reference_name, "val.lc.norm.tok.%s", language[l]);
        FILE *raw = open_corpus(raw_name, raw_path, sizeof raw_path);
        FILE *reference = open_corpus(reference_name, reference_path, sizeof reference_path);
        Agreement agreement;
        const TextOptions options = {l == 0 ? TEXT_GERMAN : TEXT_ENGLISH, true};
        const char *error = tokenization_agreement(raw, raw_path, reference, reference_path,
                                                   options, NULL, &agreement);
        fclose(raw), fclose(reference);
        ck_assert_msg(error == NULL, "%s", error);
        ck_assert_int_eq(agreement.lines, 1014);
        ck_assert_msg(agreement.identical >= 0.99 * 1014, "%s: %ld of 1014 lines agree",
                      raw_name, agreement.identical);
    }
}
END_TEST

/* The comparison itself: escapes undone, spacing ignored, a different line counted, and a
   reference of the wrong length refused. */
START_TEST(text_agreement_counts_and_refuses)
{
    char raw_path[128], reference_path[128];
    temporary_path(raw_path, sizeof raw_path, "raw.txt");
    temporary_path(reference_path, sizeof reference_path, "reference.txt");
    static const char raw_text[] = "Joe's \"bar\".\nA dog.\nA cat.\n";
    static const char reference_text[] = "joe &apos;s &quot; bar . &quot;\na  dog . \na cat\n";
    write_file(raw_path, raw_text, strlen(raw_text));
    write_file(reference_path, reference_text, strlen(reference_text));
    FILE *raw = fopen(raw_path, "r"), *reference = fopen(reference_path, "r");
    Agreement agreement;
    ck_assert_ptr_null(tokenization_agreement(raw, raw_path, reference, reference_path,
                                              english, NULL, &agreement));
    ck_assert_int_eq(agreement.lines, 3);
    ck_assert_int_eq(agreement.identical, 2);
    fclose(raw), fclose(reference);
    write_file(reference_path, reference_text, 42);   /* its first two lines */
    raw = fopen(raw_path, "r"), reference = fopen(reference_path, "r");
    char expected[256];
    snprintf(expected, sizeof expected, "%s:3: the reference has fewer lines", reference_path);
    assert_starts_with(tokenization_agreement(raw, raw_path, reference, reference_path,
                                              english, NULL, &agreement), expected);
    fclose(raw), fclose(reference);
    unlink(raw_path), unlink(reference_path);
}
END_TEST

/* Tokenize then detokenize the raw English of val: at least 99% come back unchanged. */
START_TEST(text_round_trip_of_val_en)
{
    char path[128];
    FILE *raw = open_corpus("val.en", path, sizeof path);
    static TextLine tokens, text;
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    long lines = 0, same = 0;
    const TextOptions cased = {TEXT_ENGLISH, false};
    while ((length = getline(&line, &capacity, raw)) > 0) {
        line[--length] = '\0';
        ck_assert_ptr_null(tokenize_line(cased, line, (size_t)length, &tokens));
        ck_assert_ptr_null(detokenize_line(TEXT_ENGLISH, tokens.text, strlen(tokens.text),
                                           &text));
        lines++, same += strcmp(text.text, line) == 0;
    }
    free(line);
    fclose(raw);
    ck_assert_int_eq(lines, 1014);
    ck_assert_msg(same >= 0.99 * 1014, "%ld of 1014 lines come back", same);
}
END_TEST

/* Specials first, in the course's order; then by frequency, ties in byte order; a token
   seen once is out; a token spelled like a special is not listed twice. */
START_TEST(text_vocabulary_orders_and_filters)
{
    static const char *const words[] = {"b", "a", "c", "b", "\xC3\xA4", "a", "d", "b",
                                        "\xC3\xA4", "<unk>", "<unk>", "z", "c", "e"};
    const long n = sizeof words / sizeof words[0];
    Vocab vocab;
    vocab_build(&vocab, (char *const *)words, n, 2);
    static const char *const expected[] = {"<s>", "</s>", "<blank>", "<unk>", "b", "a", "c",
                                           "\xC3\xA4"};
    ck_assert_int_eq(vocab.size, 8);
    ck_assert_int_eq(vocab.types, 8);   /* a b c d e z, a-umlaut and <unk> */
    for (int i = 0; i < 8; i++) {
        ck_assert_str_eq(vocab_token(&vocab, i), expected[i]);
        ck_assert_int_eq(vocab_lookup(&vocab, expected[i]), i);
    }
    ck_assert_int_eq(VOCAB_START, 0);
    ck_assert_int_eq(VOCAB_END, 1);
    ck_assert_int_eq(VOCAB_BLANK, 2);   /* the padding index of the course */
    ck_assert_int_eq(VOCAB_UNKNOWN, 3);
    static const char *const unknown[] = {"d", "z", "ahbirf", "A", "b "};
    for (int i = 0; i < 5; i++) ck_assert_int_eq(vocab_lookup(&vocab, unknown[i]), VOCAB_UNKNOWN);
    vocab_free(&vocab);
    vocab_build(&vocab, (char *const *)words, n, 1);
    ck_assert_int_eq(vocab.size, 4 + 7);
    ck_assert_str_eq(vocab_token(&vocab, 8), "d");   /* d e z: once each, in byte order */
    ck_assert_str_eq(vocab_token(&vocab, 9), "e");
    ck_assert_str_eq(vocab_token(&vocab, 10), "z");
    vocab_free(&vocab);
    vocab_build(&vocab, (char *const *)words, n, 3);
    ck_assert_int_eq(vocab.size, 5);
    ck_assert_str_eq(vocab_token(&vocab, 4), "b");
    vocab_free(&vocab);
    vocab_build(&vocab, NULL, 0, 2);
    ck_assert_int_eq(vocab.size, 4);
    ck_assert_int_eq(vocab_lookup(&vocab, "<blank>"), VOCAB_BLANK);
    vocab_free(&vocab);
}
END_TEST

/* The vocabulary of val.en survives a save and a load, and exactly the types seen once
   become <unk>. */
START_TEST(text_vocabulary_round_trip)
{
    char corpus[128], path[128];
    fclose(open_corpus("val.en", corpus, sizeof corpus));
    TokenizedFile file;
    ck_assert_ptr_null(tokenize_file(corpus, english, &file));
    Vocab vocab, loaded;
    vocab_build(&vocab, file.token, file.count, 2);
    ck_assert_int_gt(vocab.size, 500);
    temporary_path(path, sizeof path, "vocab.txt");
    ck_assert_ptr_null(vocab_save(&vocab, path));
    const char *error = vocab_load(&loaded, path);
    ck_assert_msg(error == NULL, "%s", error);
    ck_assert_int_eq(loaded.size, vocab.size);
    for (int i = 0; i < vocab.size; i++) {
        ck_assert_str_eq(vocab_token(&loaded, i), vocab_token(&vocab, i));
        ck_assert_int_eq(vocab_lookup(&loaded, vocab_token(&vocab, i)), i);
    }
    long unknown = 0;
    for (long t = 0; t < file.count; t++)
        unknown += vocab_lookup(&loaded, file.token[t]) == VOCAB_UNKNOWN;
    ck_assert_int_eq(unknown, vocab.types - (vocab.size - VOCAB_SPECIALS));
    vocab_free(&vocab), vocab_free(&loaded);
    tokenized_file_free(&file);
    unlink(path);
}
END_TEST

START_TEST(text_vocabulary_file_errors)
{
    static const char specials[] = "<s>\n</s>\n<blank>\n<unk>\n";
    static const struct { const char *text, *says; } bad[] = {
        {"<s>\n</s>\n<blank>\n", ":4: the four special tokens are missing"},
        {"<s>\n</s>\n<unk>\n<blank>\n", ":3: expected the special token <blank>"},
        {"a\nb\na\n", ":7: a token that is already listed"},
        {"a\n\nb\n", ":6: an empty line"},
        {"a b\n", ":5: a token with a blank in it"},
        {"\xED\xA0\x80\n", ":5: invalid UTF-8 at byte 1: a surrogate"}};
    char path[128], expected[256], text[128];
    temporary_path(path, sizeof path, "bad-vocab.txt");
    Vocab vocab;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s", i < 2 ? "" : specials, bad[i].text);
        write_file(path, text, strlen(text));
        snprintf(expected, sizeof expected, "%s%s", path, bad[i].says);
        assert_starts_with(vocab_load(&vocab, path), expected);
        vocab_free(&vocab);
    }
    snprintf(text, sizeof text, "%sa\nb", specials);   /* a NUL byte, which would end "b" */
    write_file(path, text, strlen(text) + 1);
    snprintf(expected, sizeof expected, "%s:6: a NUL byte", path);
    assert_starts_with(vocab_load(&vocab, path), expected);
    vocab_free(&vocab);
    snprintf(text, sizeof text, "%sa\nb", specials);   /* no newline at the end: fine */
    write_file(path, text, strlen(text));
    ck_assert_ptr_null(vocab_load(&vocab, path));
    ck_assert_int_eq(vocab.size, 6);
    ck_assert_int_eq(vocab_lookup(&vocab, "b"), 5);
    vocab_free(&vocab);
    unlink(path);
    snprintf(expected, sizeof expected, "cannot open %s: ", path);
    assert_starts_with(vocab_load(&vocab, path), expected);
    vocab_free(&vocab);
}
END_TEST

/* Run the transformer with standard input read from a file that holds INPUT: run() itself
   redirects standard input from /dev/null, so a shell in front opens the file instead. */
static Run *run_with_input(const char *input, const char *arguments)
{
    char path[128], environment[256];
    temporary_path(path, sizeof path, "input.txt");
    write_file(path, input, strlen(input));
    snprintf(environment, sizeof environment, "sh -c '\"$0\" \"$@\" < %s'", path);
    Run *r = run(environment, arguments);
    unlink(path);
    return r;
}

START_TEST(text_tokenize_command)
{
    Run *r = run_with_input("Ein M\xC3\xA4" "dchen sagt: \xE2\x80\x9EHallo!\xE2\x80\x9C\n"
                            "Zwei  Hunde.\n", "tokenize --language de --lowercase");
    ck_assert_int_eq(r->status, 0);
    ck_assert_str_eq(r->out, "ein m\xC3\xA4" "dchen sagt : \" hallo ! \"\nzwei hunde .\n");
    ck_assert_str_eq(r->err, "");
    r = run_with_input("A Man's dog.", "tokenize");   /* cased; no newline at the end */
    ck_assert_str_eq(r->out, "A Man 's dog .\n");
    r = run_with_input("a man 's dog , \" rex \" .\n", "tokenize --detokenize");
    ck_assert_int_eq(r->status, 0);
    ck_assert_str_eq(r->out, "a man's dog, \"rex\".\n");
    r = run_with_input("A dog.\nA \xE0\x80\xAF cat.\n", "tokenize");
    ck_assert_int_eq(r->status, 1);
    ck_assert_str_eq(r->out, "A dog .\n");   /* the lines before the bad one */
    ck_assert_str_eq(r->err, "transformer: standard input:2: invalid UTF-8 at byte 3: "
                             "an overlong encoding (0xE0 0x80 0xAF)\n");
    r = run_with_input("A dog.\n\n", "tokenize");
    ck_assert_int_eq(r->status, 1);
    ck_assert_str_eq(r->err, "transformer: standard input:2: empty line\n");
    r = run("", "tokenize --help");
    ck_assert_int_eq(r->status, 0);
    ck_assert(strstr(r->out, "usage: transformer tokenize") && strstr(r->out, "--detokenize"));
    r = run("", "tokenize --language fr");
    ck_assert_int_eq(r->status, 2);
    ck_assert_ptr_nonnull(strstr(r->err, "--language expects 'en' or 'de', got 'fr'"));
    r = run("", "tokenize --detokenize --lowercase");
    ck_assert_int_eq(r->status, 2);
    r = run("", "tokenize --compare");
    ck_assert_int_eq(r->status, 2);
    r = run("", "tokenize --compare /nonexistent/file");
    ck_assert_int_eq(r->status, 1);
    ck_assert_str_eq(r->err, "transformer: cannot open /nonexistent/file: "
                             "No such file or directory\n");
}
END_TEST

START_TEST(text_vocab_command)
{
    char corpus[128], path[128], arguments[512];
    fclose(open_corpus("val.de", corpus, sizeof corpus));
    temporary_path(path, sizeof path, "vocab.de");
    snprintf(arguments, sizeof arguments, "vocab --language de --lowercase --save %s %s",
             path, corpus);
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 0, "%s", r->err);
    ck_assert_msg(strncmp(r->out, "1014 lines, ", 12) == 0, "%s", r->out);
    Vocab vocab;
    ck_assert_ptr_null(vocab_load(&vocab, path));
    char size[64];
    snprintf(size, sizeof size, "\nvocabulary: %d = 4 specials + %d tokens", vocab.size,
             vocab.size - 4);
    ck_assert_msg(strstr(r->out, size) != NULL, "'%s' not in %s", size, r->out);
    ck_assert_int_gt(vocab_lookup(&vocab, "m\xC3\xA4" "dchen"), VOCAB_UNKNOWN);
    vocab_free(&vocab);
    unlink(path);
    r = run("", "vocab --min-freq 0 x");
    ck_assert_int_eq(r->status, 2);
    ck_assert_ptr_nonnull(strstr(r->err, "--min-freq expects an integer from 1"));
    r = run("", "vocab");
    ck_assert_int_eq(r->status, 2);
    r = run("", "vocab /nonexistent/file");
    ck_assert_int_eq(r->status, 1);
    ck_assert_ptr_nonnull(strstr(r->err, "cannot open /nonexistent/file"));
}
END_TEST

/* Byte-pair encoding on the example of Sennrich et al.: low x5, lower x2, newest x6,
   widest x3. The alphabet is 11 symbols (l@@ o@@ w w@@ e@@ r n@@ s@@ t i@@ d@@), so a
   size of 4 + 11 + 2 allows two merges: e@@ s@@ (9 times, seen before s@@ t, also 9) and
   then es@@ t (9). The greedy cut uses est, never es@@, which is left out. */
START_TEST(text_subwords_learn_cut_and_join)
{
    const char *words[16];
    int n = 0;
    for (int i = 0; i < 5; i++) words[n++] = "low";
    for (int i = 0; i < 2; i++) words[n++] = "lower";
    for (int i = 0; i < 6; i++) words[n++] = "newest";
    for (int i = 0; i < 3; i++) words[n++] = "widest";
    Vocab vocab;
    vocab_learn_subwords(&vocab, (char *const *)words, n, 4 + 11 + 2);
    ck_assert(vocab.subwords);
    ck_assert_int_gt(vocab_lookup(&vocab, "est"), VOCAB_UNKNOWN);
    ck_assert_int_eq(vocab_lookup(&vocab, "es@@"), VOCAB_UNKNOWN);
    ck_assert_int_eq(vocab_lookup(&vocab, "s@@"), VOCAB_UNKNOWN);   /* swallowed by est */
    ck_assert_int_eq(vocab.size, 4 + 11 - 1);   /* s@@ and t gone, est added */
    ck_assert_str_eq(vocab_token(&vocab, 4), "w@@");   /* the most frequent piece: 11 times */
    static const struct { const char *word, *pieces; } cuts[] = {
        {"newest", "n@@ e@@ w@@ est"}, {"widest", "w@@ i@@ d@@ est"}, {"low", "l@@ o@@ w"},
        {"lower", "l@@ o@@ w@@ e@@ r"}, {"lowest", "l@@ o@@ w@@ est"},   /* unseen word */
        {"lox", "l@@ o@@ <unk>"}, {"x\xC3\xA4", "<unk> <unk>"},        /* unseen characters */
    };
    for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
        int ids[16];
        const int count = vocab_encode(&vocab, cuts[c].word, ids, 16);
        char text[128] = "";
        for (int k = 0; k < count; k++) {
            if (k) strcat(text, " ");
            strcat(text, vocab_token(&vocab, ids[k]));
        }
        ck_assert_msg(strcmp(text, cuts[c].pieces) == 0, "%s: '%s', expected '%s'",
                      cuts[c].word, text, cuts[c].pieces);
    }
    int ids[4];
    ck_assert_int_eq(vocab_encode(&vocab, "newest", ids, 2), 2);   /* cut to fit */
    ck_assert_int_eq(vocab_encode(&vocab, "newest", ids, 0), 0);
    char line[] = "n@@ e@@ w@@ est l@@ o@@ w@@";
    ck_assert_uint_eq(vocab_join_subwords(line, strlen(line)), strlen("newest low"));
    ck_assert_str_eq(line, "newest low");
    char plain[] = "a @ @ b";   /* the tokenizer's @ tokens are not marks */
    ck_assert_uint_eq(vocab_join_subwords(plain, strlen(plain)), strlen("a @ @ b"));
    ck_assert(vocab_continues_word("ab@@") && !vocab_continues_word("@@"));
    ck_assert(!vocab_continues_word("ab"));
    /* A copy, a save and a load keep the tokens, their order and the subwords flag. */
    Vocab copy, loaded;
    vocab_copy(&copy, &vocab);
    char path[128];
    temporary_path(path, sizeof path, "subwords.txt");
    ck_assert_ptr_null(vocab_save(&copy, path));
    ck_assert_ptr_null(vocab_load(&loaded, path));
    unlink(path);
    ck_assert(copy.subwords && loaded.subwords);
    ck_assert_int_eq(copy.size, vocab.size);
    ck_assert_int_eq(loaded.size, vocab.size);
    for (int i = 0; i < vocab.size; i++) {
        ck_assert_str_eq(copy.token[i], vocab.token[i]);
        ck_assert_str_eq(loaded.token[i], vocab.token[i]);
        ck_assert_int_eq(vocab_lookup(&loaded, vocab.token[i]), i);
    }
    vocab_free(&copy), vocab_free(&loaded), vocab_free(&vocab);
    /* A vocabulary of words is not one of subwords, and cuts nothing. */
    vocab_build(&vocab, (char *const *)words, n, 1);
    ck_assert(!vocab.subwords);
    ck_assert_int_eq(vocab_encode(&vocab, "lowest", ids, 4), 1);
    ck_assert_int_eq(ids[0], VOCAB_UNKNOWN);
    vocab_free(&vocab);
    /* No pair occurs twice: no merge, whatever the size. */
    static const char *const once[] = {"ab", "cd"};
    vocab_learn_subwords(&vocab, (char *const *)once, 2, 1000);
    ck_assert_int_eq(vocab.size, 4 + 4);
    vocab_free(&vocab);
}
END_TEST

/* The subwords of Multi30k's training text, as train --subwords 8000 learns them: at most
   8000 tokens, every training token cut into pieces of the vocabulary (no <unk>) that join
   back into it, most tokens whole, and the same vocabulary again on a second learning. */
START_TEST(text_subwords_of_multi30k)
{
    char paths[2][128];
    TokenizedFile files[2];
    const TextOptions options[2] = {german, english};
    const char *const names[2] = {"train.de", "train.en"};
    for (int f = 0; f < 2; f++) {
        fclose(open_corpus(names[f], paths[f], sizeof paths[f]));
        ck_assert_ptr_null(tokenize_file(paths[f], options[f], &files[f]));
    }
    const long count = files[0].count + files[1].count;
    char **both = malloc((size_t)count * sizeof *both);
    memcpy(both, files[0].token, (size_t)files[0].count * sizeof *both);
    memcpy(both + files[0].count, files[1].token, (size_t)files[1].count * sizeof *both);
    Vocab vocab, again;
    vocab_learn_subwords(&vocab, both, count, 8000);
    ck_assert_int_le(vocab.size, 8000);
    ck_assert_int_gt(vocab.size, 7000);
    long pieces = 0, whole = 0;
    for (long i = 0; i < count; i++) {
        int ids[TEXT_MAX_LINE_BYTES];
        const int n = vocab_encode(&vocab, both[i], ids, TEXT_MAX_LINE_BYTES);
        char joined[2 * TEXT_MAX_LINE_BYTES + 2] = "";
        size_t used = 0;
        for (int k = 0; k < n; k++) {
            ck_assert_int_ne(ids[k], VOCAB_UNKNOWN);
            ck_assert_int_ge(ids[k], VOCAB_SPECIALS);
            used += (size_t)sprintf(joined + used, "%s%s", k ? " " : "", vocab.token[ids[k]]);
        }
        vocab_join_subwords(joined, used);
        ck_assert_msg(strcmp(joined, both[i]) == 0, "%s came back as %s", both[i], joined);
        pieces += n, whole += n == 1;
    }
    ck_assert_int_lt(pieces, count + count / 5);   /* measured: 1.104 pieces a token */
    ck_assert_int_gt(whole, count * 9 / 10);       /* measured: 93.4% */
    vocab_learn_subwords(&again, both, count, 8000);
    ck_assert_int_eq(again.size, vocab.size);
    for (int i = 0; i < vocab.size; i++) ck_assert_str_eq(again.token[i], vocab.token[i]);
    vocab_free(&vocab), vocab_free(&again);
    free(both);
    for (int f = 0; f < 2; f++) tokenized_file_free(&files[f]);
}
END_TEST

/* tokenize --subwords cuts and joins with a vocabulary file; vocab --subwords learns one. */
START_TEST(text_subwords_commands)
{
    char corpus[128], path[128], arguments[512];
    fclose(open_corpus("val.de", corpus, sizeof corpus));
    temporary_path(path, sizeof path, "subwords.de");
    snprintf(arguments, sizeof arguments,
             "vocab --language de --lowercase --subwords 2000 --save %s %s", path, corpus);
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 0, "%s", r->err);
    ck_assert_msg(strstr(r->out, "1014 lines, ") == r->out && strstr(r->out, " pieces ("),
                  "%s", r->out);
    Vocab vocab;
    ck_assert_ptr_null(vocab_load(&vocab, path));
    ck_assert(vocab.subwords);
    ck_assert_int_le(vocab.size, 2000);
    char expected[64];
    snprintf(expected, sizeof expected, "\nvocabulary: %d = 4 specials + %d subwords\n",
             vocab.size, vocab.size - 4);
    ck_assert_msg(strstr(r->out, expected) != NULL, "'%s' not in %s", expected, r->out);
    vocab_free(&vocab);
    /* Cut a line of val.de, check that every piece is a token, and join it back. */
    snprintf(arguments, sizeof arguments, "tokenize --language de --lowercase --subwords %s",
             path);
    r = run_with_input("Zwei junge Hundebesitzer spielen.\n", arguments);
    ck_assert_msg(r->status == 0, "%s", r->err);
    ck_assert_ptr_nonnull(strstr(r->out, "@@ "));
    ck_assert_ptr_null(strstr(r->out, "<unk>"));
    char cut[512];
    ck_assert_uint_lt(strlen(r->out), sizeof cut);
    memcpy(cut, r->out, strlen(r->out) + 1);
    snprintf(arguments, sizeof arguments, "tokenize --detokenize --subwords %s", path);
    r = run_with_input(cut, arguments);
    ck_assert_msg(r->status == 0, "%s", r->err);
    ck_assert_str_eq(r->out, "zwei junge hundebesitzer spielen.\n");
    r = run("", "tokenize --compare x --subwords y");
    ck_assert_int_eq(r->status, 2);
    r = run("", "tokenize --subwords /nonexistent/file");
    ck_assert_int_eq(r->status, 1);
    ck_assert_ptr_nonnull(strstr(r->err, "cannot open /nonexistent/file"));
    r = run("", "vocab --subwords 0 x");
    ck_assert_int_eq(r->status, 2);
    unlink(path);
}
END_TEST

/* The one UTF-8 decoder (utf8.c), used by the tokenizer, the vocabulary and BLEU: every code
   point survives encode-then-decode, the five malformations are refused with their names,
   and the valid prefix stops at the first bad byte. */
START_TEST(text_utf8_round_trip_and_refusals)
{
    for (uint32_t c = 0; c <= 0x10FFFF; c++) {
        if (c >= 0xD800 && c <= 0xDFFF) continue;
        char bytes[4];
        const int n = utf8_encode(c, bytes);
        ck_assert_int_eq(n, c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4);
        uint32_t back;
        const char *problem = "unset";
        ck_assert_int_eq(utf8_decode(bytes, (size_t)n, &back, &problem), n);
        ck_assert_msg(problem == NULL && back == c, "U+%04X: %s", c, problem ? problem : "");
        ck_assert_uint_eq(utf8_valid_prefix(bytes, (size_t)n), (size_t)n);
    }
    static const struct { const char *bytes; int seen; const char *problem; } bad[] = {
        {"\x80", 1, "a continuation byte without a leading byte"},
        {"\xF5\x80\x80\x80", 1, "a byte that UTF-8 never uses"},
        {"\xC0\xAF", 1, "an overlong encoding"},
        {"\xE0\x80\xAF", 3, "an overlong encoding"},
        {"\xF0\x80\x80\xAF", 4, "an overlong encoding"},
        {"\xE2\x82", 2, "a truncated sequence"},
        {"\xE2\x28\xA1", 2, "a truncated sequence"},
        {"\xED\xA0\x80", 3, "a surrogate"},
        {"\xF4\x90\x80\x80", 4, "a code point beyond U+10FFFF"},
    };
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        uint32_t point;
        const char *problem = NULL;
        const size_t n = strlen(bad[b].bytes);
        ck_assert_int_eq(utf8_decode(bad[b].bytes, n, &point, &problem), bad[b].seen);
        ck_assert_msg(problem && strcmp(problem, bad[b].problem) == 0, "case %zu: %s", b,
                      problem ? problem : "accepted");
        char text[16];
        snprintf(text, sizeof text, "ab%s", bad[b].bytes);
        ck_assert_uint_eq(utf8_valid_prefix(text, strlen(text)), 2);
    }
}
END_TEST

Suite *text_suite(void)
{
    Suite *suite = suite_create("text");
    TCase *tokenizer = tcase_create("tokenizer");
    tcase_add_test(tokenizer, text_tokenizes_tricky_corpus_lines);
    tcase_add_test(tokenizer, text_tokenizes_beyond_the_corpus);
    tcase_add_test(tokenizer, text_lowercases_ascii_and_latin1);
    tcase_add_test(tokenizer, text_utf8_round_trip_and_refusals);
    tcase_add_test(tokenizer, text_refuses_invalid_utf8_and_empty_lines);
    tcase_add_test(tokenizer, text_line_length_limits);
    tcase_add_test(tokenizer, text_file_errors_name_the_file_and_line);
    tcase_add_test(tokenizer, text_detokenizes);
    tcase_add_test(tokenizer, text_agrees_with_the_reference_on_val);
    tcase_add_test(tokenizer, text_agreement_counts_and_refuses);
    tcase_add_test(tokenizer, text_round_trip_of_val_en);
    suite_add_tcase(suite, tokenizer);
    TCase *vocabulary = tcase_create("vocabulary");
    tcase_add_test(vocabulary, text_vocabulary_orders_and_filters);
    tcase_add_test(vocabulary, text_vocabulary_round_trip);
    tcase_add_test(vocabulary, text_vocabulary_file_errors);
    tcase_add_test(vocabulary, text_subwords_learn_cut_and_join);
    tcase_add_test(vocabulary, text_subwords_of_multi30k);
    suite_add_tcase(suite, vocabulary);
    TCase *commands = tcase_create("commands");
    tcase_add_test(commands, text_tokenize_command);
    tcase_add_test(commands, text_vocab_command);
    tcase_add_test(commands, text_subwords_commands);
    suite_add_tcase(suite, commands);
    return suite;
}
