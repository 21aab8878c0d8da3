/* The transformer command line: the table of commands and the dispatch to them. Generated
   from the book's chapters by notangle: edit the book, not this file. */
#include "cli.h"
#include "commands.h"
/* <<main.c includes>> */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bleu.h"   /* the help of bleu names sacreBLEU's version */

/* <<main.c definitions>> */
typedef struct {
    const char *name;
    const char *summary;   /* one line for 'transformer --help' */
    const char *help;      /* the text of 'transformer NAME --help', or NULL and: */
    void (*print_help)(FILE *out);
    int (*run)(int argc, char **argv);   /* argv[0] is the first argument after NAME */
} Command;

static const Command commands[] = {
    /* <<Commands>> */
    {"figure-data", "print the data of one of the book's figures",
     NULL, print_figure_data_help, run_figure_data},
    {"demo", "show what the program computes so far (run by make)",
     "usage: transformer demo\n"
     "\n"
     "Print the data of every figure of the book in the terminal.\n",
     NULL, run_demo},
    {"random", "print numbers from the seeded generator (the tensor chapter)",
     "usage: transformer random [OPTIONS]\n"
     "\n"
     "Print numbers of the PCG32 stream: 32-bit outputs, uniform numbers in [0,1) or\n"
     "standard normal numbers. Seeds and streams are integers from 0 to 2^63 - 1.\n",
     NULL, run_random},
    {"time-matmul", "time one matrix-multiplication kernel (the tensor chapter)",
     "usage: transformer time-matmul [OPTIONS]\n"
     "\n"
     "Multiply two random N x N matrices repeatedly for 0.1 s and print the time of\n"
     "one product and the rate in GFLOP/s.\n",
     NULL, run_time_matmul},
    {"gradcheck", "check the backward functions by finite differences",
     "usage: transformer gradcheck [OPTIONS]\n"
     "\n"
     "Compare each backward function's gradient with central differences and print\n"
     "the error relative to each tensor's largest gradient. NAME is all, model,\n"
     "linear, softmax, attention, attention-unscaled, cross-attention, layernorm,\n"
     "layernorm-annotated, feed-forward, embedding or log-softmax. Exits with\n"
     "status 1 if an error reaches its bound (1e-2 for a layer, 5e-2 for the model).\n",
     NULL, run_gradcheck},
    {"copy", "train the copy task and decode examples (the copy-task chapter)",
     "usage: transformer copy [OPTIONS]\n"
     "\n"
     "Train a model to copy sequences of 10 symbols (vocabulary 11; the course's\n"
     "recipe by default), then decode 1..10 and random sequences. Exits with status\n"
     "1 unless every decoding is exact. With --checkpoint, the whole training state\n"
     "is saved after every epoch, every N steps with --checkpoint-every, at\n"
     "--stop-after, and on SIGINT or SIGTERM (exit status 130 or 143); --resume\n"
     "keeps saving to its file unless --checkpoint names another. Give a resumed run\n"
     "the same sizes (--epochs may grow).\n"
     "Under mpirun -np P, P processes share every batch; rank 0 writes the files.\n",
     NULL, run_copy},
    {"time-decode", "time greedy decoding with and without the key-value cache",
     "usage: transformer time-decode [OPTIONS]\n"
     "\n"
     "Decode BATCH random sources of LEN tokens greedily with a random model (the\n"
     "copy task's sizes by default), with the recomputing decoder, the cached one,\n"
     "or both; print the time of one decoding and, for both, the speed-up. Exits\n"
     "with status 1 if they differ.\n",
     NULL, run_time_decode},
    {"tokenize", "split lines of text into tokens, or join tokens back (the text chapter)",
     "usage: transformer tokenize [OPTIONS] < TEXT > TOKENS\n"
     "\n"
     "Split each line of standard input into tokens separated by single spaces, in\n"
     "the manner of the Moses tokenizer, optionally lowercased, and optionally cut\n"
     "into the pieces of a vocabulary of subwords (--subwords); or join tokens back\n"
     "into text (--detokenize, joining pieces first with --subwords); or compare the\n"
     "tokens with those of a file written by Moses (--compare), printing the lines\n"
     "that differ and the share that agree.\n"
     "Input must be UTF-8, with no empty line and no line longer than 1000 bytes\n"
     "(2000 for --detokenize).\n",
     NULL, run_tokenize},
    {"vocab", "build the vocabulary of text files (the text chapter)",
     "usage: transformer vocab [OPTIONS] FILE...\n"
     "\n"
     "Tokenize the FILEs as 'transformer tokenize' does and build their vocabulary:\n"
     "the specials <s> </s> <blank> <unk>, then every token seen at least N times,\n"
     "the most frequent first, ties in byte order. Print its size. With --subwords,\n"
     "the vocabulary is one of pieces of words learned by byte-pair encoding.\n",
     NULL, run_vocab},
    {"bleu", "score translations with corpus BLEU, exactly as sacreBLEU does",
     "usage: transformer bleu HYP REF [REF...] [OPTIONS]\n"
     "\n"
     "Print the corpus BLEU of the hypotheses in HYP (detokenized text, one sentence\n"
     "per line) against the references in REF (the same number of lines), and its\n"
     "signature: the value sacreBLEU " BLEU_SACREBLEU_VERSION " prints with its defaults\n"
     "(13a tokenizer, exp smoothing, case-sensitive). More REF files give more\n"
     "references per line. Files must be UTF-8; different line counts are an error\n"
     "(status 1).\n"
     "\n"
     "  transformer bleu --paired-bs BASELINE SYSTEM [SYSTEM...] REF [OPTIONS]\n"
     "\n"
     "compares systems: each SYSTEM against BASELINE by paired bootstrap resampling\n"
     "(Koehn 2004, as sacreBLEU --paired-bs), with every score's interval and\n"
     "each system's p-value, the chance of a difference this large between equally\n"
     "good systems. --confidence adds the interval to one system's score.\n",
     NULL, run_bleu},
    {"train", "train a German-to-English translator on Multi30k (the translation chapter)",
     "usage: transformer train [OPTIONS]\n"
     "\n"
     "Train on DIR/train.{de,en}, validating on DIR/val.{de,en} after every epoch.\n"
     "The model with the lowest validation loss is saved to FILE, its vocabularies\n"
     "inside it; the whole training state to the checkpoint every N steps,\n"
     "after every epoch, at --stop-after, after --minutes and on SIGINT/SIGTERM.\n"
     "Under mpirun -np P, P processes share every batch; rank 0 writes the files.\n",
     NULL, run_train},
    {"translate", "translate German lines on standard input into English",
     "usage: transformer translate [OPTIONS] < GERMAN > ENGLISH\n"
     "\n"
     "Read German sentences, one a line, and print their English translations, one a\n"
     "line, decoded with a beam search (greedy with --beam 1), with their capital\n"
     "letters (the model file's recaser; --lowercase: without). A blank line gives a\n"
     "blank line, so the output keeps the input's lines; a line over 1000 bytes is\n"
     "translated from its first 1000, with a warning; a line that cannot be read\n"
     "(invalid UTF-8, a NUL byte) stops it with status 1 after the lines before it\n"
     "are printed. Without --model, the translator that ships with\n"
     "the book, data/multi30k-de-en.safetensors.\n",
     NULL, run_translate},
    {"average", "average the weights of several models of one run (Getting to 41)",
     "usage: transformer average MODEL... --output FILE\n"
     "\n"
     "Read translation models of one run (the same sizes and vocabularies, such as\n"
     "those that train --keep-epochs K keeps) and save the mean of their weights,\n"
     "weight by weight, with their vocabularies, as FILE (one model: a copy, with\n"
     "--bf16 a bfloat16 copy of half the size). --recaser ENGLISH learns the table\n"
     "of capital letters anew from a cased, untokenized English file.\n",
     NULL, run_average},
    {"calibration", "how sure a translation model is against how often it is right",
     "usage: transformer calibration [OPTIONS] > FILE.dat\n"
     "\n"
     "Predict each word of the validation set's English from the words before it\n"
     "(teacher-forced, without dropout), bin the predictions by the probability of\n"
     "the most probable word, and print per bin: low, high, predictions, mean\n"
     "confidence, accuracy; then the expected calibration error (the translation\n"
     "chapter).\n",
     NULL, run_calibration},
    {"attention", "print one attention map of a translation (the translation chapter)",
     "usage: transformer attention [OPTIONS] < sentence.de\n"
     "\n"
     "Translate the German sentence on standard input (one line) and print the\n"
     "attention weights of one head (or their mean) of one layer as a matrix with\n"
     "token labels: rows are queries, columns keys (gnuplot: matrix rowheaders\n"
     "columnheaders); --head all prints each head's in turn, two blank lines apart.\n",
     NULL, run_attention},
    {"recase", "give lowercase English its capital letters (the capital letters chapter)",
     "usage: transformer recase [--model FILE] < LOWERCASE > CASED\n"
     "\n"
     "Read English lines, tokenize them, write each word as the model file's recaser\n"
     "says (its most frequent form in the training text, the sentence's first letter\n"
     "raised) and print them joined back into text. A blank line gives a blank line;\n"
     "a line that cannot be read stops it with status 1.\n",
     NULL, run_recase},
    {"benchmark", "time training or decoding, for comparison with PyTorch",
     "usage: transformer benchmark train|decode [OPTIONS]\n"
     "\n"
     "train: W warm-up steps, then S timed training steps on random copy-task\n"
     "batches of B sequences of L symbols (dropout 0.1, label smoothing 0.1, Adam);\n"
     "prints target tokens/s, ms per step, peak RSS, the FLOPs of a step's matrix\n"
     "products and the rate of OpenBLAS on exactly those products (and of the\n"
     "bfloat16 products, where the processor has them).\n"
     "decode: greedy decoding with the key-value cache of K random sources of L\n"
     "symbols, one at a time; prints sentences/s. The model is the copy task's\n"
     "unless sizes are given.\n",
     NULL, run_benchmark},
};
enum { COMMAND_COUNT = sizeof commands / sizeof commands[0] };

