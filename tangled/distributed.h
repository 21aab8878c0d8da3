/* Data-parallel training with MPI: joining the processes mpirun started. Generated from the
   book's chapters by notangle: edit the book, not this file. */
#ifndef DISTRIBUTED_H
#define DISTRIBUTED_H
#include "trainer.h"

/* <<distributed.h declarations>> */
/* Under mpirun with several processes: start MPI, check that every process holds the same
   state and can have a share of batches of smallest_batch sequences, and make run
   data-parallel, silent on ranks other than 0. Returns the rank (0 for one process).
   Exits with "transformer COMMAND: message" when something is wrong. */
int distributed_join(const char *command, RunSettings *run, int smallest_batch,
                     const Model *model, const Adam *adam, const TrainingProgress *progress);
/* After training: check that the processes still agree, report on rank 0 where the time
   went, and end MPI. Nothing for one process. */
void distributed_leave(const char *command, const Model *model, const Adam *adam,
                       const TrainingProgress *progress);
#endif
