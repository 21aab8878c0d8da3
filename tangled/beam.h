/* Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef BEAM_H
#define BEAM_H
#include "decode.h"

/* <<beam.h declarations>> */
/* lp(n), the length penalty of the beam's score, for an output of n tokens after the
   start symbol (1 for n < 1). */
double length_penalty(const DecodeSettings *settings, int n);

typedef struct {
    int max_batch, size;        /* laid out for: B_max sources, beams of k candidates, */
    int max_len, vocab;         /* outputs of L tokens, V symbols */
    DecodeSettings settings;    /* of the search under way */
    int batch, step;            /* sources; tokens chosen so far after the start symbol */
    bool done;                  /* every source is finished */
    bool moved;                 /* the last step gave some alive row another parent */
    int *limit, *open;          /* [max_batch]: most tokens after start; places open */
    int *alive, *count;         /* [max_batch]: alive candidates; finished outputs */
    int *prefix, *next_prefix;  /* [max_batch * size][max_len]: candidates' tokens */
    double *sum, *next_sum;     /* [max_batch * size]: their log-probabilities */
    int *parent, *feed;         /* [max_batch * size]: row continued; token fed next */
    int *index;                 /* [max_batch * size]: the row of a step's log-probabilities
                                   (and of the cache) that holds row r, or -1 */
    int *cache_parent;          /* [max_batch * size]: beam_search's scratch */
    int *top_slot, *top_token;  /* [size]: best expansions of one source, best first */
    double *top_sum;            /* [size] */
    int *hyp;                   /* [max_batch * size][max_len]: finished, padded */
    int *hyp_len;               /* [max_batch * size]: their tokens before the padding */
    double *hyp_sum, *hyp_score;   /* [max_batch * size]: log-probability, score */
} Beam;

void beam_init(Beam *beam, int max_batch, int size, int max_len, int vocab);
void beam_free(Beam *beam);

/* Start a search of batch sources with settings: each source's beam holds the start
   symbol alone, with sum 0. src_keep: [batch][src_len] (NULL: no source limit). */
void beam_begin(Beam *beam, int batch, const uint8_t *src_keep, int src_len,
                const DecodeSettings *settings);
/* One step: logprobs: [rows][vocab], the next token's log-probabilities after each row's
   prefix, row r's in row index[r] (beam_begin sets index[r] = r; rows of no alive
   candidate are not read). Afterwards parent says which row each row continues and feed
   the token it is fed next. Returns beam->done. */
bool beam_advance(Beam *beam, const float *logprobs);
/* out[b] = the best output of source b, padded: out: [batch][settings.max_len],
   lengths: [batch], sums: [batch] (log-probabilities); each may be NULL. The finished
   outputs stay sorted in hyp, hyp_len, hyp_sum and hyp_score. */
void beam_finish(const Beam *beam, int *out, int *lengths, double *sums);

/* Beam search with beam->size candidates per source, batched: out[b] = the best output
   for source b by score (penalized with settings), padded; out: [batch][settings->max_len],
   lengths, sums: [batch] as in beam_finish (may be NULL). The cache holds
   batch * beam->size sequences of max_len - 1 positions, and the model is prepared for
   batch sequences of source->len tokens. All finished outputs are in beam (beam_finish). */
void beam_search(Model *model, KVCache *cache, Beam *beam, int *out, int *lengths,
                 double *sums, const SourceBatch *source, const DecodeSettings *settings);
#endif
