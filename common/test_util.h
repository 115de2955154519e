/* Includes cmocka needs, in the order it needs them, for every unit test. */
#ifndef IOP_TEST_UTIL_H
#define IOP_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four above, which it uses */

#endif
