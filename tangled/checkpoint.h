/* Checkpoints: the weights and the whole training state in one file. Generated from the
   book's chapters by notangle: edit the book, not this file. */
#ifndef CHECKPOINT_H
#define CHECKPOINT_H
#include "safetensors.h"
#include "train.h"

/* <<checkpoint.h declarations>> */
/* Save the parameters, Adam's moments and step, the progress and the recipe (n_recipe
   key/value pairs that a resumed run must repeat) to PATH, atomically. NULL on success,
   else a one-line message (in error). */
const char *checkpoint_save(const char *path, const Model *model, const Adam *adam,
                            const TrainingProgress *progress,
                            const char *const (*recipe)[2], int n_recipe,
                            Error *error);

/* Load the checkpoint at PATH into model (initialized with the run's configuration), adam
   (initialized for it) and progress, checking magic, version, checksum, configuration and
   recipe. NULL on success, else a one-line message. The file is read into FILE: call
   safetensors_free(file) afterwards in either case. */
const char *checkpoint_load(const char *path, Model *model, Adam *adam,
                            TrainingProgress *progress, const char *const (*recipe)[2],
                            int n_recipe, Safetensors *file);
#endif
