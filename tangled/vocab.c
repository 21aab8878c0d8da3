#line 1262 "book/text.nw"
/* The vocabulary: hashing, building, saving and loading. Generated from the book's chapters
   by notangle: edit the book, not this file. */
#include "vocab.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "utf8.h"
/* <<vocab.c definitions>> */
#line 1297 "book/text.nw"
const char *const vocab_specials[VOCAB_SPECIALS] = {"<s>", "</s>", "<blank>", "<unk>"};
#line 1308 "book/text.nw"
static uint32_t token_hash(const char *token)
{
    uint32_t hash = 2166136261u;
    for (const unsigned char *b = (const unsigned char *)token; *b; b++)
        hash = (hash ^ *b) * 16777619u;
    return hash;
}

/* The slot of TOKEN: where it is, or the empty slot where it would go. */
static int vocab_slot(const Vocab *vocab, const char *token)
{
    int s = (int)(token_hash(token) & (uint32_t)(vocab->slots - 1));
    while (vocab->slot[s] && strcmp(vocab->token[vocab->slot[s] - 1], token) != 0)
        s = (s + 1) & (vocab->slots - 1);
    return s;
}

/* Fill the hash table; the index of the first token that repeats an earlier one, or
   -1. */
static int vocab_index(Vocab *vocab)
{
    for (vocab->slots = 16; vocab->slots < 2 * vocab->size; vocab->slots *= 2) {}
    vocab->slot = xmalloc((size_t)vocab->slots * sizeof *vocab->slot);
    memset(vocab->slot, 0, (size_t)vocab->slots * sizeof *vocab->slot);
    for (int i = 0; i < vocab->size; i++) {
        const int s = vocab_slot(vocab, vocab->token[i]);
        if (vocab->slot[s]) return i;
        vocab->slot[s] = i + 1;
    }
    return -1;
}
#line 1355 "book/text.nw"
int vocab_lookup(const Vocab *vocab, const char *token)
{
    const int s = vocab_slot(vocab, token);
    return vocab->slot[s] ? vocab->slot[s] - 1 : VOCAB_UNKNOWN;
}

const char *vocab_token(const Vocab *vocab, int index)
{
    ENSURE(index >= 0 && index < vocab->size, "token index %d of a vocabulary of %d",
           index, vocab->size);
    return vocab->token[index];
}
#line 1385 "book/text.nw"
static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct {
    const char *token;
    long count;
} TokenCount;

static int more_frequent_first(const void *a, const void *b)
{
    const TokenCount *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->token, y->token);
}
#line 1407 "book/text.nw"
void vocab_build(Vocab *vocab, char *const *tokens, long count, int min_frequency)
{
    ENSURE(count >= 0 && min_frequency >= 1, "count %ld, min_frequency %d", count,
           min_frequency);
    memset(vocab, 0, sizeof *vocab);
    char **sorted = xmalloc((size_t)count * sizeof *sorted);
    if (count > 0) memcpy(sorted, tokens, (size_t)count * sizeof *sorted);
    qsort(sorted, (size_t)count, sizeof *sorted, compare_strings);
    TokenCount *kept = xmalloc((size_t)count * sizeof *kept);
    long n_kept = 0;
    size_t bytes = 0;
    /* <<Count the runs of equal tokens and keep the frequent ones>> */
#line 1440 "book/text.nw"
    for (long i = 0, run; i < count; i += run) {
        for (run = 1; i + run < count && strcmp(sorted[i], sorted[i + run]) == 0; run++) {}
        vocab->types++;
        bool special = false;
        for (int k = 0; k < VOCAB_SPECIALS; k++)
            special = special || strcmp(sorted[i], vocab_specials[k]) == 0;
        if (run < min_frequency || special) continue;
        kept[n_kept++] = (TokenCount){sorted[i], run};
        bytes += strlen(sorted[i]) + 1;
    }
#line 1419 "book/text.nw"
    qsort(kept, (size_t)n_kept, sizeof *kept, more_frequent_first);
    ENSURE(n_kept <= INT32_MAX / 4, "a vocabulary of %ld tokens", n_kept);
    vocab->size = (int)n_kept + VOCAB_SPECIALS;
    vocab->token = xmalloc((size_t)vocab->size * sizeof *vocab->token);
    vocab->storage = xmalloc(bytes + 32);   /* 32: the specials */
    char *next = vocab->storage;
    for (int i = 0; i < vocab->size; i++) {
        const char *token = i < VOCAB_SPECIALS ? vocab_specials[i]
                                               : kept[i - VOCAB_SPECIALS].token;
        vocab->token[i] = strcpy(next, token);
        next += strlen(token) + 1;
    }
    ENSURE(vocab_index(vocab) < 0, "a vocabulary with a repeated token");
    free(sorted), free(kept);
}
#line 1478 "book/text.nw"
const char *vocab_save(Vocab *vocab, const char *path)
{
    FILE *out = fopen(path, "w");
    bool written = out != NULL;
    for (int i = 0; written && i < vocab->size; i++)
        written = fputs(vocab->token[i], out) >= 0 && fputc('\n', out) != EOF;
    if (out && fclose(out) != 0) written = false;
    if (written) return NULL;
    snprintf(vocab->error, sizeof vocab->error, "cannot write %s: %s", path,
             strerror(errno));
    return vocab->error;
}
#line 1496 "book/text.nw"
const char *vocab_load(Vocab *vocab, const char *path)
{
    memset(vocab, 0, sizeof *vocab);
    FILE *in = fopen(path, "r");
    if (in == NULL) {
        snprintf(vocab->error, sizeof vocab->error, "cannot open %s: %s", path,
                 strerror(errno));
        return vocab->error;
    }
    const char *problem = vocab_read(vocab, in, path);
    fclose(in);
    return problem;
}

