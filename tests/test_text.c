/* test_text.c -- see book/text.nw. */
#include "tests.h"
#include "text.h"

Suite *text_suite(void)
{
    Suite *suite = suite_create("text");
    return suite;
}
