/* The root's recording. See record.h. */
#include "record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec.h"
#include "rec_io.h"

struct coll_record {
	char *path;
	struct rec_io *io;
	struct rec_writer *w;
	uint8_t *buf;
	size_t cap;
	bool failed;
};

static void report(struct coll_record *r, enum iop_err e)
{
	if (r->failed)
		return;
	r->failed = true;
	struct rec_writer_stats st;
	rec_writer_stats(r->w, &st);
	fprintf(stderr,
	        "iopulse: recording to %s stopped: %s%s%s; the job goes on, and what was recorded "
	        "stays readable\n",
	        r->path, iop_strerror(e), st.sys_errno ? ": " : "",
	        st.sys_errno ? strerror(st.sys_errno) : "");
}

struct coll_record *coll_record_open(const char *path, const struct coll_job_info *job)
{
	struct coll_record *r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		free(r);
		fprintf(stderr, "iopulse: cannot record: out of memory\n");
		return NULL;
	}
	char id[17], start[32], host[256] = "";
	snprintf(id, sizeof id, "%016" PRIx64, job->id);
	coll_iso_time(job->start_ns, start, sizeof start);
	gethostname(host, sizeof host - 1);
	json_t *meta = json_pack("{s:i,s:i,s:s,s:s,s:s,s:s,s:I,s:s}", "v", 1, "delta_version",
	                         COLL_DELTA_VERSION, "job", id, "start", start,
	                         "command", job->command ? job->command : "", "host", host,
	                         "tick_ns", (json_int_t)job->tick_ns, "payloads",
	                         "DELTA: tick delta body (docs/collector.md); ALERT: alert JSON");
	char *text = meta ? json_dumps(meta, JSON_COMPACT) : NULL;
	json_decref(meta);
	enum iop_err e = text ? rec_io_file_create(path, &r->io) : IOP_ERR_NOMEM;
	struct rec_writer_opts opts = {.job_id = job->id, .start_ns = job->start_ns};
	if (!e)
		e = rec_writer_open(r->io, &opts, text, strlen(text), &r->w);
	free(text);
	if (e) {
		fprintf(stderr, "iopulse: cannot record to %s: %s%s%s\n", path, iop_strerror(e),
		        errno ? ": " : "", errno ? strerror(errno) : "");
		if (r->io)
			rec_io_close(r->io);
		free(r->path);
		free(r);
		return NULL;
	}
	return r;
}

void coll_record_tick(struct coll_record *r, const struct coll_delta *d)
{
	if (!r || r->failed)
		return;
	size_t len;
	enum iop_err e = coll_delta_encode_body_buf(d, REC_PAYLOAD_MAX, &r->buf, &r->cap, &len);
	if (!e)
		e = rec_write(r->w, REC_DELTA, (uint64_t)(d->tick.t + 1) * d->tick.tick_ns, r->buf, len);
	if (!e)
		e = rec_flush(r->w);
	if (e)
		report(r, e);
}

void coll_record_alert(struct coll_record *r, uint64_t t_ns, json_t *alert)
{
	if (!r || r->failed || !alert)
		return;
	char *text = json_dumps(alert, JSON_COMPACT | JSON_REAL_PRECISION(16));
	enum iop_err e = text ? rec_write(r->w, REC_ALERT, t_ns, text, strlen(text)) : IOP_ERR_NOMEM;
	free(text);
	if (e)
		report(r, e);
}

void coll_record_close(struct coll_record *r)
{
	if (!r)
		return;
	enum iop_err e = rec_close(r->w);
	if (e && !r->failed)
		fprintf(stderr, "iopulse: closing the recording %s: %s\n", r->path, iop_strerror(e));
	rec_io_close(r->io);
	free(r->buf);
	free(r->path);
	free(r);
}