static void print_usage(FILE *out)
{
    fprintf(out, "usage: transformer COMMAND [OPTIONS]\n"
                 "       transformer [COMMAND] --help\n"
                 "       transformer --version\n\n"
                 "The Annotated Transformer in C, version " TRANSFORMER_VERSION ".\n\n"
                 "commands:\n");
    for (int i = 0; i < COMMAND_COUNT; i++)
        fprintf(out, "  %-13s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nenvironment:\n"
                 "  TRANSFORMER_MATMUL=blas|reference   the matrix-multiplication kernel "
                 "(default blas)\n"
                 "  TRANSFORMER_KERNELS=fast|reference  the other kernels (default fast)\n"
                 "  TRANSFORMER_PRODUCTS=split|openblas who threads the products "
                 "(default split)\n"
                 "  OMP_NUM_THREADS=N                   threads (default: the cores)\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) usage_error(NULL, "which command?");
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        print_usage(stdout);
        return finish_output();
    }
    if (strcmp(name, "--version") == 0) {
        printf("transformer " TRANSFORMER_VERSION "\n");
        return finish_output();
    }
    if (name[0] == '-') usage_error(NULL, "unknown option '%s'", name);
    for (int i = 0; i < COMMAND_COUNT; i++) {
        if (strcmp(name, commands[i].name) != 0) continue;
        for (int a = 2; a < argc; a++)
            if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
                if (commands[i].print_help) commands[i].print_help(stdout);
                else {
                    char help_flag[] = "--help", *only_help[] = {help_flag, NULL};
                    fputs(commands[i].help, stdout);
                    commands[i].run(1, only_help);   /* lists the flags and exits */
                }
                return finish_output();
            }
        /* <<Choose the kernels from the environment>> */
        const char *kernel = getenv("TRANSFORMER_MATMUL");
        if (kernel && strcmp(kernel, "reference") == 0) compute.matmul = MATMUL_REFERENCE;
        else if (kernel && *kernel && strcmp(kernel, "blas") != 0)
            usage_error(NULL, "TRANSFORMER_MATMUL must be 'blas' or 'reference', not '%s'",
                        kernel);
        const char *table = getenv("TRANSFORMER_KERNELS");
        if (table && strcmp(table, "reference") == 0) compute.kernel_set = KERNELS_REFERENCE;
        else if (table && *table && strcmp(table, "fast") != 0)
            usage_error(NULL, "TRANSFORMER_KERNELS must be 'fast' or 'reference', not '%s'", table);
        const char *products = getenv("TRANSFORMER_PRODUCTS");
        if (products && strcmp(products, "openblas") == 0) compute.split_products = false;
        else if (products && *products && strcmp(products, "split") != 0)
            usage_error(NULL, "TRANSFORMER_PRODUCTS must be 'split' or 'openblas', not '%s'",
                        products);
        set_threads(omp_get_max_threads() < MAX_THREADS ? omp_get_max_threads() : MAX_THREADS);
        int status = commands[i].run(argc - 2, argv + 2);
        return status ? status : finish_output();
    }
    usage_error(NULL, "unknown command '%s'", name);
}
