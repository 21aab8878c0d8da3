#line 27 "book/translate.nw"
/* Generated from the book's chapters by notangle: edit the book, not this file. */
#include "data.h"
#include <stdlib.h>
#include <string.h>
#line 71 "book/translate.nw"
void corpus_free(Corpus *corpus)
{
    free(corpus->src_offset), free(corpus->tgt_offset);
    free(corpus->src_ids), free(corpus->tgt_ids);
    memset(corpus, 0, sizeof *corpus);
}
#line 120 "book/translate.nw"
static const Corpus *sorting_corpus;   /* qsort's comparison has no context argument */

static int by_length(const void *a, const void *b)
{
    const int i = *(const int *)a, j = *(const int *)b;
    const Corpus *c = sorting_corpus;
    int d = corpus_tgt_len(c, i) - corpus_tgt_len(c, j);
    if (d == 0) d = corpus_src_len(c, i) - corpus_src_len(c, j);
    return d != 0 ? d : (i > j) - (i < j);
}

void batch_plan(BatchPlan *plan, const Corpus *corpus, int token_budget)
{
    memset(plan, 0, sizeof *plan);
    const int n = corpus->count;
    plan->order = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *plan->order);
    plan->spans = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *plan->spans);
    for (int i = 0; i < n; i++) plan->order[i] = i;
    sorting_corpus = corpus;
    qsort(plan->order, (size_t)n, sizeof *plan->order, by_length);
    
#line 151 "book/translate.nw"
for (int i = 0; i < n;) {
    BatchSpan span = {.first = i};
    while (i < n) {
        const int pair = plan->order[i];
        const int s = span.src_len > corpus_src_len(corpus, pair)
                          ? span.src_len : corpus_src_len(corpus, pair);
        const int t = span.tgt_len > corpus_tgt_len(corpus, pair)
                          ? span.tgt_len : corpus_tgt_len(corpus, pair);
        if (span.count > 0 && (long)(span.count + 1) * (s > t ? s : t) > token_budget) break;
        span.count++, span.src_len = s, span.tgt_len = t, i++;
    }
    plan->spans[plan->count++] = span;
    if (span.count > plan->max_pairs) plan->max_pairs = span.count;
    if (span.src_len > plan->max_src_len) plan->max_src_len = span.src_len;
    if (span.tgt_len > plan->max_tgt_len) plan->max_tgt_len = span.tgt_len;
}
#line 141 "book/translate.nw"
}

void batch_plan_free(BatchPlan *plan)
{
    free(plan->order), free(plan->spans);
    memset(plan, 0, sizeof *plan);
}
#line 182 "book/translate.nw"
void batch_fill_span(Batch *batch, const Corpus *corpus, const BatchPlan *plan,
                     const BatchSpan *span, int pad)
{
    const int n = span->count, s = span->src_len, t = span->tgt_len - 1;
    batch->batch = n, batch->src_len = s, batch->tgt_len = t;
    for (int b = 0; b < n; b++) {
        const int pair = plan->order[span->first + b];
        const int *src = corpus_src(corpus, pair), *tgt = corpus_tgt(corpus, pair);
        const int src_len = corpus_src_len(corpus, pair), tgt_len = corpus_tgt_len(corpus, pair);
        for (int i = 0; i < s; i++) batch->src[(size_t)b * s + i] = i < src_len ? src[i] : pad;
        for (int i = 0; i < t; i++) {
            batch->tgt[(size_t)b * t + i] = i < tgt_len ? tgt[i] : pad;
            batch->tgt_y[(size_t)b * t + i] = i + 1 < tgt_len ? tgt[i + 1] : pad;
        }
    }
    padding_mask(batch->src_keep, batch->src, n, s, pad);
    target_mask(batch->tgt_keep, batch->tgt, n, t, pad);
}
#line 215 "book/translate.nw"
void batch_order(int *order, int count, uint64_t seed, int epoch)
{
    Rng rng;
    rng_seed(&rng, seed * 1000003u + (uint64_t)epoch, 5);
    for (int i = 0; i < count; i++) order[i] = i;
    for (int i = count - 1; i > 0; i--) {   /* Fisher--Yates */
        const int j = (int)(rng_next(&rng) % (uint32_t)(i + 1));
        const int swap = order[i];
        order[i] = order[j], order[j] = swap;
    }
}
