/* The translation model's file: weights, configuration and both vocabularies as one
   safetensors file. Generated from the book's chapters by notangle: edit the book, not
   this file. */
#ifndef MODELFILE_H
#define MODELFILE_H
#include "model.h"
#include "safetensors.h"
#include "vocab.h"

/* <<modelfile.h declarations>> */
/* Save the weights (as bfloat16 if bf16_weights, else as floats), configuration and
   vocabularies to PATH as one file, atomically. NULL on success, else a one-line message
   (in error). */
const char *translation_model_save(const char *path, const Model *model, Vocab *src_vocab,
                                   Vocab *tgt_vocab, bool bf16_weights, Error *error);
/* Load what translation_model_save wrote (version 3, or 2): model_init's the model. NULL,
   or a message (in file->error), with the model, the vocabularies and the file freed. */
const char *translation_model_load(const char *path, Model *model, Vocab *src_vocab,
                                   Vocab *tgt_vocab, Safetensors *file);
#endif
