/* Generated from the book's chapters by notangle: edit the book, not this file. */
#include "cli.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
/* <<cli.c includes>> */
#include <errno.h>
#include <getopt.h>
#include <limits.h>

/* <<cli.c definitions>> */
void usage_error(const char *command, const char *format, ...)
{
    va_list arguments;
    const char *space = command ? " " : "", *name = command ? command : "";
    fprintf(stderr, "transformer%s%s: ", space, name);
    va_start(arguments, format);
    vfprintf(stderr, format, arguments);
    va_end(arguments);
    fprintf(stderr, " (try 'transformer%s%s --help')\n", space, name);
    exit(2);
}

int finish_output(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "transformer: cannot write the results to standard output: %s\n",
                strerror(errno));
        exit(EXIT_FAILURE);
    }
    return 0;
}

long long parse_integer(const char *command, const char *flag, const char *text,
                               long long low, long long high)
{
    char *end;
    errno = 0;
    long long value = text ? strtoll(text, &end, 10) : 0;
    if (text == NULL || *text == '\0' || *end != '\0' || errno == ERANGE
        || value < low || value > high)
        usage_error(command, "%s expects an integer from %lld to %lld, got '%s'",
                    flag, low, high, text ? text : "nothing");
    return value;
}

double parse_number(const char *command, const char *flag, const char *text,
                           double low, double high)
{
    char *end;
    errno = 0;
    double value = text ? strtod(text, &end) : 0.0;
    if (text == NULL || *text == '\0' || *end != '\0' || errno == ERANGE
        || !(value >= low && value <= high))
        usage_error(command, "%s expects a number from %g to %g, got '%s'",
                    flag, low, high, text ? text : "nothing");
    return value;
}

static void read_option(const char *command, const Option *option, const char *text)
{
    char flag[64];
    snprintf(flag, sizeof flag, "--%s", option->name);
    switch (option->kind) {
    case OPTION_INT:
        *(int *)option->target = (int)parse_integer(command, flag, text, (long long)option->low,
                                                    (long long)option->high);
        break;
    case OPTION_LONG:   /* a high of 2^63 or more means no limit below LONG_MAX */
        *(long *)option->target = (long)parse_integer(
            command, flag, text, (long long)option->low,
            option->high >= 0x1p63 ? LONG_MAX : (long long)option->high);
        break;
    case OPTION_REAL:
        *(double *)option->target = parse_number(command, flag, text, option->low, option->high);
        break;
    case OPTION_FLOAT:
        *(float *)option->target =
            (float)parse_number(command, flag, text, option->low, option->high);
        break;
    case OPTION_TEXT:
        if (text == NULL || *text == '\0') usage_error(command, "%s needs a value", flag);
        *(const char **)option->target = text;
        break;
    case OPTION_CHOICE:
        /* <<Look the value up among the choices>> */
        {
            const char *word = option->choices;
            for (int index = 0; *word; index++) {
                const size_t length = strcspn(word, "|");
                if (text && strlen(text) == length && strncmp(text, word, length) == 0) {
                    *(int *)option->target = index;
                    return;
                }
                word += length + (word[length] == '|');
            }
            char list[256] = "";   /* 'a', 'b' or 'c' */
            for (word = option->choices; *word;) {
                const size_t length = strcspn(word, "|");
                const bool last = word[length] == '\0', first = word == option->choices;
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%.*s'",
                         first ? "" : last ? " or " : ", ", (int)length, word);
                word += length + !last;
            }
            usage_error(command, "%s expects %s, got '%s'", flag, list, text ? text : "nothing");
        }
        break;
    case OPTION_SWITCH: *(bool *)option->target = true; break;
    case OPTION_SET: *(int *)option->target = (int)option->low; break;
    }
}

int parse_options(const char *command, const Option *options, int count, int argc,
                         char **argv)
{
    struct option table[count + 1];
    for (int i = 0; i < count; i++) {
        const bool takes_value = options[i].kind != OPTION_SWITCH && options[i].kind != OPTION_SET;
        table[i] = (struct option){options[i].name, takes_value ? required_argument : no_argument,
                                   NULL, i};
    }
    table[count] = (struct option){NULL, 0, NULL, 0};
    char **arguments = argv - 1;   /* arguments[0]: the command's name */
    opterr = 0, optind = 0;
    int found;
    while ((found = getopt_long(argc + 1, arguments, ":", table, NULL)) != -1) {
        if (found == '?' && strcmp(arguments[optind - 1], "--help") == 0) {
            print_options(stdout, options, count);
            exit(finish_output());
        }
        if (found == '?') usage_error(command, "unknown option '%s'", arguments[optind - 1]);
        read_option(command, &options[found == ':' ? optopt : found],
                    found == ':' ? NULL : optarg);
    }
    return optind - 1;
}

void no_operands(const char *command, int first, int argc, char **argv)
{
    if (first < argc) usage_error(command, "unexpected argument '%s'", argv[first]);
}

static void print_option(FILE *out, const Option *option)
{
    const char *help = option->help ? option->help : "";
    char flag[96];
    int length = snprintf(flag, sizeof flag, "--%s", option->name);
    if (option->kind == OPTION_CHOICE)
        length += snprintf(flag + length, sizeof flag - (size_t)length, " %s", option->choices);
    else if (option->kind != OPTION_SWITCH && option->kind != OPTION_SET) {
        const int value = (int)strcspn(help, " ");   /* "N epochs to train": N */
        length += snprintf(flag + length, sizeof flag - (size_t)length, " %.*s", value, help);
        help += value + (help[value] == ' ');
    }
    if (length <= 24) fprintf(out, "  %-24s %s", flag, help);
    else fprintf(out, "  %s\n%27s%s", flag, "", help);
    if (strstr(help, "default") == NULL) 
                                         /* <<Print the default value of option>> */
                                         switch (option->kind) {
                                         case OPTION_INT: fprintf(out, " (default %d)", *(const int *)option->target); break;
                                         case OPTION_LONG: fprintf(out, " (default %ld)", *(const long *)option->target); break;
                                         case OPTION_REAL: fprintf(out, " (default %g)", *(const double *)option->target); break;
                                         case OPTION_FLOAT: fprintf(out, " (default %g)", *(const float *)option->target); break;
                                         case OPTION_TEXT:
                                             if (*(const char *const *)option->target)
                                                 fprintf(out, " (default %s)", *(const char *const *)option->target);
                                             break;
                                         case OPTION_CHOICE: {
                                             const char *word = option->choices;
                                             for (int index = *(const int *)option->target; index > 0 && *word; index--)
                                                 word += strcspn(word, "|") + (word[strcspn(word, "|")] == '|');
                                             fprintf(out, " (default %.*s)", (int)strcspn(word, "|"), word);
                                             break;
                                         }
                                         case OPTION_SWITCH: case OPTION_SET: break;
                                         }
    fputc('\n', out);
}

void print_options(FILE *out, const Option *options, int count)
{
    fprintf(out, "\noptions:\n");
    for (int i = 0; i < count; i++) print_option(out, &options[i]);
    fprintf(out, "  %-24s %s\n", "--help", "print this help and exit");
}
