/* test_bleu.c -- corpus BLEU as sacreBLEU 2.6.0 computes it; see book/bleu.nw.
   Expected values are computed by hand (the arithmetic is in the comments), derived from
   sacreBLEU's rules, or stated in sacreBLEU's own test files (named at each case). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests.h"
#include "bleu.h"

/* The score of one hypothesis against one reference. */
static BleuScore score_one(const char *hypothesis, const char *reference, bool effective)
{
    const char *const hyps[] = {hypothesis};
    const char *const refs0[] = {reference};
    const char *const *const refs[] = {refs0};
    return bleu_corpus(hyps, refs, 1, 1, false, effective);
}

static void assert_line(const BleuScore *s, const char *expected)
{
    char line[256];
    bleu_format_score(line, sizeof line, s);
    ck_assert_str_eq(line, expected);
}

static void assert_counts(const BleuScore *s, const long long correct[4],
                          const long long total[4])
{
    for (int n = 0; n < 4; n++) {
        ck_assert_msg(s->stats.correct[n] == correct[n], "correct[%d] = %lld, expected %lld",
                      n, s->stats.correct[n], correct[n]);
        ck_assert_msg(s->stats.total[n] == total[n], "total[%d] = %lld, expected %lld", n,
                      s->stats.total[n], total[n]);
    }
}

START_TEST(bleu_hand_computed_cases)
{
    /* "the cat sat on the mat" against "the cat is on the mat" (6 words each, bp = 1):
       unigrams: the(2, clipped at 2) cat on mat match, sat does not        5/6
       bigrams:  the cat, on the, the mat match; cat sat, sat on do not    3/5
       trigrams: on the mat                                                1/4
       4-grams:  none of 3; the first zero order: exp gives 100/(2*3)
       score = (500/6 * 60 * 25 * 100/6)^(1/4) = 2083333.33^(1/4) = 37.9917... */
    BleuScore s = score_one("the cat sat on the mat", "the cat is on the mat", false);
    assert_counts(&s, (const long long[4]){5, 3, 1, 0}, (const long long[4]){6, 5, 4, 3});
    ck_assert_double_eq_tol(s.score, pow(500.0 / 6 * 60 * 25 * 100.0 / 6, 0.25), 1e-9);
    assert_line(&s, "BLEU = 37.99 83.3/60.0/25.0/16.7 (BP = 1.000 ratio = 1.000 "
                    "hyp_len = 6 ref_len = 6)");

    /* Clipping: "the the the the" against "the cat": "the" counts once, 1/4; the bigram
       "the the" (3 of them) never matches, nor do the 2 trigrams and the 4-gram. exp:
       p2 = 100/(2*3), p3 = 100/(4*2) = 12.5, p4 = 100/(8*1) = 12.5; bp = 1 (4 > 2).
       score = (25 * 16.667 * 12.5 * 12.5)^(1/4) = 65104.17^(1/4) = 15.973 */
    s = score_one("the the the the", "the cat", false);
    assert_counts(&s, (const long long[4]){1, 0, 0, 0}, (const long long[4]){4, 3, 2, 1});
    ck_assert_double_eq_tol(s.score, pow(25 * (100.0 / 6) * 12.5 * 12.5, 0.25), 1e-9);
    assert_line(&s, "BLEU = 15.97 25.0/16.7/12.5/12.5 (BP = 1.000 ratio = 2.000 "
                    "hyp_len = 4 ref_len = 2)");

    /* Too short for trigrams: "the cat" against "the cat sat on the mat". p1 = p2 = 100,
       total3 = 0 stops the loop, p3 = p4 = 0 count as log = -9999999999: score 0.
       bp = exp(1 - 6/2) = exp(-2) = 0.1353. With effective order the mean runs over
       n = 1, 2 only: score = exp(-2) * 100 = 13.53. */
    s = score_one("the cat", "the cat sat on the mat", false);
    ck_assert_double_eq(s.score, 0.0);
    ck_assert_double_eq_tol(s.bp, exp(-2.0), 1e-15);
    assert_line(&s, "BLEU = 0.00 100.0/100.0/0.0/0.0 (BP = 0.135 ratio = 0.333 "
                    "hyp_len = 2 ref_len = 6)");
    s = score_one("the cat", "the cat sat on the mat", true);
    ck_assert_double_eq_tol(s.score, 100 * exp(-2.0), 1e-9);

    /* Two references: "the the the cat" against "the cat" and "the the mat".
       unigrams: the x3, clipped at max(1, 2) = 2; cat 1: 3/4. bigrams: "the the" x2,
       clipped at max(0, 1) = 1; "the cat" 1: 2/3. trigrams 0/2 -> 100/(2*2) = 25;
       4-grams 0/1 -> 100/(4*1) = 25. ref_len: the closest to 4 words is 3.
       score = (75 * 66.667 * 25 * 25)^(1/4) = 3125000^(1/4) = 42.045 */
    const char *const hyps[] = {"the the the cat"};
    const char *const ref_a[] = {"the cat"}, *const ref_b[] = {"the the mat"};
    const char *const *const two[] = {ref_a, ref_b};
    s = bleu_corpus(hyps, two, 2, 1, false, false);
    ck_assert_double_eq_tol(s.score, pow(3125000.0, 0.25), 1e-9);
    assert_line(&s, "BLEU = 42.04 75.0/66.7/25.0/25.0 (BP = 1.000 ratio = 1.333 "
                    "hyp_len = 4 ref_len = 3)");

    /* The closest reference length, shorter on a tie: 5 words against 4 and 6 -> 4,
       against 7 and 3 -> 3 (so bp = 1 although the first reference is longer). */
    const char *const five[] = {"a b c d e"};
    const char *const r4[] = {"a b c d"}, *const r6[] = {"a b c d e f"};
    const char *const r7[] = {"a b c d e f g"}, *const r3[] = {"a b c"};
    const char *const *const tie1[] = {r6, r4}, *const *const tie2[] = {r7, r3};
    ck_assert_int_eq(bleu_corpus(five, tie1, 2, 1, false, false).stats.ref_len, 4);
    s = bleu_corpus(five, tie2, 2, 1, false, false);
    ck_assert_int_eq(s.stats.ref_len, 3);
    ck_assert_double_eq_tol(s.score, 100.0, 1e-9);
}
END_TEST

