/* Sentence pairs as token numbers, and batches of similar lengths. Generated from the
   book's chapters by notangle: edit the book, not this file. */
#ifndef DATA_H
#define DATA_H
#include "batch.h"
#include "safetensors.h"
#include "vocab.h"

/* <<data.h declarations>> */
typedef struct {
    int count;                       /* sentence pairs */
    int *src_offset, *tgt_offset;    /* [count + 1]: where each sentence starts */
    int *src_ids, *tgt_ids;          /* all sentences, one after the other */
} Corpus;

/* Sentence i of a side: its first token number, and its length in tokens. */
static inline const int *corpus_src(const Corpus *c, int i)
{
    return c->src_ids + c->src_offset[i];
}
static inline const int *corpus_tgt(const Corpus *c, int i)
{
    return c->tgt_ids + c->tgt_offset[i];
}
static inline int corpus_src_len(const Corpus *c, int i)
{
    return c->src_offset[i + 1] - c->src_offset[i];
}
static inline int corpus_tgt_len(const Corpus *c, int i)
{
    return c->tgt_offset[i + 1] - c->tgt_offset[i];
}
void corpus_free(Corpus *corpus);

typedef struct {
    int first, count;   /* pairs order[first .. first + count - 1] */
    int src_len, tgt_len;   /* the longest source and target in the batch */
} BatchSpan;

typedef struct {
    int *order;         /* [corpus count]: pair numbers sorted by length */
    BatchSpan *spans;   /* [count] */
    int count;
    int max_pairs, max_src_len, max_tgt_len;   /* the largest of all batches */
} BatchPlan;

/* Cut the corpus, sorted by length, into batches of at most token_budget padded tokens
   (a pair longer than the budget gets a batch of its own). */
void batch_plan(BatchPlan *plan, const Corpus *corpus, int token_budget);
void batch_plan_free(BatchPlan *plan);

/* Fill batch (allocated for at least span's sizes) with the pairs of span, padded with pad. */
void batch_fill_span(Batch *batch, const Corpus *corpus, const BatchPlan *plan,
                     const BatchSpan *span, int pad);

/* order[i] = the i-th batch to visit in epoch epoch (from 1): a permutation of 0..count-1. */
void batch_order(int *order, int count, uint64_t seed, int epoch);

/* The largest batch sizes of two plans (training and validation), each size on its own. */
BatchBounds batch_plan_bounds(const BatchPlan *a, const BatchPlan *b);

/* The first limit lines (0: all) of two tokenized files as a corpus, numbered with the
   vocabularies, each sentence between <s> and </s> and at most max_tokens tokens long. */
Corpus corpus_number(const TokenizedFile *src, const TokenizedFile *tgt,
                     const Vocab *src_vocab, const Vocab *tgt_vocab, long limit,
                     int max_tokens);

typedef struct {
    Vocab src_vocab, tgt_vocab;     /* from the training pairs used */
    Corpus train, validation;       /* the pairs, numbered */
} TranslationData;

/* Read dir/train.de, train.en, val.de and val.en; build the vocabularies from the first
   subset training pairs (0: all), one from both languages if joint (then the two are the
   same), learned by byte-pair encoding to subwords tokens if subwords > 0 (then joint);
   and number the pairs (also at most subset of each set). NULL, or a one-line message in
   error. */
const char *translation_data_load(TranslationData *data, const char *dir, long subset,
                                  bool joint, int subwords, Error *error);
void translation_data_free(TranslationData *data);
#endif
