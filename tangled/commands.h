#line 79 "book/program.nw"
/* The commands of the transformer program, one function each (argv[0] is the first
   argument after the command's name). Generated from the book's chapters by notangle:
   edit the book, not this file. */
#ifndef COMMANDS_H
#define COMMANDS_H
#include <stdio.h>

/* <<commands.h declarations>> */
#line 170 "book/program.nw"
int run_figure_data(int argc, char **argv);
void print_figure_data_help(FILE *out);
int run_demo(int argc, char **argv);
int run_random(int argc, char **argv);
int run_time_matmul(int argc, char **argv);
int run_gradcheck(int argc, char **argv);
int run_copy(int argc, char **argv);
int run_time_decode(int argc, char **argv);
int run_tokenize(int argc, char **argv);
int run_vocab(int argc, char **argv);
int run_bleu(int argc, char **argv);
int run_train(int argc, char **argv);
int run_translate(int argc, char **argv);
int run_attention(int argc, char **argv);
int run_average(int argc, char **argv);
int run_benchmark(int argc, char **argv);
#line 86 "book/program.nw"
#endif
