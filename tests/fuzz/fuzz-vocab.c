/* fuzz-vocab.c -- a vocabulary file of any bytes, read as vocab_load reads a file; when it
   is accepted, every token must be found at its own index and cut (vocab_encode) into
   itself alone; and subwords learned from its tokens must cut each of them into pieces that
   are all known and join back into the token (for tokens without '@', which the tokenizer
   always splits off, so that no word of a text ends in the mark @@). */
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "vocab.h"

static void check_subwords(const Vocab *words)
{
    Vocab subwords;
    vocab_learn_subwords(&subwords, words->token + VOCAB_SPECIALS,
                         words->size - VOCAB_SPECIALS, VOCAB_SPECIALS + 64);
    for (int i = VOCAB_SPECIALS; i < words->size; i++) {
        const char *token = words->token[i];
        if (strchr(token, '@')) continue;
        int ids[TEXT_MAX_LINE_BYTES];
        const int n = vocab_encode(&subwords, token, ids, TEXT_MAX_LINE_BYTES);
        char joined[2 * TEXT_MAX_LINE_BYTES + 8];
        size_t used = 0;
        for (int k = 0; k < n; k++) {
            if (ids[k] < VOCAB_SPECIALS) abort();   /* an unknown piece, or a special */
            const char *piece = vocab_token(&subwords, ids[k]);
            if (used + strlen(piece) + 2 > sizeof joined) abort();
            if (k) joined[used++] = ' ';
            memcpy(joined + used, piece, strlen(piece) + 1);
            used += strlen(piece);
        }
        vocab_join_subwords(joined, used);
        if (strcmp(joined, token) != 0) abort();
    }
    vocab_free(&subwords);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    FILE *in = fmemopen((void *)data, size, "r");
    if (in == NULL) abort();
    Vocab vocab;
    if (vocab_read(&vocab, in, "fuzz") == NULL) {
        for (int i = 0; i < vocab.size; i++) {
            int id = -1;
            if (vocab_lookup(&vocab, vocab.token[i]) != i) abort();
            if (i >= VOCAB_SPECIALS   /* with subwords, a special is never a piece */
                && (vocab_encode(&vocab, vocab.token[i], &id, 1) != 1 || id != i))
                abort();
        }
        check_subwords(&vocab);
    }
    fclose(in);
    vocab_free(&vocab);
    return 0;
}
