/* The commands about text: tokenize, vocab (the text chapter) and bleu (the BLEU chapter).
   Generated from the book's chapters by notangle: edit the book, not this file. */
#include "cli.h"
#include "commands.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
/* <<commands-text.c includes>> */
#include "vocab.h"
#include "bleu.h"

/* <<commands-text.c functions>> */
#define LANGUAGE_OPTION(options) \
    {"language", OPTION_CHOICE, &(options).language, 0, 0, "en|de", "the language's rules"}

int run_tokenize(int argc, char **argv)
{
    TextOptions options = {TEXT_ENGLISH, false};
    bool detokenize = false;
    const char *compare = NULL, *subwords_path = NULL;
    const Option flags[] = {
        LANGUAGE_OPTION(options),
        {"lowercase", OPTION_SWITCH, &options.lowercase, 0, 0, NULL, "lowercase the tokens"},
        {"detokenize", OPTION_SWITCH, &detokenize, 0, 0, NULL, "join tokens back into text"},
        {"compare", OPTION_TEXT, &compare, 0, 0, NULL, "FILE compare with the tokens of FILE"},
        {"subwords", OPTION_TEXT, &subwords_path, 0, 0, NULL,
         "FILE cut the tokens into the pieces of vocabulary FILE (or join them)"},
    };
    no_operands("tokenize", parse_options("tokenize", flags, sizeof flags / sizeof *flags,
                                          argc, argv), argc, argv);
    if (detokenize && (compare || options.lowercase))
        usage_error("tokenize", "--detokenize takes neither --compare nor --lowercase");
    if (compare && subwords_path)
        usage_error("tokenize", "--compare does not take --subwords");
    Vocab subwords = {0};
    if (subwords_path && vocab_load(&subwords, subwords_path)) die("%s", subwords.error.message);
    if (compare) {
        /* <<Compare the tokens of standard input with a reference file>> */
        FILE *reference = fopen(compare, "r");
        if (reference == NULL) die("cannot open %s: %s", compare, strerror(errno));
        Agreement agreement;
        if (tokenization_agreement(stdin, "standard input", reference, compare, options, stdout,
                                   &agreement))
            die("%s", agreement.error.message);
        fclose(reference);
        const double lines = (double)(agreement.lines ? agreement.lines : 1);
        printf("identical: %ld of %ld lines (%.3f%%)\n", agreement.identical, agreement.lines,
               100.0 * (double)agreement.identical / lines);
    } else {
        /* <<Tokenize or detokenize standard input line by line>> */
        static TextLine line;
        LineReader reader = {0};
        for (long length; (length = read_line(stdin, &reader)) >= 0;) {
            if (detokenize && subwords_path)
                length = (long)vocab_join_subwords(reader.text, (size_t)length);
            const char *problem =
                detokenize ? detokenize_line(options.language, reader.text, (size_t)length, &line)
                           : tokenize_line(options, reader.text, (size_t)length, &line);
            if (problem) die("standard input:%ld: %s", reader.number, problem);
            if (subwords_path && !detokenize) {
                /* <<Print the line's tokens as the pieces of the vocabulary>> */
                const char *separator = "";
                for (char *token = strtok(line.text, " "); token; token = strtok(NULL, " ")) {
                    int ids[TEXT_MAX_LINE_BYTES];
                    const int n = vocab_encode(&subwords, token, ids, TEXT_MAX_LINE_BYTES);
                    for (int k = 0; k < n; k++, separator = " ")
                        printf("%s%s", separator, vocab_token(&subwords, ids[k]));
                }
                putchar('\n');
            } else {
                puts(line.text);
            }
        }
        if (ferror(stdin)) die("cannot read standard input: %s", strerror(errno));
        free(reader.text);
    }
    vocab_free(&subwords);
    return 0;
}

