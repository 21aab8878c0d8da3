/* tests.h -- the Check suites of `make check`; one function per test file. */
#ifndef TESTS_H
#define TESTS_H
#include <check.h>

Suite *tensor_suite(void);
Suite *masks_suite(void);
Suite *figure_suite(void);
Suite *cli_suite(void);
Suite *model_suite(void);
Suite *gradients_suite(void);
Suite *training_suite(void);
Suite *checkpoint_suite(void);
Suite *decode_suite(void);
Suite *text_suite(void);
Suite *beam_suite(void);
Suite *bleu_suite(void);
Suite *translate_suite(void);
Suite *fast_suite(void);
Suite *bf16_suite(void);
Suite *trainer_suite(void);
Suite *distributed_suite(void);
Suite *harden_suite(void);
Suite *architecture_suite(void);
Suite *experiments_suite(void);
Suite *recase_suite(void);

/* The data of the figure kind NAME drawn with ARGUMENTS ("--size 3": flags and values as on
   the command line, one word each; "" for the defaults), as the text that
   `transformer figure-data NAME ARGUMENTS` prints; free() it. */
char *figure_text(const char *name, const char *arguments);

/* A run of the transformer binary named by $TRANSFORMER (default ./transformer). */
typedef struct {
    int status;          /* exit status, or -1 when killed by a signal */
    char out[65536];
    char err[4096];
} Run;
const char *transformer_binary(void);
/* The text of the file at PATH, at most size - 1 bytes, NUL-terminated. */
void read_text(const char *path, char *buffer, size_t size);
/* Run "ENVIRONMENT $TRANSFORMER ARGUMENTS" through the shell, capturing both streams.
   The result lives until the next call. */
Run *run(const char *environment, const char *arguments);

/* A corpus in DIR of the first LINES pairs of Multi30k's training set, as both its training
   and its validation files (train.de, train.en, val.de, val.en). */
void tiny_corpus(const char *dir, int lines);

/* One step of trainer (set up for the copy task with a vocabulary of vocab) on a fresh
   batch drawn from its data stream into full [batch][len]; with padding, the first sequence
   ends in two padding symbols. The step's loss. Allocates nothing. */
#include "trainer.h"
double copy_task_step(Trainer *trainer, int *full, int vocab, bool padding);

/* The model configuration recorded in a golden fixture's metadata (tests/golden/). */
#include "safetensors.h"
#include "model.h"
int fixture_metadata_int(const Safetensors *file, const char *key, int fallback);

/* A batch over arrays the test holds (read only, tgt_y absent): for the forward and backward
   passes on a fixture's or a hand-made sources and decoder inputs. */
static inline Batch test_batch(const int *src, const int *tgt, const uint8_t *src_keep,
                               const uint8_t *tgt_keep, int batch, int src_len, int tgt_len)
{
    return (Batch){batch, src_len, tgt_len, (int *)src, (int *)tgt, NULL, (uint8_t *)src_keep,
                   (uint8_t *)tgt_keep};
}

/* model_forward on such a batch; dropout: NULL in evaluation. */
static inline const float *test_forward(Model *model, const int *src, const int *tgt,
                                        const uint8_t *src_keep, const uint8_t *tgt_keep,
                                        int batch, int src_len, int tgt_len,
                                        const Dropout *dropout)
{
    const Batch b = test_batch(src, tgt, src_keep, tgt_keep, batch, src_len, tgt_len);
    return model_forward(model, &b, dropout);
}
Config fixture_config(const Safetensors *file);
/* Rewrite the translation model file at PATH with metadata KEY set to VALUE (NULL:
   removed) and a checksum that matches (tests/test_harden.c). 0 on success. */
int model_file_rewrite(const char *path, const char *key, const char *value);

/* A golden model (tests/golden/model-VARIANT.safetensors) and its batch of sources: three
   of lengths 7, 5 and 3, padded. Used by test_decode.c and test_beam.c. */
typedef struct {
    Model model;
    Safetensors file;
    const int *src, *tgt;           /* [batch][src_len], [batch][tgt_len] */
    uint8_t *src_keep;              /* [batch][src_len] */
    int batch, src_len, tgt_len, pad, vocab;
} GoldenFixture;
enum { GOLDEN_VARIANTS = 5 };
extern const char *const golden_variants[GOLDEN_VARIANTS];
/* Open VARIANT's model and batch, the model prepared to decode max_len positions. */
void golden_fixture_open(GoldenFixture *f, const char *variant, int max_len);
void golden_fixture_close(GoldenFixture *f);

#endif
