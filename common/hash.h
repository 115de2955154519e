/* 64-bit identifiers for files (hash of the absolute path, job-wide), call
 * sites and hosts: XXH3 from libxxhash. Stable across machines and versions
 * of iopulse because the wire and recordings carry these values. */
#ifndef IOP_HASH_H
#define IOP_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t iop_hash64(const void *data, size_t len);

/* Hash of a NUL-terminated string, e.g. an absolute path. */
uint64_t iop_hash_str(const char *s);

#endif
