/* figure.h -- the data behind the book's figures.
   Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef FIGURE_H
#define FIGURE_H
#include <stdbool.h>
#include <stdio.h>
#include "model.h"

enum { FIGURE_MAX_OPTIONS = 6, FIGURE_MAX_NUMBERS = 24 };
typedef enum {
    FIGURE_INTEGER,    /* one integer in [low, high] */
    FIGURE_REAL,       /* one number in [low, high] */
    FIGURE_INTEGERS,   /* integers in [low, high] separated by commas: 9,5,5 */
    FIGURE_RECORD      /* key=number,...; repeatable, each time one more record */
} FigureOptionKind;

typedef struct {
    const char *flag;        /* "--size"; NULL ends the list */
    FigureOptionKind kind;
    double low, high;        /* accepted range of each number */
    const char *fallback;    /* the default, as typed: "20", "9,5,5", "d=512,f=1 d=256,f=1" */
    const char *help;
    const char *keys;        /* FIGURE_RECORD: the keys, one letter each, in order: "dfw" */
} FigureOption;

typedef struct {
    int count;                          /* numbers read */
    double number[FIGURE_MAX_NUMBERS];
} FigureValue;

typedef struct {
    const char *name;        /* "mask subsequent" */
    const char *summary;
    FigureOption options[FIGURE_MAX_OPTIONS];
    /* Print the data; option[i] is the value of options[i]. Returns NULL, or a usage
       error in options that the ranges alone cannot express (nothing printed then). */
    const char *(*emit)(FILE *out, const FigureValue *option);
} FigureKind;

extern const FigureKind figure_kinds[];
extern const int figure_kind_count;

/* <<figure.h declarations>> */
void figure_mask_subsequent(FILE *out, int size);
/* Sentence (1 to batch) of a batch of example sentences of the given lengths (2 to 32). */
void figure_mask_batch(FILE *out, const int *lengths, int batch, int sentence);

/* Read TEXT (NULL: missing) as a value of OPTION into VALUE (replace: start it afresh).
   Returns false with a message in problem if the text is not a value of the option. */
bool figure_option_read(const FigureOption *option, const char *text, bool replace,
                        FigureValue *value, Error *problem);

/* Set every option of kind to its default. Returns false with a message if one is bad. */
bool figure_defaults(const FigureKind *kind, FigureValue *value, Error *problem);

/* Print the data of kind for the given option values, after the comment lines that name
   the command and its settings. Returns NULL or the emit function's usage error. */
const char *figure_emit(FILE *out, const FigureKind *kind, const FigureValue *value);

/* Print a terminal summary of one figure's data, drawn with the given option values. */
void figure_summary(FILE *out, const FigureKind *kind, const FigureValue *option);

void figure_positional_encoding(FILE *out, int positions, int d_model, int first, int count);

/* The number of parameters of a model of configuration c, without building it. */
size_t parameter_count_of(const Config *c);

/* The configuration of the translator that ships with the book, for the projection. */
Config scaling_translator(void);
#endif
