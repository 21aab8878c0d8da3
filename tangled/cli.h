/* The helpers every command uses: usage errors, reading options, writing results.
   Generated from the book's chapters by notangle: edit the book, not this file. */
#ifndef CLI_H
#define CLI_H
#include <stdbool.h>
#include <stdio.h>

/* <<cli.h declarations>> */
#define TRANSFORMER_VERSION "0.1.0"

/* Print "transformer COMMAND: message (try ...)" on one line and exit with status 2. */
_Noreturn __attribute__((format(printf, 2, 3)))
void usage_error(const char *command, const char *format, ...);
/* Flush standard output; a failed write, now or before, is an error (status 1). */
int finish_output(void);
/* The integer or real number text, in [low, high], or a usage error naming flag. */
long long parse_integer(const char *command, const char *flag, const char *text,
                        long long low, long long high);
double parse_number(const char *command, const char *flag, const char *text, double low,
                    double high);

typedef enum {
    OPTION_INT,      /* int, in [low, high] */
    OPTION_LONG,     /* long, in [low, high] */
    OPTION_REAL,     /* double, in [low, high] */
    OPTION_FLOAT,    /* float, in [low, high] */
    OPTION_TEXT,     /* const char *, not empty: a file name, say */
    OPTION_CHOICE,   /* int: the index of the value among choices, "a|b|c" */
    OPTION_SWITCH,   /* bool, set to true; takes no value */
    OPTION_SET       /* int, set to low; takes no value */
} OptionKind;

typedef struct {
    const char *name;      /* without the dashes: "epochs" is --epochs */
    OptionKind kind;
    void *target;          /* where the value goes, of the kind's type */
    double low, high;
    const char *choices;   /* OPTION_CHOICE only */
    const char *help;      /* for --help: "N epochs to train"; a value's name comes first */
} Option;

/* Read the options of argv[0 .. argc) (the arguments after the command's name) into their
   targets; return the index of the first operand, the operands being argv[index .. argc). */
int parse_options(const char *command, const Option *options, int count, int argc,
                  char **argv);
/* For a command that takes no operands: refuse any. */
void no_operands(const char *command, int first, int argc, char **argv);

/* Print the table's flags, one a line, with their help and defaults. */
void print_options(FILE *out, const Option *options, int count);
#endif
