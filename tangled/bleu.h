/* Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef BLEU_H
#define BLEU_H
#include <stdbool.h>
#include <stddef.h>
#include "tensor.h"

/* <<bleu.h declarations>> */
/* The line tokenized by sacreBLEU's 13a rules: words separated by single spaces, no space
   at either end. LINE is UTF-8; free() the result. */
char *bleu_tokenize_13a(const char *line);

/* Whether bleu_lowercase can work here (it needs the C.UTF-8 locale): NULL, or why not in
   error. */
const char *bleu_lowercase_ready(Error *error);

/* LINE lowercased as Python's str.lower() does (see the book for the one approximation);
   UTF-8 in and out; free() the result. */
char *bleu_lowercase(const char *line);

/* sacreBLEU's preprocessing of one segment: optionally lowercase, strip trailing
   whitespace, tokenize with 13a. free() the result. */
char *bleu_preprocess(const char *line, bool lowercase);

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

BleuScore bleu_corpus(const char *const *hypotheses, const char *const *const *references,
                      int n_refs, long count, bool lowercase, bool effective_order);

/* The score line, in sacreBLEU's format. */
void bleu_format_score(char *buffer, size_t size, const BleuScore *s);

#define BLEU_SACREBLEU_VERSION "2.6.0"
/* sacreBLEU's signature of a BLEU score computed with these settings. */
void bleu_signature(char *buffer, size_t size, int n_refs, bool lowercase,
                    bool effective_order);

/* The corpus BLEU of the segments SEGMENTS[INDEX[0]], ..., SEGMENTS[INDEX[COUNT - 1]] (a
   segment may come more than once): their statistics summed, then bleu_compute. */
BleuScore bleu_resample(const BleuStats *segments, const long *index, long count);

enum { BLEU_RESAMPLES = 1000, BLEU_SEED = 12345 };   /* sacreBLEU's defaults */

/* The scores of RESAMPLES resamples of the COUNT segments, each resample COUNT segment
   numbers drawn uniformly with replacement by the generator seeded with SEED, into SCORES
   (RESAMPLES values). The same seed and count draw the same resamples. */
void bleu_bootstrap(const BleuStats *segments, long count, int resamples, uint64_t seed,
                    double *scores);

/* The mean of the N scores and half the distance between the scores at positions n/40
   and n - 1 - n/40 once sorted (sacreBLEU's estimate_ci); SCORES is sorted in place. */
void bleu_interval(double *scores, int n, double *mean, double *half_width);

/* The p-value of paired bootstrap resampling: BASELINE and SYSTEM are the scores of the same
   N resamples, DIFFERENCE the absolute difference of the two corpus scores. */
double bleu_paired_p(const double *baseline, const double *system, int n, double difference);

/* The score line with the mean and the half-width of a bootstrap interval. */
void bleu_format_interval(char *buffer, size_t size, const BleuScore *s, double mean,
                          double half_width);
/* The signature of a score with an interval from RESAMPLES resamples drawn with SEED. */
void bleu_signature_resampled(char *buffer, size_t size, int n_refs, bool lowercase,
                              int resamples, uint64_t seed);

typedef struct {
    char *text;       /* the whole file, its line ends replaced by NULs */
    char **lines;
    long count;
} BleuLines;

/* Read the UTF-8 text file at PATH as lines. NULL, or one line in error that names the
   file (and the line); then there is nothing to free. */
const char *bleu_read_lines(BleuLines *file, const char *path, Error *error);
void bleu_lines_free(BleuLines *file);
#endif
