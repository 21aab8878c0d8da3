/* bandwidth.c -- how fast this machine reads memory: the ceiling of greedy decoding one
   sentence at a time (Making it fast, Exercise "bandwidth"). Sums a 1 GiB array of floats,
   as decoding streams the weights, on T threads; prints GB/s (10^9 bytes per second).
       cc -O3 -march=native -ffast-math -fopenmp bench/bandwidth.c -o /tmp/bandwidth
       /tmp/bandwidth [T]
   (-ffast-math lets the compiler add in any order, with vector registers: the sum is
   then limited by memory, not by the latency of one addition after another.) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const size_t n = (size_t)1 << 28;   /* 2^28 floats = 1 GiB */
    const int threads = argc > 1 ? atoi(argv[1]) : omp_get_max_threads();
    float *x = malloc(n * sizeof *x);
    if (x == NULL || threads < 1) return 1;
    #pragma omp parallel for num_threads(threads)
    for (size_t i = 0; i < n; i++) x[i] = (float)(i & 7);
    double best = 0.0, sum = 0.0;
    for (int round = 0; round < 5; round++) {
        const double start = omp_get_wtime();
        double total = 0.0;
        #pragma omp parallel for simd num_threads(threads) reduction(+ : total)
        for (size_t i = 0; i < n; i++) total += x[i];
        const double rate = n * sizeof *x / (omp_get_wtime() - start) * 1e-9;
        best = rate > best ? rate : best;
        sum += total;
    }
    printf("threads %d: %.1f GB/s (best of 5; checksum %.0f)\n", threads, best, sum);
    free(x);
    return 0;
}
