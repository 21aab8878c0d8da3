#line 28 "book/text.nw"
/* Text to tokens, and tokens to integers. Generated from the book's chapters by notangle:
   edit the book, not this file. */
#ifndef TEXT_H
#define TEXT_H
#include <stdio.h>
#include "tensor.h"
/* <<text.h declarations>> */
#line 131 "book/text.nw"
enum {
    TEXT_MAX_LINE_BYTES = 1000,                          /* a raw line, without newline */
    TEXT_MAX_TOKENIZED_BYTES = 2 * TEXT_MAX_LINE_BYTES,  /* its tokens and their spaces */
    TEXT_ERROR_MAX = 512
};
typedef enum { TEXT_ENGLISH, TEXT_GERMAN } TextLanguage;
typedef struct {
    TextLanguage language;
    bool lowercase;
} TextOptions;

/* The result of tokenizing or detokenizing one line. */
typedef struct {
    char text[TEXT_MAX_TOKENIZED_BYTES + 1];   /* tokens separated by single spaces */
    int count;                                 /* how many tokens */
    char error[TEXT_ERROR_MAX];                /* why the line was refused */
} TextLine;
#line 625 "book/text.nw"
/* Tokenize line[0..length), one line of text without its newline, into result->text.
   NULL on success, else a one-line message in result->error, which the caller prefixes
   with the file and line number. */
const char *tokenize_line(TextOptions options, const char *line, size_t length,
                          TextLine *result);
#line 709 "book/text.nw"
typedef struct {
    long lines, count;  /* lines read and tokens in them */
    char **token;       /* token[0 .. count): NUL-terminated */
    long *line_start;   /* line l has token[line_start[l] .. line_start[l + 1]) */
    char *storage;      /* the tokens' text */
    char error[TEXT_ERROR_MAX];
} TokenizedFile;

/* Tokenize every line of the file at PATH. NULL on success, else "PATH:LINE: message" in
   file->error; call tokenized_file_free(file) in either case. */
const char *tokenize_file(const char *path, TextOptions options, TokenizedFile *file);
void tokenized_file_free(TokenizedFile *file);
#line 792 "book/text.nw"
typedef struct {
    long lines, identical;
    char error[TEXT_ERROR_MAX];
} Agreement;

/* Tokenize each line of RAW and compare its tokens with the same line of REFERENCE, the
   output of the Moses tokenizer (its XML escapes undone, its spacing ignored). The lines
   that differ are printed to DIFFERENCES unless it is NULL. NULL, or "NAME:LINE: ...". */
const char *tokenization_agreement(FILE *raw, const char *raw_name, FILE *reference,
                                   const char *reference_name, TextOptions options,
                                   FILE *differences, Agreement *result);
#line 926 "book/text.nw"
/* Join the tokens of line[0..length) back into text ("a dog ." -> "a dog."). NULL on
   success, else a one-line message in result->error. */
const char *detokenize_line(TextLanguage language, const char *line, size_t length,
                            TextLine *result);
#line 1064 "book/text.nw"
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
    char error[TEXT_ERROR_MAX];
} Vocab;
#line 1126 "book/text.nw"
/* The index of TOKEN, or VOCAB_UNKNOWN. */
int vocab_lookup(const Vocab *vocab, const char *token);
/* The token of INDEX, 0 <= index < size. */
const char *vocab_token(const Vocab *vocab, int index);
#line 1154 "book/text.nw"
/* The vocabulary of TOKENS[0 .. count): the specials, then every token that occurs at
   least min_frequency times, the most frequent first, ties in byte order. */
void vocab_build(Vocab *vocab, char *const *tokens, long count, int min_frequency);
#line 1232 "book/text.nw"
/* Write the tokens to PATH, one a line, in index order. NULL, or a message in
   vocab->error. */
const char *vocab_save(Vocab *vocab, const char *path);
/* Read a vocabulary that vocab_save wrote. NULL, or "PATH:LINE: message" in vocab->error;
   call vocab_free in either case. */
const char *vocab_load(Vocab *vocab, const char *path);
void vocab_free(Vocab *vocab);
#line 35 "book/text.nw"
#endif
