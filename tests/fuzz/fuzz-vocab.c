/* fuzz-vocab.c -- a vocabulary file of any bytes, read as vocab_load reads a file; when it
   is accepted, every token must be found at its own index. */
#include <string.h>
#include "fuzz.h"
#include "vocab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    FILE *in = fmemopen((void *)data, size, "r");
    if (in == NULL) abort();
    Vocab vocab;
    if (vocab_read(&vocab, in, "fuzz") == NULL)
        for (int i = 0; i < vocab.size; i++)
            if (vocab_lookup(&vocab, vocab.token[i]) != i) abort();
    fclose(in);
    vocab_free(&vocab);
    return 0;
}