int run_vocab(int argc, char **argv)
{
    TextOptions options = {TEXT_ENGLISH, false};
    int min_frequency = 2, subwords = 0;
    const char *save = NULL;
    const Option flags[] = {
        LANGUAGE_OPTION(options),
        {"lowercase", OPTION_SWITCH, &options.lowercase, 0, 0, NULL, "lowercase the tokens"},
        {"min-freq", OPTION_INT, &min_frequency, 1, 1000000, NULL,
         "N keep the tokens seen at least N times"},
        {"subwords", OPTION_INT, &subwords, 1, 1000000, NULL,
         "N learn at most N subwords (byte-pair encoding) instead"},
        {"save", OPTION_TEXT, &save, 0, 0, NULL,
         "FILE write the vocabulary to FILE, a token a line"},
    };
    const int first_file = parse_options("vocab", flags, sizeof flags / sizeof *flags, argc,
                                         argv);
    if (first_file == argc) usage_error("vocab", "which files?");
    /* <<Tokenize the files and build their vocabulary>> */
    const int n_files = argc - first_file;
    TokenizedFile *files = xmalloc((size_t)n_files * sizeof *files);
    long count = 0, lines = 0;
    for (int f = 0; f < n_files; f++) {
        if (tokenize_file(argv[first_file + f], options, &files[f]))
            die("%s", files[f].error.message);
        count += files[f].count, lines += files[f].lines;
    }
    char **tokens = xmalloc((size_t)count * sizeof *tokens);
    long t = 0;
    for (int f = 0; f < n_files; t += files[f].count, f++)
        if (files[f].count > 0)   /* an empty file has no token array: memcpy(.., NULL, 0) is UB */
            memcpy(tokens + t, files[f].token, (size_t)files[f].count * sizeof *tokens);
    Vocab vocab;
    if (subwords) {
        /* <<Learn the subwords of the tokens and count the pieces>> */
        vocab_learn_subwords(&vocab, tokens, count, subwords);
        long pieces = 0, whole = 0;
        for (long i = 0; i < count; i++) {
            int ids[TEXT_MAX_LINE_BYTES];
            const int n = vocab_encode(&vocab, tokens[i], ids, TEXT_MAX_LINE_BYTES);
            pieces += n, whole += n == 1;
        }
        printf("%ld lines, %ld tokens cut into %ld pieces (%.3f a token; %.1f%% of the tokens whole)\n",
               lines, count, pieces, (double)pieces / (double)(count ? count : 1),
               100.0 * (double)whole / (double)(count ? count : 1));
        printf("vocabulary: %d = %d specials + %d subwords\n", vocab.size, VOCAB_SPECIALS,
               vocab.size - VOCAB_SPECIALS);
    } else {
        vocab_build(&vocab, tokens, count, min_frequency);
        printf("%ld lines, %ld tokens, %ld distinct\n", lines, count, vocab.types);
        printf("vocabulary: %d = %d specials + %d tokens seen at least %d time%s\n", vocab.size,
               VOCAB_SPECIALS, vocab.size - VOCAB_SPECIALS, min_frequency,
               min_frequency == 1 ? "" : "s");
    }
    if (save && vocab_save(&vocab, save)) die("%s", vocab.error.message);
    vocab_free(&vocab);
    for (int f = 0; f < n_files; f++) tokenized_file_free(&files[f]);
    free(files), free(tokens);
    return 0;
}

typedef struct {
    bool on;          /* --confidence or --paired-bs */
    int resamples;
    uint64_t seed;
} BleuResampling;

/* The statistics of each line of HYP against the lines of the N_REFS files REFS. */
static BleuStats *count_lines(const BleuLines *hyp, const BleuLines *refs, int n_refs,
                              bool lowercase)
{
    BleuStats *segments = xmalloc((size_t)(hyp->count + 1) * sizeof *segments);
    const char **line_refs = xmalloc((size_t)n_refs * sizeof *line_refs);
    for (long i = 0; i < hyp->count; i++) {
        segments[i] = (BleuStats){0};
        for (int r = 0; r < n_refs; r++) line_refs[r] = refs[r].lines[i];
        bleu_add_segment(&segments[i], hyp->lines[i], line_refs, n_refs, lowercase);
    }
    free(line_refs);
    return segments;
}

/* The corpus score of COUNT segments, each once. */
static BleuScore corpus_score(const BleuStats *segments, long count)
{
    long *all = xmalloc((size_t)(count + 1) * sizeof *all);
    for (long i = 0; i < count; i++) all[i] = i;
    const BleuScore score = bleu_resample(segments, all, count);
    free(all);
    return score;
}

static void score_system(const BleuLines *files, int n_refs, bool lowercase,
                         BleuResampling resampling)
{
    BleuStats *segments = count_lines(&files[0], &files[1], n_refs, lowercase);
    const BleuScore score = corpus_score(segments, files[0].count);
    char line[320];
    if (resampling.on) {
        double *scores = xmalloc((size_t)resampling.resamples * sizeof *scores);
        double mean, half_width;
        bleu_bootstrap(segments, files[0].count, resampling.resamples, resampling.seed,
                       scores);
        bleu_interval(scores, resampling.resamples, &mean, &half_width);
        bleu_format_interval(line, sizeof line, &score, mean, half_width);
        printf("%s\n", line);
        bleu_signature_resampled(line, sizeof line, n_refs, lowercase, resampling.resamples,
                                 resampling.seed);
        free(scores);
    } else {
        bleu_format_score(line, sizeof line, &score);
        printf("%s\n", line);
        bleu_signature(line, sizeof line, n_refs, lowercase, false);
    }
    printf("%s\n", line);
    free(segments);
}

