/* Capital letters: how each English word is written, learned from the cased training text
   and applied to the translator's lowercase tokens. Generated from the book's chapters by
   notangle: edit the book, not this file. */
#ifndef RECASE_H
#define RECASE_H
#include "text.h"

/* <<recase.h declarations>> */
typedef struct {
    int count;
    char **word;     /* [count]: lowercase words, sorted by their bytes */
    char **form;     /* [count]: how each is written, as long as its word */
    char *storage;   /* their text */
} Recaser;

/* Learn r from the tokens of FILE (tokenized without lowercasing), its first lines lines:
   each word's most frequent form outside the first token of a line. */
void recaser_learn(Recaser *r, const TokenizedFile *file, long lines);
void recaser_free(Recaser *r);

/* The table as text: "word form\n" for each word, in order. Free it. */
char *recaser_text(const Recaser *r);
/* Read what recaser_text wrote into r. NULL, or a one-line message in error; r is empty
   then. */
const char *recaser_read(Recaser *r, const char *text, Error *error);

/* Write the lowercase tokens of line (single spaces between them) as English is written, in
   place: each word in its form, the first letter of the sentence raised. */
void recase_line(const Recaser *r, char *line);
#endif
