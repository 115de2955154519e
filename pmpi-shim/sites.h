/* Internal: call sites as the core and the sender use them (sites.c), the
 * loaded objects they are classified by (objects.c) and the symbol tables
 * they are named from (elfsym.c). The hot path's part is in shim.h. */
#ifndef IOP_SHIM_SITES_H
#define IOP_SHIM_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shim.h"

/* ------------------------------------------------------------ sites.c */

/* At start-up, before recording: the objects, and the unwinder (libunwind,
 * loaded privately; without it a call from inside an excluded object is
 * the site of that object's frame). 0 when call sites can be kept. */
int shim_sites_init(void);

/* Lookups the site cache had no room for (their calls carry site 0). */
uint64_t shim_sites_overflow(void);

/* Calls from inside an excluded object that took an unwind to site (the
 * others found a memo of one: a loop of such calls should take one). */
uint64_t shim_sites_unwinds(void);

/* The SITE name id of a site key, named on first use (0 for key 0, or when
 * it cannot be named now). Sender side: holds no lock the application may
 * hold when may_name, never called from a signal handler. */
uint32_t shim_site_name(uint32_t key, bool may_name);

/* The text of the site at return address ip: "function+0x1a (object)",
 * "object+0x1a" without a symbol; false, and "[unknown code]", when ip is
 * in no known object. */
bool shim_site_text(uintptr_t ip, char *buf, size_t cap);

/* ------------------------------------------------------------ objects.c */

struct shim_obj {
	uintptr_t lo, hi;  /* code: the executable segments */
	uintptr_t bias;    /* load bias: run-time address - ELF address */
	const char *path;  /* file to read symbols from */
	const char *base;  /* the name sites show */
	bool excluded;     /* frames in it are skipped */
	bool seen;         /* the sender's scan mark */
	_Atomic bool dead; /* unloaded */
};

int shim_objects_init(void);
/* SHIM_SITE_OUTSIDE, _EXCLUDED, or _UNKNOWN (in no object known yet: a
 * refresh is asked for); *scan_gen = the scans completed before looking. */
unsigned shim_objects_classify(uintptr_t ip, uint32_t *scan_gen);
const struct shim_obj *shim_objects_find(uintptr_t ip);
/* The same, or else the object that held ip before it was unloaded. */
const struct shim_obj *shim_objects_find_named(uintptr_t ip);
uint32_t shim_objects_gen(void);
/* Rescans the loaded objects if a thread asked (not on an I/O call: it
 * takes the loader's lock). */
void shim_objects_refresh(void);

/* ------------------------------------------------------------ elfsym.c */

/* The function of the ELF file at path (.symtab, else .dynsym) that holds
 * the ELF address addr: its name into name, its start into *start. */
bool shim_elf_function(const char *path, uint64_t addr, char *name, size_t cap, uint64_t *start);

#endif
