/* The fixed key the fuzz targets and their seeds share. */
#ifndef IOP_FUZZ_KEY_H
#define IOP_FUZZ_KEY_H

#include "auth.h"

static const struct iop_key fuzz_key = {
    {0xf0, 0x0d, 0xfa, 0xce, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}};

#endif
