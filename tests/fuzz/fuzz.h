/* fuzz.h -- what the libFuzzer harnesses of tests/fuzz/ share (see tests/fuzz/README.md). */
#ifndef FUZZ_H
#define FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The bytes written to this process's own scratch file; its path. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static char path[256];
    if (path[0] == '\0') {
        const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(path, sizeof path, "%s/fuzz-input-%ld", dir, (long)getpid());
    }
    FILE *out = fopen(path, "wb");
    if (out == NULL) abort();
    if (size && fwrite(data, 1, size, out) != size) abort();
    if (fclose(out) != 0) abort();
    return path;
}
#endif
