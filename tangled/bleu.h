#line 15 "book/bleu-engine.nw"
/* Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef BLEU_H
#define BLEU_H
#include <stdbool.h>
#include <stddef.h>
#include "tensor.h"

/* <<bleu.h declarations>> */
#line 252 "book/bleu-engine.nw"
/* The line tokenized by sacreBLEU's 13a rules: words separated by single spaces, no space
   at either end. LINE is UTF-8; free() the result. */
char *bleu_tokenize_13a(const char *line);

#line 362 "book/bleu-engine.nw"
/* Whether bleu_lowercase can work here (it needs the C.UTF-8 locale): NULL, or why not in
   error (size bytes). */
const char *bleu_lowercase_ready(char *error, size_t size);

#line 371 "book/bleu-engine.nw"
/* LINE lowercased as Python's str.lower() does (see the book for the one approximation);
   UTF-8 in and out; free() the result. */
char *bleu_lowercase(const char *line);

#line 424 "book/bleu-engine.nw"
/* sacreBLEU's preprocessing of one segment: optionally lowercase, strip trailing
   whitespace, tokenize with 13a. free() the result. */
char *bleu_preprocess(const char *line, bool lowercase);

#line 461 "book/bleu-engine.nw"
enum { BLEU_MAX_ORDER = 4 };

typedef struct {
    long long hyp_len, ref_len;              /* words, summed over the segments */
    long long correct[BLEU_MAX_ORDER];       /* clipped matching n-grams, n = 1..4 */
    long long total[BLEU_MAX_ORDER];         /* n-grams of the hypotheses */
} BleuStats;

/* Add to STATS the counts of one hypothesis against its N_REFS >= 1 references (raw
   UTF-8 text: they are preprocessed here, lowercased if asked). */
void bleu_add_segment(BleuStats *stats, const char *hypothesis,
                      const char *const *references, int n_refs, bool lowercase);

#line 742 "book/bleu-engine.nw"
typedef struct {
    double score;                        /* 0 to 100 */
    double precisions[BLEU_MAX_ORDER];   /* percent, smoothed */
    double bp;                           /* the brevity penalty */
    double ratio;                        /* hyp_len / ref_len, 0 when ref_len is 0 */
    BleuStats stats;
} BleuScore;

/* sacreBLEU's corpus BLEU of the statistics, with 'exp' smoothing; EFFECTIVE_ORDER
   averages only the orders that the hypotheses have n-grams of (sacreBLEU's default for
   corpus BLEU is false). */
BleuScore bleu_compute(const BleuStats *stats, bool effective_order);

#line 800 "book/bleu-engine.nw"
BleuScore bleu_corpus(const char *const *hypotheses, const char *const *const *references,
                      int n_refs, long count, bool lowercase, bool effective_order);

#line 833 "book/bleu-engine.nw"
/* The score line, in sacreBLEU's format. */
void bleu_format_score(char *buffer, size_t size, const BleuScore *s);

#line 860 "book/bleu-engine.nw"
#define BLEU_SACREBLEU_VERSION "2.6.0"
/* sacreBLEU's signature of a BLEU score computed with these settings. */
void bleu_signature(char *buffer, size_t size, int n_refs, bool lowercase,
                    bool effective_order);

#line 897 "book/bleu-engine.nw"
typedef struct {
    char *text;       /* the whole file, its line ends replaced by NULs */
    char **lines;
    long count;
} BleuLines;

/* Read the UTF-8 text file at PATH as lines. NULL, or one line in error (size bytes) that
   names the file (and the line); then there is nothing to free. */
const char *bleu_read_lines(BleuLines *file, const char *path, char *error, size_t size);
void bleu_lines_free(BleuLines *file);
#line 22 "book/bleu-engine.nw"
#endif
