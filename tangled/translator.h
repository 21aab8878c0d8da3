/* The translator: a saved model that turns German lines into English lines, decoded in
   batches sorted by length. Generated from the book's chapters by notangle: edit the book,
   not this file. */
#ifndef TRANSLATOR_H
#define TRANSLATOR_H
#include "beam.h"
#include "text.h"
#include "vocab.h"

typedef struct {
    int beam_size;     /* candidates per source; 1: greedy decoding */
    int batch_limit;   /* lines decoded together */
    double alpha;      /* the exponent of the beam's length penalty */
    bool lowercase;    /* write the model's lowercase English, without its capitals */
} TranslatorSettings;

typedef struct Translator Translator;   /* its state is translator.c's */

/* Load the translator saved at path (weights and both vocabularies) and set up decoding
   with settings: the translator, or NULL with a one-line message in error (nothing is left
   to close). The weights are rounded to bfloat16 if compute.precision asks for it. */
Translator *translator_open(const char *path, const TranslatorSettings *settings,
                            Error *error);
/* Translate count German lines, lines[i] of sizes[i] bytes without their newline: out[i]
   is line i's English translation ("" for a blank line or an empty translation), valid
   until the next call. Returns count, or the number of the first line that could not be
   read or whose translation could not be written: the lines before it are translated,
   translator_error says why and translator_output_failed which of the two. */
int translator_translate(Translator *translator, const char *const *lines,
                         const size_t *sizes, int count, const char **out);
const char *translator_error(const Translator *translator);
bool translator_output_failed(const Translator *translator);
/* The lines translator_translate reads and sorts at once: a caller that gives it that many
   at a time keeps its batches full. */
int translator_window(const Translator *translator);
void translator_close(Translator *translator);

/* <<translator.h declarations for a training run>> */
enum { TRANSLATOR_BATCH = 32 };   /* lines decoded together, unless a command says */

/* A translator for a training run: a model of MODEL's configuration, whose weights
   translator_take_weights copies in, and the run's vocabularies, borrowed (they must
   outlive the translator). */
Translator *translator_open_run(const Model *model, const Vocab *src_vocab,
                                const Vocab *tgt_vocab, const TranslatorSettings *settings);
/* Copy in the weights of MODEL, of the configuration the translator was opened with. */
void translator_take_weights(Translator *translator, const Model *model);

/* <<translator.h declarations for inspecting a translation>> */
/* Translate line (size bytes) and make it and its translation a batch of one pair, *pair
   (batch_free frees it): the line's numbered tokens as source, the translation's as
   decoder input and target. NULL, or why not (a blank line, or one that cannot be read);
   the translator should be greedy (a beam size of 1), as the map is of that output. */
const char *translator_pair(Translator *translator, const char *line, size_t size,
                            Batch *pair);
/* The translator's model, which a caller may run (overwriting its activations) but must
   not change, and its vocabulary of the source (target false) or of the target. */
Model *translator_model(Translator *translator);
const Vocab *translator_vocab(const Translator *translator, bool target);
#endif