/* Each expected string is derived from sacreBLEU 2.6.0's rules (tokenizer_13a.py,
   tokenizer_re.py), step by step where it is not obvious; running sacreBLEU's
   Tokenizer13a on these inputs gives the same strings. */
START_TEST(bleu_tokenizes_like_13a)
{
    static const char *const cases[][2] = {
        {"Hello, world!", "Hello , world !"},
        /* $ is a symbol; "3.50" keeps its period (digits on both sides); the comma after
           it is followed by a space (step 7); "1,000" is protected; "yen." is split */
        {"It costs $3.50, or 1,000 yen.", "It costs $ 3.50 , or 1,000 yen ."},
        /* the apostrophe and hyphen are not symbols; ':' and '@' are */
        {"Mr. Smith's e-mail: a@b.com", "Mr . Smith's e-mail : a @ b . com"},
        /* a hyphen is split only after a digit (step 8): "-5" stays, "5-" does not */
        {"1-2 x-ray 1990-2000 -5 5-", "1 - 2 x-ray 1990 - 2000 -5 5 -"},
        /* entities one after the other: &amp;lt; -> &lt; -> <, but &amp;quot; -> &quot;
           (quot was replaced before amp); a bare & and an unterminated &amp stay */
        {"&amp;lt; &amp;quot; &quot;hi&quot; &lt;b&gt; AT&T &amp",
         "< & quot ; \" hi \" < b > AT & T & amp"},
        /* repeated periods and commas: step 6 takes "a." then cannot reuse that period,
           step 7 separates the rest; "1,,2": step 6 matches ",," (the first comma is
           after a digit), step 7 splits the commas from the spaces */
        {"a,,b a..b ... ,,, 1,,2 1..2", "a , , b a . . b . . . , , , 1 , , 2 1 . . 2"},
        /* digits protect a period or comma on one side only when the other side is a
           digit too: ".5" -> ". 5" because the period follows the added space */
        {"3.14.15 1.a a.1 .5 5. ,x x, 1,a", "3.14.15 1 . a a . 1 . 5 5 . , x x , 1 , a"},
        /* non-overlapping matches: in "a.,5" step 6 matches "a." and the comma, already
           behind the match, is not separated from the period's other side; step 7 does
           not split ",5" (a digit follows) */
        {"a.,5", "a . ,5"},
        {"x,.1", "x , .1"},
        {"1--a", "1 - -a"},
        {"a--1", "a--1"},
        /* <skipped> is removed first, so the pieces around it can join */
        {"foo<skipped>bar <skip<skipped>ped>", "foobar < skipped >"},
        /* '-\n' joins, '\n' becomes a space */
        {"line-\nbreak a\nb a-\n", "linebreak a b a"},
        {"(a)[b]{c}|d~e^f_g`h\\i", "( a ) [ b ] { c } | d ~ e ^ f _ g ` h \\ i"},
        /* Python's whitespace: no-break space, line separator, ideographic space; the
           zero-width space U+200B is not whitespace */
        {"10\xc2\xa0km\xe2\x80\xa8x\xe2\x80\x8by\xe3\x80\x80z", "10 km x\xe2\x80\x8by z"},
        {"\t  lots   of\tspace  ", "lots of space"},
        /* non-ASCII punctuation is not a 13a symbol */
        {"Stra\xc3\x9f" "e \xe2\x80\x93 \xe2\x80\x9eZitat\xe2\x80\x9c",
         "Stra\xc3\x9f" "e \xe2\x80\x93 \xe2\x80\x9eZitat\xe2\x80\x9c"},
        /* a multi-byte character before a period is a non-digit */
        {".\xc3\xa9,5", ". \xc3\xa9 , 5"},
        {"U.S.A. e.g. 4.-5.", "U . S . A . e . g . 4 . -5 ."},
        {"", ""},
        {"   ", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *words = bleu_tokenize_13a(cases[i][0]);
        ck_assert_msg(strcmp(words, cases[i][1]) == 0, "'%s' -> '%s', expected '%s'",
                      cases[i][0], words, cases[i][1]);
        free(words);
    }
    /* bleu_preprocess strips trailing whitespace first: "a-\n" keeps its hyphen */
    char *words = bleu_preprocess("a-\n", false);
    ck_assert_str_eq(words, "a-");
    free(words);
    words = bleu_preprocess("The END.\xc2\xa0", true);
    ck_assert_str_eq(words, "the end .");
    free(words);
}
END_TEST

/* Python's str.lower(), as sacreBLEU's -lc applies it (outputs from Python 3.11). */
START_TEST(bleu_lowercases_like_python)
{
    static const char *const cases[][2] = {
        {"STRASSE \xe1\xba\x9e \xc3\x87" "A \xc3\x84PFEL",
         "strasse \xc3\x9f \xc3\xa7" "a \xc3\xa4pfel"},
        /* U+0130 -> "i" + U+0307 */
        {"\xc4\xb0STANBUL", "i\xcc\x87stanbul"},
        /* capital sigma: final at the end of a word, also before '.' or an accent;
           medial before a letter or alone; after a digit (not cased) medial */
        {"\xce\x9f\xce\x94\xce\x9f\xce\xa3 \xce\xa3\xce\x91\xce\xa3",
         "\xce\xbf\xce\xb4\xce\xbf\xcf\x82 \xcf\x83\xce\xb1\xcf\x82"},
        {"\xce\x91\xce\xa3.", "\xce\xb1\xcf\x82."},
        {"\xce\x91\xce\xa3\xcc\x81", "\xce\xb1\xcf\x82\xcc\x81"},
        {"\xce\x91\xce\xa3'\xce\x91", "\xce\xb1\xcf\x83'\xce\xb1"},
        {"\xce\xa3", "\xcf\x83"},
        {"1\xce\xa3", "1\xcf\x83"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *lower = bleu_lowercase(cases[i][0]);
        ck_assert_msg(strcmp(lower, cases[i][1]) == 0, "'%s' -> '%s', expected '%s'",
                      cases[i][0], lower, cases[i][1]);
        free(lower);
    }
    /* Cased vs lowercased BLEU (values printed by sacreBLEU 2.6.0). */
    const char *const hyps[] = {"The Dog bit THE man ."};
    const char *const refs0[] = {"the dog bit the man."};
    const char *const *const refs[] = {refs0};
    BleuScore s = bleu_corpus(hyps, refs, 1, 1, true, false);
    assert_line(&s, "BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 "
                    "hyp_len = 6 ref_len = 6)");
    s = bleu_corpus(hyps, refs, 1, 1, false, false);
    assert_line(&s, "BLEU = 17.97 50.0/20.0/12.5/8.3 (BP = 1.000 ratio = 1.000 "
                    "hyp_len = 6 ref_len = 6)");
}
END_TEST

/* sacreBLEU's README example, as its test/test_bleu.py uses it: three hypotheses, two
   reference streams. */
static const char *const readme_hyps[] = {"The dog bit the man.", "It wasn't surprising.",
                                          "The man had just bitten him."};
static const char *const readme_ref1[] = {"The dog bit the man.", "It was not unexpected.",
                                          "The man bit him first."};
static const char *const readme_ref2[] = {"The dog had bit the man.", "No one was surprised.",
                                          "The man had bitten the dog."};

START_TEST(bleu_matches_sacrebleu_tests)
{
    const char *const *const refs[] = {readme_ref1, readme_ref2};
    /* test/test_bleu.py, test_corpus_bleu_cases: default settings and tokenize='13a'
       give 48.530827 (to 1e-8 there); smooth_method='none' gives the same, as no
       precision is zero. test_max_ngram_order with order 4 prints "48.53". */
    BleuScore s = bleu_corpus(readme_hyps, refs, 2, 3, false, false);
    ck_assert_double_eq_tol(s.score, 48.530827, 1e-6);
    assert_line(&s, "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 "
                    "hyp_len = 17 ref_len = 18)");
    char signature[128];
    bleu_signature(signature, sizeof signature, 2, false, false);
    ck_assert_str_eq(signature, "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
    /* test_corpus_bleu_cases: "ensure that empty hypotheses are not removed", 0.0 */
    const char *const empty[] = {"", "", ""};
    s = bleu_corpus(empty, refs, 2, 3, false, false);
    ck_assert_double_eq(s.score, 0.0);
    /* test_case_statistics: counts [4, 2, 1, 0], totals [6, 5, 4, 3] (with tokenize
       'none' there; 13a leaves these words alone) */
    s = score_one("am I am a character sequence", "I am a symbol string sequence a a", false);
    assert_counts(&s, (const long long[4]){4, 2, 1, 0}, (const long long[4]){6, 5, 4, 3});
    /* test_case_scoring: statistics [9, 7, 5, 3] / [10, 8, 6, 4], lengths 11 and 11:
       0.8375922397 (to 1e-8, as a fraction) */
    BleuStats stats = {11, 11, {9, 7, 5, 3}, {10, 8, 6, 4}};
    ck_assert_double_eq_tol(bleu_compute(&stats, false).score, 83.75922397, 1e-6);
    /* test_degenerate_statistics: no match at all scores 0.0 whatever the smoothing */
    BleuStats none1 = {0, 1, {0, 0, 0, 0}, {4, 4, 2, 1}};
    BleuStats none2 = {14, 10, {0, 0, 0, 0}, {10, 11, 12, 0}}, none3 = {0};
    ck_assert_double_eq(bleu_compute(&none1, false).score, 0.0);
    ck_assert_double_eq(bleu_compute(&none2, false).score, 0.0);
    ck_assert_double_eq(bleu_compute(&none3, false).score, 0.0);
    /* test/test_sentence_bleu.py, issue 98: exp smoothing, 13a -> 8.493 (to 1e-3). That
       test uses effective order; every order has n-grams here, so it changes nothing. */
    const char *hyp98 = "Producția de zahăr primă va fi exprimată în ceea ce privește "
                        "zahărul alb;";
    const char *ref98 = "producţia de zahăr brut se exprimă în zahăr alb;";
    s = score_one(hyp98, ref98, true);
    ck_assert_double_eq_tol(s.score, 8.493, 1e-3);
    ck_assert_double_eq_tol(score_one(hyp98, ref98, false).score, 8.493, 1e-3);
    assert_line(&s, "BLEU = 8.49 35.7/15.4/4.2/2.3 (BP = 1.000 ratio = 1.400 "
                    "hyp_len = 14 ref_len = 10)");
    /* the same file, issue 141: "this is a cat" against "okay thanks" -> 0.0 */
    ck_assert_double_eq(score_one("this is a cat", "okay thanks", true).score, 0.0);
    /* test/test_bleu.py, test_effective_order (with floor smoothing there, which these
       two cases never reach): "test" / "a test" -> 0.3678794411714425 (= 1/e, the brevity
       penalty), "a test" / "a test" -> 1.0 */
    ck_assert_double_eq_tol(score_one("test", "a test", true).score, 36.78794411714425, 1e-9);
    ck_assert_double_eq_tol(score_one("a test", "a test", true).score, 100.0, 1e-9);
    /* test_raw_bleu, issue 141: no match at all is 0.0 */
    const char *const raw_hyps[] = {"this is a test", "another test"};
    const char *const raw_ref[] = {"ref1", "ref2"};
    const char *const *const raw_refs[] = {raw_ref};
    ck_assert_double_eq(bleu_corpus(raw_hyps, raw_refs, 1, 2, false, false).score, 0.0);
}
END_TEST

START_TEST(bleu_edge_cases)
{
    /* No match: everything 0, but bp and the lengths are reported (sacreBLEU 2.6.0). */
    BleuScore s = score_one("this is a cat", "okay thanks", false);
    assert_line(&s, "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 1.000 ratio = 2.000 "
                    "hyp_len = 4 ref_len = 2)");
    /* An empty hypothesis: hyp_len 0 < ref_len, so bp = 0. */
    const char *const *const refs[] = {readme_ref1};
    const char *const empty[] = {"", "", ""};
    s = bleu_corpus(empty, refs, 1, 3, false, false);
    assert_line(&s, "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 "
                    "hyp_len = 0 ref_len = 17)");
    /* An empty line among others still counts its reference's length: 6 words against
       2 + 6 = 8, bp = exp(1 - 8/6) = 0.7165, every precision 100. */
    const char *const hyps2[] = {"", "the cat sat on the mat"};
    const char *const ref2[] = {"a dog", "the cat sat on the mat"};
    const char *const *const refs2[] = {ref2};
    s = bleu_corpus(hyps2, refs2, 1, 2, false, false);
    ck_assert_double_eq_tol(s.score, 100 * exp(1 - 8.0 / 6), 1e-9);
    assert_line(&s, "BLEU = 71.65 100.0/100.0/100.0/100.0 (BP = 0.717 ratio = 0.750 "
                    "hyp_len = 6 ref_len = 8)");
    /* One-word lines match perfectly but have no bigrams: 0, p1 = 100. */
    const char *const words[] = {"Hello", "world"};
    const char *const *const same[] = {words};
    s = bleu_corpus(words, same, 1, 2, false, false);
    assert_line(&s, "BLEU = 0.00 100.0/0.0/0.0/0.0 (BP = 1.000 ratio = 1.000 "
                    "hyp_len = 2 ref_len = 2)");
    /* An empty reference: ratio 0 by definition, bp 1. An empty corpus: all zero. */
    s = score_one("x", "", false);
    assert_line(&s, "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 1.000 ratio = 0.000 "
                    "hyp_len = 1 ref_len = 0)");
    s = bleu_corpus(NULL, refs, 1, 0, false, false);
    assert_line(&s, "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 1.000 ratio = 0.000 "
                    "hyp_len = 0 ref_len = 0)");
    /* A long repetitive line is counted quickly and clipped: 20000 x "a " against "a a":
       correct = 2 + 1 + 0 + 0. */
    enum { N = 20000 };
    char *many = malloc(2 * N + 1);
    for (int i = 0; i < N; i++) memcpy(many + 2 * i, "a ", 2);
    many[2 * N] = '\0';
    s = score_one(many, "a a", false);
    assert_counts(&s, (const long long[4]){2, 1, 0, 0},
                  (const long long[4]){N, N - 1, N - 2, N - 3});
    free(many);
}
END_TEST

/* A temporary file with the given bytes; its path lives until the next call with the same
   slot. */
static const char *temp_file(int slot, const char *bytes, size_t length)
{
    static char paths[3][64];
    snprintf(paths[slot], sizeof paths[slot], "/tmp/transformer-bleu-XXXXXX");
    int fd = mkstemp(paths[slot]);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, bytes, length), (ssize_t)length);
    close(fd);
    return paths[slot];
}

static const char *temp_text(int slot, const char *text)
{
    return temp_file(slot, text, strlen(text));
}

/* Status 1, nothing on stdout, one line on stderr that contains each of the texts. */
static void assert_input_error(const char *arguments, const char *says, const char *also)
{
    Run *r = run("", arguments);
    ck_assert_msg(r->status == 1, "'%s': status %d, stderr: %s", arguments, r->status, r->err);
    ck_assert_str_eq(r->out, "");
    ck_assert_msg(strncmp(r->err, "transformer: ", 13) == 0, "'%s': %s", arguments, r->err);
    char *newline = strchr(r->err, '\n');
    ck_assert_msg(newline && newline[1] == '\0', "'%s': not one line: %s", arguments, r->err);
    ck_assert_msg(strstr(r->err, says) && strstr(r->err, also), "'%s': '%s', '%s' not in: %s",
                  arguments, says, also, r->err);
}

/* The Multi30k files of data/multi30k, scored by sacreBLEU 2.6.0 (sacrebleu REF -i HYP
   [-lc], the score line of its output): the German test set as a "translation" of the
   English one, and the whole training set both ways (tab, no-break spaces and &amp;
   entities included). */
/* A long line is counted exactly (the n-gram table, not its speed, is what is tested): a
   hypothesis of 300 000 words, w0 to w999 over and over, against itself matches every n-gram;
   against a reference that holds the first half only, each n-gram is clipped at its count
   there (150 of the 300 occurrences of each word; of each n-gram, as many as the half has). */
START_TEST(bleu_counts_a_long_line_exactly)
{
    enum { WORDS = 300000, DISTINCT = 1000 };
    char *line = malloc((size_t)WORDS * 8), *half = malloc((size_t)WORDS * 8);
    ck_assert_ptr_nonnull(line);
    ck_assert_ptr_nonnull(half);
    size_t used = 0;
    for (int i = 0; i < WORDS; i++) {
        used += (size_t)sprintf(line + used, "%sw%d", i ? " " : "", i % DISTINCT);
        if (i == WORDS / 2 - 1) memcpy(half, line, used + 1);
    }
    BleuStats same = {0}, clipped = {0};
    const char *refs[1] = {line};
    bleu_add_segment(&same, line, refs, 1, false);
    refs[0] = half;
    bleu_add_segment(&clipped, line, refs, 1, false);
    ck_assert_int_eq(same.hyp_len, WORDS);
    for (int n = 1; n <= BLEU_MAX_ORDER; n++) {
        ck_assert_int_eq(same.total[n - 1], WORDS - n + 1);
        ck_assert_int_eq(same.correct[n - 1], WORDS - n + 1);
        ck_assert_int_eq(clipped.correct[n - 1], WORDS / 2 - n + 1);
    }
    free(line), free(half);
}
END_TEST

START_TEST(bleu_command)
{
    static const char *const cases[][2] = {
        {"bleu data/multi30k/test2016.de data/multi30k/test2016.en",
         "BLEU = 0.48 11.6/0.3/0.2/0.1 (BP = 0.932 ratio = 0.934 hyp_len = 12106 "
         "ref_len = 12955)\nnrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0\n"},
        {"bleu data/multi30k/test2016.de data/multi30k/test2016.en --lowercase",
         "BLEU = 0.75 14.0/1.1/0.2/0.1 (BP = 0.932 ratio = 0.934 hyp_len = 12106 "
         "ref_len = 12955)\nnrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:2.6.0\n"},
        {"bleu -lc data/multi30k/val.de data/multi30k/val.en",
         "BLEU = 0.65 12.9/0.7/0.2/0.1 (BP = 0.964 ratio = 0.965 hyp_len = 12825 "
         "ref_len = 13289)\nnrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:2.6.0\n"},
        {"bleu data/multi30k/train.de data/multi30k/train.en",
         "BLEU = 0.25 11.1/0.2/0.1/0.0 (BP = 0.955 ratio = 0.956 hyp_len = 360387 "
         "ref_len = 377056)\nnrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0\n"},
        {"bleu data/multi30k/train.en data/multi30k/train.de --lowercase",
         "BLEU = 0.38 12.3/0.6/0.1/0.0 (BP = 1.000 ratio = 1.046 hyp_len = 377056 "
         "ref_len = 360387)\nnrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:2.6.0\n"},
        {"bleu data/multi30k/val.en data/multi30k/val.en",
         "BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 13289 "
         "ref_len = 13289)\nnrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Run *r = run("", cases[i][0]);
        ck_assert_msg(r->status == 0, "'%s': status %d: %s", cases[i][0], r->status, r->err);
        ck_assert_str_eq(r->out, cases[i][1]);
    }
    /* sacreBLEU's README example through files: two reference files, and CRLF line ends
       and a missing final newline (Python's rstrip removes the CR). */
    const char *hyp = temp_text(0, "The dog bit the man.\r\nIt wasn't surprising.\n"
                                   "The man had just bitten him.");
    const char *ref1 = temp_text(1, "The dog bit the man.\nIt was not unexpected.\n"
                                    "The man bit him first.\n");
    const char *ref2 = temp_text(2, "The dog had bit the man.\nNo one was surprised.\n"
                                    "The man had bitten the dog.\n");
    char arguments[256];
    snprintf(arguments, sizeof arguments, "bleu %s %s %s", hyp, ref1, ref2);
    Run *r = run("", arguments);
    ck_assert_str_eq(r->out, "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 "
                             "hyp_len = 17 ref_len = 18)\n"
                             "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0\n");
    unlink(hyp), unlink(ref1), unlink(ref2);
    r = run("", "bleu --help");
    ck_assert_int_eq(r->status, 0);
    ck_assert(strncmp(r->out, "usage: transformer bleu HYP REF", 31) == 0);
    r = run("", "--help");
    ck_assert(strstr(r->out, "  bleu ") != NULL);
}
END_TEST

START_TEST(bleu_command_errors)
{
    char arguments[256];
    const char *two = temp_text(0, "a\nb\n"), *three = temp_text(1, "a\nb\nc");
    snprintf(arguments, sizeof arguments, "bleu %s %s", two, three);
    assert_input_error(arguments, "has 2 lines but", "has 3");
    unlink(two), unlink(three);
    /* length 0: the string's length */
    static const struct { const char *bytes; size_t length; const char *says; } bad[] = {
        {"ok\nbad \xff here\n", 0, "line 2: not valid UTF-8 (byte 0xff at byte 5"},
        {"\xc0\xaf\n", 0, "line 1: not valid UTF-8 (byte 0xc0"},        /* overlong '/' */
        {"x\n\xed\xa0\x80\n", 0, "line 2: not valid UTF-8 (byte 0xed"},  /* a surrogate */
        {"\xf4\x90\x80\x80", 0, "line 1: not valid UTF-8"},             /* > U+10FFFF */
        {"caf\xc3", 0, "line 1: not valid UTF-8"},                      /* truncated */
        {"a\n\nb\0c\n", 7, ":3: a NUL byte at byte 2"},   /* as every reader says it */
    };
    const char *good = temp_text(1, "a\nb\nc\nd\n");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = temp_file(0, bad[i].bytes,
                                     bad[i].length ? bad[i].length : strlen(bad[i].bytes));
        snprintf(arguments, sizeof arguments, "bleu %s %s", good, path);
        assert_input_error(arguments, path, bad[i].says);
        unlink(path);
    }
    unlink(good);
    assert_input_error("bleu /nonexistent/hyp data/multi30k/val.en",
                       "cannot read /nonexistent/hyp", "No such file");
    assert_input_error("bleu data/multi30k/val.en data", "cannot read data", "directory");
    Run *r = run("", "bleu data/multi30k/val.en");
    ck_assert_int_eq(r->status, 2);
    ck_assert(strstr(r->err, "expects a hypothesis file and a reference file") != NULL);
    r = run("", "bleu data/multi30k/val.en data/multi30k/val.en --tokenize none");
    ck_assert_int_eq(r->status, 2);
    ck_assert(strstr(r->err, "unknown option '--tokenize'") != NULL);
}
END_TEST

/* The statistics of each line of two small files of test2016: the shipped model's beam
   output and the references. */
static BleuStats *test_segments(long *count)
{
    BleuLines hyp, ref;
    Error error;
    ck_assert(bleu_read_lines(&hyp, "figures/multi30k/shipped.test2016.beam4.en", &error)
              == NULL);
    ck_assert(bleu_read_lines(&ref, "data/multi30k/test2016.en", &error) == NULL);
    BleuStats *segments = calloc((size_t)hyp.count, sizeof *segments);
    for (long i = 0; i < hyp.count; i++) {
        const char *refs[] = {ref.lines[i]};
        bleu_add_segment(&segments[i], hyp.lines[i], refs, 1, false);
    }
    *count = hyp.count;
    bleu_lines_free(&hyp), bleu_lines_free(&ref);
    return segments;
}

START_TEST(bleu_resamples_as_sacrebleu)
{
    long count;
    BleuStats *segments = test_segments(&count);
    BleuStats sum = {0};
    for (long i = 0; i < count; i++) {
        sum.hyp_len += segments[i].hyp_len, sum.ref_len += segments[i].ref_len;
        for (int n = 0; n < BLEU_MAX_ORDER; n++)
            sum.correct[n] += segments[i].correct[n], sum.total[n] += segments[i].total[n];
    }
    const double corpus = bleu_compute(&sum, false).score;
    /* Every sentence once, in order and reversed: the corpus score exactly. */
    long *index = malloc((size_t)count * sizeof *index);
    for (long i = 0; i < count; i++) index[i] = i;
    ck_assert(bleu_resample(segments, index, count).score == corpus);
    for (long i = 0; i < count; i++) index[i] = count - 1 - i;
    ck_assert(bleu_resample(segments, index, count).score == corpus);
    /* One sentence twice and another left out: another score. */
    index[0] = index[1];
    ck_assert(bleu_resample(segments, index, count).score != corpus);
    /* The same seed draws the same resamples; another seed others. */
    double a[200], b[200], c[200];
    bleu_bootstrap(segments, count, 200, BLEU_SEED, a);
    bleu_bootstrap(segments, count, 200, BLEU_SEED, b);
    bleu_bootstrap(segments, count, 200, BLEU_SEED + 1, c);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    ck_assert(memcmp(a, c, sizeof a) != 0);
    /* The interval: around the corpus score, its mean within a point of it, half a width
       between 0.5 and 3 BLEU for a thousand sentences. */
    double mean, half;
    bleu_interval(a, 200, &mean, &half);
    ck_assert_msg(fabs(mean - corpus) < 1.0 && half > 0.5 && half < 3.0, "%g %g %g", corpus,
                  mean, half);
    for (int k = 1; k < 200; k++) ck_assert(a[k - 1] <= a[k]);   /* sorted in place */
    /* sacreBLEU's estimate_ci on 0, 1, ..., 999: positions 25 and 974, mean 499.5. */
    double ramp[1000];
    for (int k = 0; k < 1000; k++) ramp[k] = 999 - k;
    bleu_interval(ramp, 1000, &mean, &half);
    ck_assert(mean == 499.5 && half == 0.5 * (974 - 25));
    /* The p-value: equal scores on every resample give 1; a system far ahead on every
       resample, 1/(n+1). */
    double same[4] = {40, 41, 42, 43}, ahead[4] = {50, 51, 52, 53};
    ck_assert(bleu_paired_p(same, same, 4, 0.0) == 1.0);
    ck_assert(bleu_paired_p(same, ahead, 4, 10.0) == 1.0 / 5.0);
    free(index), free(segments);
}
END_TEST

START_TEST(bleu_paired_bootstrap_command)
{
    /* A planted difference: the beam output with every third line cut to its first word
       is significantly worse; the output against itself is not different at all. */
    Run *r = run("", "bleu --confidence figures/multi30k/shipped.test2016.beam4.en "
                     "data/multi30k/test2016.en");
    ck_assert_int_eq(r->status, 0);
    ck_assert_msg(strncmp(r->out, "BLEU = 41.19 (\xce\xbc = ", 19) == 0, "%s", r->out);
    ck_assert(strstr(r->out, "\nnrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|") != NULL);
    char *again = strdup(r->out);
    r = run("", "bleu --confidence figures/multi30k/shipped.test2016.beam4.en "
                "data/multi30k/test2016.en");
    ck_assert_str_eq(r->out, again);   /* seeded: the same interval */
    r = run("", "bleu --confidence --seed 7 figures/multi30k/shipped.test2016.beam4.en "
                "data/multi30k/test2016.en");
    ck_assert(strcmp(r->out, again) != 0 && strstr(r->out, "|seed:7|") != NULL);
    free(again);
    BleuLines beam;
    Error error;
    ck_assert(bleu_read_lines(&beam, "figures/multi30k/shipped.test2016.beam4.en", &error)
              == NULL);
    char worse_path[] = "/tmp/bleu-worse-XXXXXX";
    const int fd = mkstemp(worse_path);
    FILE *worse = fdopen(fd, "w");
    for (long i = 0; i < beam.count; i++) {
        if (i % 3 == 0) fprintf(worse, "%.*s\n", (int)strcspn(beam.lines[i], " "), beam.lines[i]);
        else fprintf(worse, "%s\n", beam.lines[i]);
    }
    fclose(worse);
    bleu_lines_free(&beam);
    char arguments[512];
    snprintf(arguments, sizeof arguments, "bleu --paired-bs "
             "figures/multi30k/shipped.test2016.beam4.en %s "
             "figures/multi30k/shipped.test2016.beam4.en data/multi30k/test2016.en", worse_path);
    r = run("", arguments);
    ck_assert_msg(r->status == 0, "%s", r->err);
    ck_assert_msg(strncmp(r->out, "baseline: figures/multi30k/shipped.test2016.beam4.en\n"
                                  "BLEU = 41.19 (", 67) == 0, "%s", r->out);
    const char *planted = strstr(r->out, worse_path);
    ck_assert(planted != NULL);
    ck_assert_msg(strstr(planted, "\np = 0.0010: significant at 0.05\n") != NULL, "%s", r->out);
    ck_assert_msg(strstr(planted, "\np = 1.0000: not significant at 0.05\n") != NULL, "%s",
                  r->out);
    ck_assert(strstr(r->out, "\nnrefs:1|bs:1000|seed:12345|case:mixed|") != NULL);
    unlink(worse_path);
    r = run("", "bleu --paired-bs figures/multi30k/shipped.test2016.beam4.en "
                "data/multi30k/test2016.en");
    ck_assert_int_eq(r->status, 2);
    ck_assert(strstr(r->err, "--paired-bs expects a baseline, one or more systems and a "
                             "reference file") != NULL);
}
END_TEST

Suite *bleu_suite(void)
{
    Suite *suite = suite_create("bleu");
    TCase *bleu = tcase_create("bleu");
    tcase_add_test(bleu, bleu_hand_computed_cases);
    tcase_add_test(bleu, bleu_tokenizes_like_13a);
    tcase_add_test(bleu, bleu_lowercases_like_python);
    tcase_add_test(bleu, bleu_matches_sacrebleu_tests);
    tcase_add_test(bleu, bleu_edge_cases);
    tcase_add_test(bleu, bleu_counts_a_long_line_exactly);
    tcase_add_test(bleu, bleu_command);
    tcase_add_test(bleu, bleu_command_errors);
    tcase_add_test(bleu, bleu_resamples_as_sacrebleu);
    tcase_add_test(bleu, bleu_paired_bootstrap_command);
    tcase_set_timeout(bleu, 60);
    suite_add_tcase(suite, bleu);
    return suite;
}
