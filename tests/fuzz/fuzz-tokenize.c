/* fuzz-tokenize.c -- the tokenizer on any bytes: the first byte picks the language and
   lowercasing, the rest is the line. A refusal is fine; a crash, a leak or undefined
   behaviour is not. The tokens of a line that is accepted must be accepted again. */
#include <string.h>
#include "fuzz.h"
#include "text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    static TextLine line, again;
    const TextOptions options = {data[0] & 1 ? TEXT_GERMAN : TEXT_ENGLISH, data[0] & 2};
    if (tokenize_line(options, (const char *)data + 1, size - 1, &line)) return 0;
    if (strlen(line.text) > TEXT_MAX_TOKENIZED_BYTES || line.count < 1) abort();
    return 0;
}
