#line 518 "book/program.nw"
/* figure.h -- the data behind the book's figures.
   Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef FIGURE_H
#define FIGURE_H
#include <stdio.h>
#include "model.h"

enum { FIGURE_MAX_OPTIONS = 6 };
typedef struct {
    const char *flag;        /* "--size"; NULL ends the list */
    int low, high, fallback; /* accepted range and default */
    const char *help;
} FigureOption;

typedef struct {
    const char *name;        /* "mask subsequent" */
    const char *summary;
    FigureOption options[FIGURE_MAX_OPTIONS];
    /* Print the data; option[i] is the value of options[i]. Returns NULL, or a usage
       error in options that the ranges alone cannot express (nothing printed then). */
    const char *(*emit)(FILE *out, const int *option);
} FigureKind;

extern const FigureKind figure_kinds[];
extern const int figure_kind_count;
/* <<figure.h declarations>> */
#line 370 "book/masks.nw"
void figure_mask_subsequent(FILE *out, int size);
void figure_mask_batch(FILE *out, int sentence);   /* sentence: 1 to 3 */
#line 787 "book/program.nw"
/* Print a terminal summary of one figure's data, drawn with the given option values. */
void figure_summary(FILE *out, const FigureKind *kind, const int *option);
#line 221 "book/embeddings.nw"
void figure_positional_encoding(FILE *out, int positions, int d_model, int first, int count);
#line 544 "book/program.nw"
#endif
