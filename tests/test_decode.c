/* test_decode.c -- see book/decode.nw. */
#include "tests.h"
#include "decode.h"

Suite *decode_suite(void)
{
    Suite *suite = suite_create("decode");
    return suite;
}