static void compare_systems(const BleuLines *files, const char *const *paths, int n_systems,
                            bool lowercase, BleuResampling resampling)
{
    const int n = resampling.resamples;
    const long count = files[0].count;
    double *baseline = xmalloc((size_t)n * sizeof *baseline);
    double *scores = xmalloc((size_t)n * sizeof *scores);
    double *sorted = xmalloc((size_t)n * sizeof *sorted);
    double baseline_score = 0.0;
    char line[320];
    for (int s = 0; s < n_systems; s++) {
        BleuStats *segments = count_lines(&files[s], &files[n_systems], 1, lowercase);
        const BleuScore score = corpus_score(segments, count);
        double *drawn = s == 0 ? baseline : scores, mean, half_width;
        bleu_bootstrap(segments, count, n, resampling.seed, drawn);
        memcpy(sorted, drawn, (size_t)n * sizeof *sorted);
        bleu_interval(sorted, n, &mean, &half_width);
        bleu_format_interval(line, sizeof line, &score, mean, half_width);
        printf("%s%s\n%s\n", s == 0 ? "baseline: " : "", paths[s], line);
        if (s == 0) baseline_score = score.score;
        else {
            const double p = bleu_paired_p(baseline, scores, n,
                                           fabs(score.score - baseline_score));
            printf("p = %.4f: %s at 0.05\n", p, p < 0.05 ? "significant" : "not significant");
        }
        free(segments);
    }
    bleu_signature_resampled(line, sizeof line, 1, lowercase, n, resampling.seed);
    printf("%s\n", line);
    free(baseline), free(scores), free(sorted);
}

int run_bleu(int argc, char **argv)
{
    bool lowercase = false, confidence = false, paired = false;
    int resamples = BLEU_RESAMPLES;
    long seed = BLEU_SEED;
    for (int a = 0; a < argc && strcmp(argv[a], "--") != 0; a++)
        if (strcmp(argv[a], "-lc") == 0) argv[a] = "--lowercase";   /* sacreBLEU's spelling */
    const Option options[] = {
        {"lowercase", OPTION_SWITCH, &lowercase, 0, 0, NULL, "score lowercased text (also -lc)"},
        {"confidence", OPTION_SWITCH, &confidence, 0, 0, NULL,
         "add the mean and the interval of bootstrap resamples"},
        {"paired-bs", OPTION_SWITCH, &paired, 0, 0, NULL,
         "test each system after the first against it (paired bootstrap)"},
        {"resamples", OPTION_INT, &resamples, 1, 100000, NULL, "N resamples"},
        {"seed", OPTION_LONG, &seed, 0, 2147483647, NULL, "N seed of the resamples' draws"},
    };
    const int first = parse_options("bleu", options, sizeof options / sizeof *options, argc,
                                    argv);
    const char **paths = (const char **)argv + first;
    const int n_paths = argc - first;
    if (n_paths < (paired ? 3 : 2))
        usage_error("bleu", paired ? "--paired-bs expects a baseline, one or more systems "
                                     "and a reference file"
                                   : "expects a hypothesis file and a reference file");
    Error error;
    if (lowercase && bleu_lowercase_ready(&error)) die("%s", error.message);
    BleuLines *files = xmalloc((size_t)n_paths * sizeof *files);
    for (int f = 0; f < n_paths; f++)
        if (bleu_read_lines(&files[f], paths[f], &error)) die("%s", error.message);
    for (int f = 1; f < n_paths; f++)
        if (files[f].count != files[0].count)
            die("%s has %ld lines but %s has %ld: BLEU needs one reference line for each "
                "hypothesis line", paths[0], files[0].count, paths[f], files[f].count);
    const BleuResampling resampling = {confidence || paired, resamples, (uint64_t)seed};
    if (paired) compare_systems(files, paths, n_paths - 1, lowercase, resampling);
    else score_system(files, n_paths - 1, lowercase, resampling);
    for (int f = 0; f < n_paths; f++) bleu_lines_free(&files[f]);
    free(files);
    return 0;
}
