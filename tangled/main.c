#line 33 "book/program.nw"
/* The transformer command line: the table of commands and the dispatch to them. Generated
   from the book's chapters by notangle: edit the book, not this file. */
#include "cli.h"
#include "commands.h"
/* <<main.c includes>> */
#line 173 "book/program.nw"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bleu.h"   /* the help of bleu names sacreBLEU's version */
/* <<main.c definitions>> */
#line 425 "book/program.nw"
typedef struct {
    const char *name;
    const char *summary;   /* one line for 'transformer --help' */
    const char *help;      /* the text of 'transformer NAME --help', or NULL and: */
    void (*print_help)(FILE *out);
    int (*run)(int argc, char **argv);   /* argv[0] is the first argument after NAME */
} Command;
#line 435 "book/program.nw"
static const Command commands[] = {
    /* <<Commands>> */
#line 626 "book/program.nw"
    {"figure-data", "print the data of one of the book's figures",
     NULL, print_figure_data_help, run_figure_data},
#line 658 "book/program.nw"
    {"demo", "show what the program computes so far (run by make)",
     "usage: transformer demo\n\n"
     "Print the data of every figure of the book in the terminal.\n",
     NULL, run_demo},
#line 754 "book/program.nw"
    {"random", "print numbers from the seeded generator (Chapter 2)",
     "usage: transformer random [--seed S] [--stream N] [--count N]\n"
     "                          [--bits | --uniform | --normal]\n\n"
     "Print COUNT numbers of the PCG32 stream (default seed 42, stream 54, count 6),\n"
     "as 32-bit outputs (--bits), uniform in [0,1) (--uniform, the default)\n"
     "or standard normal (--normal).\n"
     "Seeds and streams are integers from 0 to 2^63 - 1.\n",
     NULL, run_random},
#line 831 "book/program.nw"
    {"time-matmul", "time one matrix-multiplication kernel (Chapter 2)",
     "usage: transformer time-matmul [--size N] [--kernel blas|reference]\n\n"
     "Multiply two random N x N matrices (default 256) repeatedly for 0.1 s and print\n"
     "the time of one product and the rate in GFLOP/s.\n",
     NULL, run_time_matmul},
#line 590 "book/gradcheck.nw"
    {"gradcheck", "check the backward functions by finite differences",
     "usage: transformer gradcheck [--layer NAME] [--samples N] [--step H]\n\n"
     "Compare each backward function's gradient with central differences and print the\n"
     "error relative to each tensor's largest gradient. NAME is all (the default), model,\n"
     "linear, softmax, attention, cross-attention, layernorm, layernorm-annotated,\n"
     "feed-forward, embedding or log-softmax. Exits with status 1 if an error reaches its\n"
     "bound (1e-2 for a layer, 5e-2 for the model).\n",
     NULL, run_gradcheck},
#line 745 "book/copy.nw"
    {"copy", "train the copy task and decode examples (Chapter 12)",
     "usage: transformer copy [--epochs N] [--batches N] [--batch-size N] [--layers N]\n"
     "                        [--d-model N] [--d-ff N] [--heads N] [--factor F]\n"
     "                        [--log FILE.csv] [--checkpoint FILE] [--checkpoint-every N]\n"
     "                        [--resume FILE] [--stop-after STEP] [--seed S]\n"
     "                        [--precision fp32|bf16]   (default bf16 where the CPU has it)\n\n"
     "Train a model to copy sequences of 10 symbols (vocabulary 11; the course's recipe by\n"
     "default: 20 epochs of 20 batches of 80, N = 2, d_model 512, d_ff 2048, 8 heads), then\n"
     "decode 1..10 and random sequences. Exits with status 1 unless every decoding is exact.\n"
     "--factor sets the schedule's factor (0.5: the course's base rate 0.5 times factor 1).\n"
     "--log writes one CSV row per epoch: training and validation loss, rate, time.\n"
     "--checkpoint saves the weights and the whole training state to FILE (safetensors) after\n"
     "every epoch, every N steps with --checkpoint-every, at --stop-after, and on SIGINT or\n"
     "SIGTERM (exit status 130 or 143). --resume continues the run saved in FILE, bit for bit,\n"
     "and keeps saving there; give it the same sizes (--epochs may grow).\n"
     "--seed seeds the three random streams (initial weights, data, dropout; default 1).\n",
     NULL, run_copy},
#line 619 "book/decode.nw"
    {"time-decode", "time greedy decoding with and without the key-value cache (Chapter 14)",
     "usage: transformer time-decode [--decoder cached|recompute] [--batch N] [--len N]\n"
     "                               [--layers N] [--d-model N] [--d-ff N] [--heads N]\n\n"
     "Decode BATCH random sources of LEN tokens (default 8 of 10) greedily with a random\n"
     "model (the copy task's by default: N = 2, d_model 512, d_ff 2048, 8 heads), with the\n"
     "recomputing decoder, the cached one, or (without --decoder) both; print the time of\n"
     "one decoding and, for both, the speed-up. Exits with status 1 if they differ.\n",
     NULL, run_time_decode},
#line 1431 "book/text.nw"
    {"tokenize", "split lines of text into tokens, or join tokens back (Chapter 15)",
     "usage: transformer tokenize [--language en|de] [--lowercase] < TEXT > TOKENS\n"
     "       transformer tokenize [--language en|de] --detokenize < TOKENS > TEXT\n"
     "       transformer tokenize [--language en|de] [--lowercase] --compare REFERENCE\n"
     "                            < TEXT\n\n"
     "Split each line of standard input into tokens separated by single spaces, in the\n"
     "manner of the Moses tokenizer (default language en), optionally lowercased; or join\n"
     "tokens back into text (--detokenize); or compare the tokens with REFERENCE, a file\n"
     "written by Moses, printing the lines that differ and the share that agree.\n"
     "Input must be UTF-8, with no empty line and no line longer than 1000 bytes\n"
     "(2000 for --detokenize).\n",
     NULL, run_tokenize},
#line 1498 "book/text.nw"
    {"vocab", "build the vocabulary of text files (Chapter 15)",
     "usage: transformer vocab [--language en|de] [--lowercase] [--min-freq N]\n"
     "                         [--save VOCAB] FILE...\n\n"
     "Tokenize the FILEs as 'transformer tokenize' does and build their vocabulary: the\n"
     "specials <s> </s> <blank> <unk>, then every token seen at least N times (default 2),\n"
     "the most frequent first, ties in byte order. Print its size; --save writes it to\n"
     "VOCAB, one token a line.\n",
     NULL, run_vocab},
#line 1052 "book/bleu.nw"
    {"bleu", "score translations with corpus BLEU, exactly as sacreBLEU does",
     "usage: transformer bleu HYP REF [REF...] [--lowercase]\n\n"
     "Print the corpus BLEU of the hypotheses in HYP (detokenized text, one sentence\n"
     "per line) against the references in REF (the same number of lines), and its\n"
     "signature: the value sacreBLEU " BLEU_SACREBLEU_VERSION " prints with its defaults\n"
     "(13a tokenizer, exp smoothing, case-sensitive). More REF files give more\n"
     "references per line. --lowercase (or -lc) scores lowercased text.\n"
     "Files must be UTF-8; different line counts are an error (status 1).\n",
     NULL, run_bleu},
#line 903 "book/translate.nw"
    {"train", "train a German-to-English translator on Multi30k (Chapter 18)",
     "usage: transformer train [--data DIR] [--model FILE] [--checkpoint FILE] [--resume FILE]\n"
     "                         [--log FILE.csv] [--epochs N] [--minutes N] [--token-budget N]\n"
     "                         [--layers N] [--d-model N] [--d-ff N] [--heads N]\n"
     "                         [--dropout P] [--smoothing E] [--factor F] [--warmup N]\n"
     "                         [--checkpoint-every N] [--stop-after STEP] [--subset N]\n"
     "                         [--precision fp32|bf16]   (default bf16 where the CPU has it)\n\n"
     "Train on DIR/train.{de,en} (default data/multi30k), validating on DIR/val.{de,en} after\n"
     "every epoch. The model with the lowest validation loss is saved to FILE (default\n"
     "multi30k.safetensors) with FILE.src.vocab and FILE.tgt.vocab; the whole training state\n"
     "to the checkpoint (default multi30k-last.safetensors) every N steps (500), after every\n"
     "epoch, at --stop-after, after --minutes and on SIGINT/SIGTERM. Defaults: 30 epochs,\n"
     "N = 3, d_model 256, d_ff 1024, 8 heads, dropout 0.1, smoothing 0.1, factor 0.5, warm-up\n"
     "400, 2000 padded tokens per batch. --subset N uses the first N pairs of each file.\n",
     NULL, run_train},
    {"translate", "translate German lines on standard input into English (Chapter 18)",
     "usage: transformer translate [--model FILE] [--beam K] [--alpha A] [--batch N]\n"
     "                             [--precision fp32|bf16]   (default fp32)\n\n"
     "Read German sentences, one a line, and print their English translations, one a line.\n"
     "--model: what 'transformer train' saved (default multi30k.safetensors); --beam: beam\n"
     "size (default 4; 1 is greedy decoding); --alpha: the length penalty's exponent (0.6);\n"
     "--batch: lines decoded together (32).\n",
     NULL, run_translate},
#line 1143 "book/translate.nw"
    {"attention", "print one attention map of a translation (Chapter 18)",
     "usage: transformer attention [--model FILE] [--kind encoder|decoder|cross]\n"
     "                             [--layer L] [--head H|mean] < sentence.de\n\n"
     "Translate the German sentence on standard input and print the attention weights of\n"
     "one head (or their mean, the default) of one layer (default: the last) as a matrix\n"
     "with token labels: rows are queries, columns keys (gnuplot: matrix rowheaders\n"
     "columnheaders). --kind: encoder self-attention, decoder self-attention or the\n"
     "decoder's attention to the source (cross, the default).\n",
     NULL, run_attention},
#line 413 "book/fast.nw"
    {"benchmark", "time training or decoding, for comparison with PyTorch (Chapter 19)",
     "usage: transformer benchmark train [--layers N] [--d-model N] [--d-ff N] [--heads N]\n"
     "                                   [--vocab V] [--batch B] [--len L] [--steps S]\n"
     "                                   [--warmup-steps W] [--threads T]\n"
     "                                   [--precision fp32|bf16]\n"
     "       transformer benchmark decode [same sizes] [--len L] [--sentences K]\n"
     "                                    [--warmup-sentences W] [--threads T]\n\n"
     "train: W warm-up steps, then S timed training steps on random copy-task batches of\n"
     "B sequences of L symbols (dropout 0.1, label smoothing 0.1, Chapter 11's optimizer);\n"
     "prints target tokens/s, ms per step, peak RSS, the FLOPs of a step's matrix products\n"
     "and the rate of OpenBLAS on exactly those products (and of the bfloat16 products, where\n"
     "the processor has them). decode: greedy decoding with the key-value cache of K random\n"
     "sources of L symbols, one at a time; prints sentences/s.\n"
     "Defaults: the copy task's model (N 2, d_model 512, d_ff 2048, 8 heads, V 11), B 80,\n"
     "L 10, S 20, W 3, K 10, 1 thread, bf16 where the processor has it (else fp32).\n",
     NULL, run_benchmark},
#line 437 "book/program.nw"
};
enum { COMMAND_COUNT = sizeof commands / sizeof commands[0] };
#line 442 "book/program.nw"
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
#line 466 "book/program.nw"
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
                else fputs(commands[i].help, stdout);
                return finish_output();
            }
        /* <<Choose the kernels from the environment>> */
