/* The root's recording (--record FILE): the .iop file of replay/rec.h with
 * a META frame (job metadata as JSON), one DELTA frame per closed tick (the
 * tick delta's body, docs/collector.md), and one ALERT frame per alert
 * transition (its JSON record). Each tick is written through to the file,
 * so a job killed outright leaves a recording readable to its last tick. A
 * write error (a full disk) is reported once; the job runs on and what was
 * written stays readable. */
#ifndef COLL_RECORD_H
#define COLL_RECORD_H

#include <jansson.h>

#include "delta.h"
#include "summary.h"

struct coll_record;

/* NULL on failure, with the reason printed. */
struct coll_record *coll_record_open(const char *path, const struct coll_job_info *job);
void coll_record_tick(struct coll_record *r, const struct coll_delta *d);
void coll_record_alert(struct coll_record *r, uint64_t t_ns, json_t *alert);
/* Writes END (clean close) and frees. */
void coll_record_close(struct coll_record *r);

#endif
