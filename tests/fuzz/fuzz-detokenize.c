/* fuzz-detokenize.c -- the detokenizer on any bytes (the first byte picks the language). */
#include <string.h>
#include "fuzz.h"
#include "text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    static TextLine line;
    const TextLanguage language = data[0] & 1 ? TEXT_GERMAN : TEXT_ENGLISH;
    if (detokenize_line(language, (const char *)data + 1, size - 1, &line)) return 0;
    if (strlen(line.text) > TEXT_MAX_TOKENIZED_BYTES) abort();
    return 0;
}
