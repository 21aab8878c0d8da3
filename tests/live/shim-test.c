/* A program for the WASI shim's test (tools/live/wasi.js): it uses every call the shim
   answers and prints what it got, so tests/live/shim-test.sh can compare with the truth. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) printf("argument %d: %s\n", i, argv[i]);
    fprintf(stderr, "to standard error: \xc3\xa4\n");
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("monotonic: %s\n", b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec) ? "yes" : "no");
    printf("realtime after 2020: %s\n", time(NULL) > 1577836800 ? "yes" : "no");
    unsigned char random[16] = {0};
    getentropy(random, sizeof random);
    int nonzero = 0;
    for (int i = 0; i < 16; i++) nonzero += random[i] != 0;
    printf("random bytes: %s\n", nonzero > 8 ? "yes" : "no");
    FILE *f = fopen("/data/hello.txt", "r");
    char line[64] = "";
    if (f && fgets(line, sizeof line, f)) printf("file: %s", line);
    else printf("file: missing\n");
    if (f) fclose(f);
    printf("missing file: %s\n", fopen("/nothing", "r") ? "opened" : "refused");
    printf("writing: %s\n", fopen("/data/hello.txt", "w") ? "allowed" : "refused");
    FILE *out = fopen("/log.csv", "w");   /* a new file: kept in memory, read back */
    if (out) fputs("a,b\n1,2\n", out), fclose(out);
    FILE *back = fopen("/log.csv", "r");
    char row[64] = "", row2[64] = "";
    if (back && fgets(row, sizeof row, back) && fgets(row2, sizeof row2, back))
        printf("new file: %s%s", row, row2);
    else printf("new file: refused\n");
    return 3;
}
