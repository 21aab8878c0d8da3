/* Data-parallel training with MPI. Generated from the book's chapters by notangle: edit the
   book, not this file. */
#include "distributed.h"
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef TRANSFORMER_MPI
#include <mpi.h>
#endif

/* <<distributed.c definitions>> */
/* The number of processes that the launcher started, 1 without one. */
static int launched_processes(void)
{
    const char *names[2] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
    for (int i = 0; i < 2; i++) {
        const char *value = getenv(names[i]);
        if (value && atoi(value) > 1) return atoi(value);
    }
    return 1;
}

_Noreturn __attribute__((format(printf, 2, 3)))
static void fail(const char *command, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    fflush(stdout);
    fprintf(stderr, "transformer %s: ", command);
    vfprintf(stderr, format, arguments);
    fputc('\n', stderr);
    va_end(arguments);
    exit(EXIT_FAILURE);
}

#ifdef TRANSFORMER_MPI
static void mpi_sum(void *context, float *floats, size_t n, double *doubles, int m)
{
    (void)context;
    for (size_t done = 0; done < n;) {
        const int part = n - done > INT_MAX ? INT_MAX : (int)(n - done);
        MPI_Allreduce(MPI_IN_PLACE, floats + done, part, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        done += (size_t)part;
    }
    if (m > 0) MPI_Allreduce(MPI_IN_PLACE, doubles, m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
#endif

#ifdef TRANSFORMER_MPI
static uint64_t hash_bytes(uint64_t hash, const void *bytes, size_t n)
{
    const unsigned char *b = bytes;
    for (size_t i = 0; i < n; i++) hash = (hash ^ b[i]) * 0x100000001b3u;
    return hash;
}

static uint64_t hash_state(const Model *model, const Adam *adam,
                           const TrainingProgress *progress)
{
    uint64_t hash = 0xcbf29ce484222325u;
    const FlatBuffer *buffers[3] = {&model->parameters, &adam->m, &adam->v};
    for (int i = 0; i < 3; i++)
        hash = hash_bytes(hash, buffers[i]->data, buffers[i]->total * sizeof(float));
    hash = hash_bytes(hash, &adam->step, sizeof adam->step);
    const Rng streams[2] = {progress->data_rng, progress->dropout_rng};
    return hash_bytes(hash, streams, sizeof streams);
}
#endif

#ifdef TRANSFORMER_MPI
static void check_same_state(const char *command, const char *when, const Model *model,
                             const Adam *adam, const TrainingProgress *progress, int size)
{
    uint64_t mine = hash_state(model, adam, progress);
    uint64_t *all = xmalloc((size_t)size * sizeof *all);
    MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    for (int r = 1; r < size; r++)
        if (all[r] != all[0])
            fail(command, "%s, rank %d's model differs from rank 0's (state hash %016" PRIx64
                 " against %016" PRIx64 ")", when, r, all[r], all[0]);
    free(all);
}
#endif

static DataParallel team;

int distributed_join(const char *command, RunSettings *run, int smallest_batch,
                     const Model *model, const Adam *adam, const TrainingProgress *progress)
{
    const int launched = launched_processes();
    if (launched == 1) return 0;
#ifndef TRANSFORMER_MPI
    fail(command, "started as one of %d processes, but this program was built without MPI "
         "(install libopenmpi-dev and rebuild)", launched);
#else
    MPI_Init(NULL, NULL);
    team = (DataParallel){0, 1, NULL, mpi_sum, 0, 0.0, 0.0};
    MPI_Comm_rank(MPI_COMM_WORLD, &team.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &team.size);
    if (smallest_batch < team.size)
        fail(command, "a batch of %d sequences cannot be shared by %d processes",
             smallest_batch, team.size);
    check_same_state(command, "at the start", model, adam, progress, team.size);
    run->parallel = &team;
    if (team.rank == 0) {
        printf("data parallel: %d processes (MPI), each training on its share of every "
               "batch\n", team.size);
    } else {
        run->log_path = NULL, run->checkpoint_path = NULL;
        if (freopen("/dev/null", "w", stdout) == NULL)
            fail(command, "rank %d: cannot silence standard output", team.rank);
    }
    return team.rank;
#endif
}

void distributed_leave(const char *command, const Model *model, const Adam *adam,
                       const TrainingProgress *progress)
{
    if (team.size <= 1) return;
#ifdef TRANSFORMER_MPI
    check_same_state(command, "after training", model, adam, progress, team.size);
    if (team.rank == 0 && team.steps > 0)
        printf("data parallel: %d processes, %ld steps: %.1f ms of computation and %.1f ms of "
               "communication a step\n", team.size, team.steps,
               1e3 * team.compute_seconds / team.steps,
               1e3 * team.communication_seconds / team.steps);
    fflush(stdout);
    MPI_Finalize();
#endif
}
