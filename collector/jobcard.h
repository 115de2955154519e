/* Job cards: one 0600 JSON file per running job in $HOME/.iopulse/jobs/
 * (the directory 0700), written by `iopulse run`, read by `iopulse jobs`,
 * `iopulse top` and collectors on other nodes. A card holds the job key,
 * so it is readable by its owner only. */
#ifndef COLL_JOBCARD_H
#define COLL_JOBCARD_H

#include <stdint.h>
#include <stdio.h>

#include "auth.h"
#include "err.h"

struct coll_jobcard {
	uint64_t job_id;
	struct iop_key key;
	char leaf[256];  /* where the ranks on the launching node send frames */
	char root[256];  /* where viewers and other collectors reach the root */
	char host[256];
	char command[1024];
	char record[1024]; /* the recording `iopulse run --record` writes; "" when none */
	uint64_t start_ns;
	int pid; /* of `iopulse run` */
	char path[1024]; /* the card's file, as coll_jobcard_read was given it */
};

/* $HOME/.iopulse/jobs (created 0700 when create is set) into buf. */
enum iop_err coll_jobcard_dir(char *buf, size_t len, int create);
/* Writes the card atomically (temp file + rename); path of it into path. */
enum iop_err coll_jobcard_write(const struct coll_jobcard *c, char *path, size_t len);
enum iop_err coll_jobcard_read(const char *path, struct coll_jobcard *c, char *err, size_t errlen);

/* "running", "stale" (its iopulse is gone) or "remote" (started on another
 * host: cannot tell). */
const char *coll_jobcard_state(const struct coll_jobcard *c);
/* Calls fn with each card of the directory (in directory order) until it
 * returns non-zero; a card that does not read is reported on stderr with
 * who and skipped. NOT_FOUND when HOME is unset, IO when the directory
 * does not exist. */
enum iop_err coll_jobcard_each(const char *who, int (*fn)(void *arg, const struct coll_jobcard *c),
                               void *arg);
/* A job's id and key: from the card at path when path is given, else from
 * $IOPULSE_KEY and $IOPULSE_JOB. The reason in err: IO when the card
 * cannot be read (missing, another user's, not a card), INVAL when no key
 * is given or it is malformed. */
enum iop_err coll_jobcard_key(const char *path, uint64_t *job_id, struct iop_key *key, char *err,
                              size_t errlen);

/* `iopulse jobs`: lists the cards, running ones first. */
int coll_cmd_jobs(int argc, char **argv);

#endif
