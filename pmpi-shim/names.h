/* Internal: the name table as the sender reads it (names.c). */
#ifndef IOP_SHIM_NAMES_H
#define IOP_SHIM_NAMES_H

#include <stdint.h>

struct shim_name {
	uint64_t hash; /* XXH3-64 of text, as on the wire */
	uint32_t len;
	uint8_t kind;  /* enum iop_name_kind */
	char text[];
};

int shim_names_init(void);
/* Ids 1 .. count-1 exist. */
uint32_t shim_names_count(void);
const struct shim_name *shim_name_get(uint32_t id);

#endif