#line 500 "book/program.nw"
        const char *kernel = getenv("TRANSFORMER_MATMUL");
        if (kernel && strcmp(kernel, "reference") == 0) compute.matmul = MATMUL_REFERENCE;
        else if (kernel && *kernel && strcmp(kernel, "blas") != 0)
            usage_error(NULL, "TRANSFORMER_MATMUL must be 'blas' or 'reference', not '%s'",
                        kernel);
#line 661 "book/fast.nw"
        const char *kernels = getenv("TRANSFORMER_KERNELS");
        if (kernels && strcmp(kernels, "reference") == 0) compute.fast_kernels = false;
        else if (kernels && *kernels && strcmp(kernels, "fast") != 0)
            usage_error(NULL, "TRANSFORMER_KERNELS must be 'fast' or 'reference', not '%s'",
                        kernels);
        const char *products = getenv("TRANSFORMER_PRODUCTS");
        if (products && strcmp(products, "openblas") == 0) compute.split_products = false;
        else if (products && *products && strcmp(products, "split") != 0)
            usage_error(NULL, "TRANSFORMER_PRODUCTS must be 'split' or 'openblas', not '%s'",
                        products);
        set_threads(omp_get_max_threads() < MAX_THREADS ? omp_get_max_threads() : MAX_THREADS);
#line 488 "book/program.nw"
        int status = commands[i].run(argc - 2, argv + 2);
        return status ? status : finish_output();
    }
    usage_error(NULL, "unknown command '%s'", name);
}
