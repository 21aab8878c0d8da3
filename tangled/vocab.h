/* A vocabulary: tokens to indices and back, built from tokenized text, saved and loaded as a
   text file. Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef VOCAB_H
#define VOCAB_H
#include "recase.h"
#include "text.h"

/* <<vocab.h declarations>> */
/* The indices of the special tokens, and their number. */
enum { VOCAB_START = 0, VOCAB_END = 1, VOCAB_BLANK = 2, VOCAB_UNKNOWN = 3,
       VOCAB_SPECIALS };
extern const char *const vocab_specials[VOCAB_SPECIALS];

typedef struct {
    int size;
    char **token;     /* token[0 .. size) */
    char *storage;    /* their text */
    int *slot;        /* hash table: an index + 1, or 0 for an empty slot */
    int slots;        /* a power of two, at least twice size */
    long types;       /* distinct tokens seen by vocab_build (0 after vocab_load) */
    bool subwords;    /* subword tokens: one ending in @@ goes on in the next one */
    /* <<Fields of a vocabulary>> */
    Recaser cases;    /* how the words are written (a translator's English), or empty */
    Error error;
} Vocab;

/* The index of TOKEN, or VOCAB_UNKNOWN. */
int vocab_lookup(const Vocab *vocab, const char *token);
/* The token of INDEX, 0 <= index < size. */
const char *vocab_token(const Vocab *vocab, int index);

/* The vocabulary of TOKENS[0 .. count): the specials, then every token that occurs at
   least min_frequency times, the most frequent first, ties in byte order. */
void vocab_build(Vocab *vocab, char *const *tokens, long count, int min_frequency);

/* Write the tokens to PATH, one a line, in index order. NULL, or a message in
   vocab->error. */
const char *vocab_save(Vocab *vocab, const char *path);
/* Read a vocabulary that vocab_save wrote. NULL, or "PATH:LINE: message" in vocab->error;
   call vocab_free in either case. */
const char *vocab_load(Vocab *vocab, const char *path);
/* The same from an open stream, its complaints named NAME (a model file's vocabularies). */
const char *vocab_read(Vocab *vocab, FILE *in, const char *name);
void vocab_free(Vocab *vocab);

/* Whether TOKEN is a piece that does not end its word: it ends in @@. */
bool vocab_continues_word(const char *token);

/* The token numbers of WORD, at most max_ids of them, into ids: its number in a vocabulary
   of words; with subwords, the longest token that starts it, then the same on the rest.
   Returns how many numbers were written. */
int vocab_encode(const Vocab *vocab, const char *word, int *ids, int max_ids);

/* Join the pieces in the tokens text[0 .. length): delete each "@@ ", and a final "@@".
   Returns the new length. */
size_t vocab_join_subwords(char *text, size_t length);

/* A vocabulary of subwords learned by byte-pair encoding from TOKENS[0 .. count): the
   specials, then the pieces the greedy cut (vocab_encode) makes of the tokens, the most
   frequent first, from merges made until there are SIZE symbols (or fewer: no pair occurs
   twice; or more: the characters alone, in both forms, are more). */
void vocab_learn_subwords(Vocab *vocab, char *const *tokens, long count, int size);

/* COPY becomes a vocabulary of its own with the tokens of VOCAB, in the same order. */
void vocab_copy(Vocab *copy, const Vocab *vocab);

/* ids = <s>, the numbers of the space-separated tokens of text, </s>: at most max_tokens
   (>= 2) numbers in all, the tokens cut to fit. Returns the count; text is cut up. */
int vocab_number_sentence(int *ids, char *text, const Vocab *vocab, int max_tokens);
#endif
