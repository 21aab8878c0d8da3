/* test_beam.c -- see book/beam.nw. */
#include "tests.h"
#include "beam.h"

Suite *beam_suite(void)
{
    Suite *suite = suite_create("beam");
    return suite;
}
