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

typedef struct {
    Model model;
    Vocab src_vocab, tgt_vocab;
    int beam_size, batch_limit, max_len;
    bool recase;                      /* give the output its capital letters */
    int window;                       /* lines read, then sorted by length: 4 batches */
    DecodeSettings settings;
    KVCache cache;
    Beam beam;
    int *numbered, *lengths_in;       /* [window][max_len], [window]: the numbered lines */
    int *order, *starts;              /* [window]: the window by length; [max_len + 2] */
    int *src;                         /* [batch_limit][max_len]: a batch's sources, padded */
    uint8_t *src_keep;                /* [batch_limit][max_len]: their padding mask */
    int *batch_out, *batch_lengths;   /* [batch_limit][max_len], [batch_limit] */
    int *out, *lengths;               /* [window][max_len], [window]: outputs by line */
    TextLine *tokens, *text;          /* one line tokenized; one translation detokenized */
    char *storage;                    /* the last call's translations, one after another */
    size_t storage_capacity, *offset, offset_capacity;
    bool failed_output;               /* the error is of a line's translation, not the line */
    bool borrows_vocabs;              /* the vocabularies are a training run's: not freed */
    char error[TEXT_ERROR_MAX + 4096];   /* why the last call or translator_open failed */
} Translator;

/* Load the translator saved at path (weights and both vocabularies) and set up decoding
   with settings. NULL, or a one-line message (translator->error; nothing is left to
   close). The weights are rounded to bfloat16 if compute.precision asks for it. */
const char *translator_open(Translator *translator, const char *path,
                            const TranslatorSettings *settings);
/* Translate count German lines, lines[i] of sizes[i] bytes without their newline: out[i]
   is line i's English translation ("" for a blank line or an empty translation), valid
   until the next call. Returns count, or the number of the first line that could not be
   read or whose translation could not be written: the lines before it are translated,
   translator->error says why and translator->failed_output which of the two. */
int translator_translate(Translator *translator, const char *const *lines,
                         const size_t *sizes, int count, const char **out);
void translator_close(Translator *translator);

/* <<translator.h declarations for a training run>> */
enum { TRANSLATOR_BATCH = 32 };   /* lines decoded together, unless a command says */

/* Set up a translator for a training run: a model of MODEL's configuration, whose weights
   translator_take_weights copies in, and the run's vocabularies, borrowed (they must
   outlive the translator). */
void translator_open_run(Translator *translator, const Model *model, const Vocab *src_vocab,
                         const Vocab *tgt_vocab, const TranslatorSettings *settings);
/* Copy in the weights of MODEL, of the configuration the translator was opened with. */
void translator_take_weights(Translator *translator, const Model *model);
#endif
