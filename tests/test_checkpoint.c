/* test_checkpoint.c -- see book/checkpoint.nw. */
#include "tests.h"
#include "checkpoint.h"

Suite *checkpoint_suite(void)
{
    Suite *suite = suite_create("checkpoint");
    return suite;
}
