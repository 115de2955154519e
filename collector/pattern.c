/* Names of the access patterns. See pattern.h. */
#include "pattern.h"

const char *coll_pat_name(enum coll_pattern p)
{
	static const char *const name[COLL_PAT__COUNT] = {"consecutive", "sequential", "strided",
	                                                  "random"};
	return (unsigned)p < COLL_PAT__COUNT ? name[p] : "?";
}

const char *coll_pat_short(enum coll_pattern p)
{
	static const char *const name[COLL_PAT__COUNT] = {"cons", "seq", "strd", "rand"};
	return (unsigned)p < COLL_PAT__COUNT ? name[p] : "?";
}
