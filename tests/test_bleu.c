/* test_bleu.c -- see book/bleu.nw. */
#include "tests.h"
#include "bleu.h"

Suite *bleu_suite(void)
{
    Suite *suite = suite_create("bleu");
    return suite;
}
