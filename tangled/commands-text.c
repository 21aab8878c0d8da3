#line 115 "book/program.nw"
/* The commands about text: tokenize, vocab (the text chapter) and bleu (the BLEU chapter).
   Generated from the book's chapters by notangle: edit the book, not this file. */
#include "cli.h"
#include "commands.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
/* <<commands-text.c includes>> */
#line 1364 "book/text.nw"
#include "text.h"
#line 1004 "book/bleu.nw"
#include "bleu.h"
/* <<commands-text.c functions>> */
#line 1371 "book/text.nw"
#define LANGUAGE_OPTION(options) \
    {"language", OPTION_CHOICE, &(options).language, 0, 0, "en|de"}
#line 1376 "book/text.nw"
int run_tokenize(int argc, char **argv)
{
    TextOptions options = {TEXT_ENGLISH, false};
    bool detokenize = false;
    const char *compare = NULL;
    const Option flags[] = {
        LANGUAGE_OPTION(options),
        {"lowercase", OPTION_SWITCH, &options.lowercase, 0, 0, NULL},
        {"detokenize", OPTION_SWITCH, &detokenize, 0, 0, NULL},
        {"compare", OPTION_TEXT, &compare, 0, 0, NULL},
    };
    no_operands("tokenize", parse_options("tokenize", flags, sizeof flags / sizeof *flags,
                                          argc, argv), argc, argv);
    if (detokenize && (compare || options.lowercase))
        usage_error("tokenize", "--detokenize takes neither --compare nor --lowercase");
    if (compare) {
        /* <<Compare the tokens of standard input with a reference file>> */
#line 1421 "book/text.nw"
        FILE *reference = fopen(compare, "r");
        if (reference == NULL) die("cannot open %s: %s", compare, strerror(errno));
        Agreement agreement;
        if (tokenization_agreement(stdin, "standard input", reference, compare, options, stdout,
                                   &agreement))
            die("%s", agreement.error);
        fclose(reference);
        const double lines = (double)(agreement.lines ? agreement.lines : 1);
        printf("identical: %ld of %ld lines (%.3f%%)\n", agreement.identical, agreement.lines,
               100.0 * (double)agreement.identical / lines);
#line 1393 "book/text.nw"
    } else {
        /* <<Tokenize or detokenize standard input line by line>> */
#line 1401 "book/text.nw"
        static TextLine line;
        char *text = NULL;
        size_t capacity = 0;
        ssize_t length;
        for (long number = 1; (length = getline(&text, &capacity, stdin)) >= 0; number++) {
            if (length > 0 && text[length - 1] == '\n') text[--length] = '\0';
            const char *problem =
                detokenize ? detokenize_line(options.language, text, (size_t)length, &line)
                           : tokenize_line(options, text, (size_t)length, &line);
            if (problem) die("standard input:%ld: %s", number, problem);
            puts(line.text);
        }
        if (ferror(stdin)) die("cannot read standard input: %s", strerror(errno));
        free(text);
#line 1395 "book/text.nw"
    }
    return 0;
}
#line 1457 "book/text.nw"
int run_vocab(int argc, char **argv)
{
    TextOptions options = {TEXT_ENGLISH, false};
    int min_frequency = 2;
    const char *save = NULL;
    const Option flags[] = {
        LANGUAGE_OPTION(options),
        {"lowercase", OPTION_SWITCH, &options.lowercase, 0, 0, NULL},
        {"min-freq", OPTION_INT, &min_frequency, 1, 1000000, NULL},
        {"save", OPTION_TEXT, &save, 0, 0, NULL},
    };
    const int first_file = parse_options("vocab", flags, sizeof flags / sizeof *flags, argc,
                                         argv);
    if (first_file == argc) usage_error("vocab", "which files?");
    /* <<Tokenize the files and build their vocabulary>> */
#line 1477 "book/text.nw"
    const int n_files = argc - first_file;
    TokenizedFile *files = xmalloc((size_t)n_files * sizeof *files);
    long count = 0, lines = 0;
    for (int f = 0; f < n_files; f++) {
        if (tokenize_file(argv[first_file + f], options, &files[f]))
            die("%s", files[f].error);
        count += files[f].count, lines += files[f].lines;
    }
    char **tokens = xmalloc((size_t)count * sizeof *tokens);
    long t = 0;
    for (int f = 0; f < n_files; t += files[f].count, f++)
        memcpy(tokens + t, files[f].token, (size_t)files[f].count * sizeof *tokens);
    Vocab vocab;
    vocab_build(&vocab, tokens, count, min_frequency);
    printf("%ld lines, %ld tokens, %ld distinct\n", lines, count, vocab.types);
    printf("vocabulary: %d = %d specials + %d tokens seen at least %d time%s\n", vocab.size,
           VOCAB_SPECIALS, vocab.size - VOCAB_SPECIALS, min_frequency, min_frequency == 1 ? "" : "s");
    if (save && vocab_save(&vocab, save)) die("%s", vocab.error);
    vocab_free(&vocab);
    for (int f = 0; f < n_files; f++) tokenized_file_free(&files[f]);
    free(files), free(tokens);
#line 1472 "book/text.nw"
    return 0;
}
#line 1008 "book/bleu.nw"
int run_bleu(int argc, char **argv)
{
    bool lowercase = false;
    for (int a = 0; a < argc && strcmp(argv[a], "--") != 0; a++)
        if (strcmp(argv[a], "-lc") == 0) argv[a] = "--lowercase";   /* sacreBLEU's spelling */
    const Option options[] = {{"lowercase", OPTION_SWITCH, &lowercase, 0, 0, NULL}};
    const int first = parse_options("bleu", options, 1, argc, argv);
    const char **paths = (const char **)argv + first;
    const int n_paths = argc - first;
    if (n_paths < 2)
        usage_error("bleu", "expects a hypothesis file and a reference file");
    BleuLines *files = xmalloc((size_t)n_paths * sizeof *files);
    char error[4400];
    for (int f = 0; f < n_paths; f++)
        if (bleu_read_lines(&files[f], paths[f], error, sizeof error)) die("%s", error);
    for (int f = 1; f < n_paths; f++)
        if (files[f].count != files[0].count)
            die("%s has %ld lines but %s has %ld: BLEU needs one reference line for each "
                "hypothesis line", paths[0], files[0].count, paths[f], files[f].count);
    /* <<Score the lines and print the score and the signature>> */
#line 1035 "book/bleu.nw"
    const int n_refs = n_paths - 1;
    const char **refs = xmalloc((size_t)n_refs * sizeof *refs);
    BleuStats stats = {0};
    for (long i = 0; i < files[0].count; i++) {
        for (int r = 0; r < n_refs; r++) refs[r] = files[r + 1].lines[i];
        bleu_add_segment(&stats, files[0].lines[i], refs, n_refs, lowercase);
    }
    free(refs);
    const BleuScore score = bleu_compute(&stats, false);
    char line[256];
    bleu_format_score(line, sizeof line, &score);
    printf("%s\n", line);
    bleu_signature(line, sizeof line, n_refs, lowercase, false);
    printf("%s\n", line);
#line 1028 "book/bleu.nw"
    for (int f = 0; f < n_paths; f++) bleu_lines_free(&files[f]);
    free(files);
    return 0;
}