const char *vocab_read(Vocab *vocab, FILE *in, const char *path)
{
    memset(vocab, 0, sizeof *vocab);
    LineReader reader = {0};
    size_t bytes = 0, byte_capacity = 0, token_capacity = 0;
    long length;
    const char *problem = NULL;
    while (problem == NULL && (length = read_line(in, &reader)) >= 0) {
        /* <<Check one line of a vocabulary file>> */
#line 1548 "book/text.nw"
        char complaint[TEXT_ERROR_MAX] = "";
        if (length == 0) strcpy(complaint, "an empty line");
        else if (strpbrk(reader.text, " \t\r")) strcpy(complaint, "a token with a blank in it");
        else if (length > TEXT_MAX_LINE_BYTES) strcpy(complaint, "a token over 1000 bytes");
        else if (utf8_check(reader.text, (size_t)length, complaint, sizeof complaint)) {}
        else if (vocab->size < VOCAB_SPECIALS && strcmp(reader.text, vocab_specials[vocab->size]))
            snprintf(complaint, sizeof complaint, "expected the special token %s",
                     vocab_specials[vocab->size]);
        else if (vocab->size == INT32_MAX / 4) strcpy(complaint, "too many tokens");
        if (complaint[0]) problem = located(vocab->error, path, reader.number, complaint);
#line 1519 "book/text.nw"
        if (problem) break;
        vocab->storage = xgrow(vocab->storage, &byte_capacity, bytes + (size_t)length + 1,
                              1);
        vocab->token = xgrow(vocab->token, &token_capacity, (size_t)vocab->size + 1,
                            sizeof *vocab->token);
        memcpy(vocab->storage + bytes, reader.text, (size_t)length + 1);
        vocab->token[vocab->size++] = (char *)bytes;   /* an offset for now */
        bytes += (size_t)length + 1;
    }
    if (problem == NULL && ferror(in))
        problem = located(vocab->error, path, reader.number + 1, strerror(errno));
    if (problem == NULL && vocab->size < VOCAB_SPECIALS)
        problem = located(vocab->error, path, reader.number + 1,
                          "the four special tokens are missing");
    free(reader.text);
    for (int i = 0; i < vocab->size; i++)
        vocab->token[i] = vocab->storage + (size_t)vocab->token[i];
    int repeated;
    if (problem == NULL && (repeated = vocab_index(vocab)) >= 0)
        problem = located(vocab->error, path, repeated + 1,
                          "a token that is already listed");
    return problem;
}
#line 1563 "book/text.nw"
void vocab_free(Vocab *vocab)
{
    free(vocab->token), free(vocab->storage), free(vocab->slot);
    vocab->token = NULL, vocab->storage = NULL, vocab->slot = NULL;
    vocab->size = vocab->slots = 0;
}
