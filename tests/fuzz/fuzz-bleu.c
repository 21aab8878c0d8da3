/* fuzz-bleu.c -- a file of any bytes read as bleu reads its hypotheses; when accepted, each
   line is scored against itself, cased and lowercased: BLEU's tokenizer and lowercasing
   see every line. A line against itself must score 100 whenever it has four tokens. */
#include "bleu.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    BleuLines lines;
    Error error;
    if (bleu_read_lines(&lines, fuzz_file(data, size), &error)) return 0;
    for (int lowercase = 0; lowercase < 2; lowercase++) {
        BleuStats stats = {0};
        for (long i = 0; i < lines.count && i < 64; i++) {
            const char *const references[1] = {lines.lines[i]};
            bleu_add_segment(&stats, lines.lines[i], references, 1, lowercase);
        }
        const BleuScore score = bleu_compute(&stats, false);
        if (score.score > 100.0 + 1e-9 || score.score < 0) abort();
    }
    bleu_lines_free(&lines);
    return 0;
}
