/* Opening a recording for a command, and its DELTA frames in order. See
 * rec_open.h. */
#include "rec_open.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define DEFAULT_TICK_NS 1000000000ull

enum iop_err rec_opened_open_why(const char *path, struct rec_opened *o, char *why, size_t len)
{
	memset(o, 0, sizeof(*o));
	why[0] = 0;
	errno = 0;
	enum iop_err e = rec_io_file_open(path, &o->io);
	if (e) {
		snprintf(why, len, "cannot open %s: %s", path,
		         errno ? strerror(errno) : iop_strerror(e));
		return e;
	}
	char detail[256] = "";
	if ((e = rec_open(o->io, &o->r, detail, sizeof detail))) {
		if (e == IOP_ERR_BAD_MAGIC)
			snprintf(why, len, "%s: not an iopulse recording (.iop)", path);
		else
			snprintf(why, len, "%s: %s", path, detail[0] ? detail : iop_strerror(e));
		rec_io_close(o->io);
		o->io = NULL;
		return e;
	}
	o->tick_ns = DEFAULT_TICK_NS;
	o->delta_version = COLL_DELTA_VERSION;
	o->history_bytes = COLL_HISTORY_BYTES;
	const char *meta;
	size_t mlen;
	if (rec_meta(o->r, &meta, &mlen) == IOP_OK) {
		json_t *m = json_loadb(meta, mlen, 0, NULL);
		const char *c = json_string_value(json_object_get(m, "command"));
		snprintf(o->command, sizeof o->command, "%s", c ? c : "");
		json_int_t tick = json_integer_value(json_object_get(m, "tick_ns"));
		if (tick > 0)
			o->tick_ns = (uint64_t)tick;
		json_int_t hb = json_integer_value(json_object_get(m, "history_bytes"));
		o->history_bytes = hb > 0 ? (uint64_t)hb : COLL_HISTORY_BYTES;
		json_int_t dn = json_integer_value(json_object_get(m, "detail_ns"));
		o->detail_ns = dn > 0 ? (uint64_t)dn : 0;
		json_int_t vc = json_integer_value(json_object_get(m, "view_cap"));
		o->view_cap = vc > 0 && vc <= UINT32_MAX ? (uint32_t)vc : 0;
		json_int_t dv = json_integer_value(json_object_get(m, "delta_version"));
		json_decref(m);
		if (dv < COLL_DELTA_VERSION_MIN || dv > COLL_DELTA_VERSION) {
			snprintf(why, len,
			         "%s: its ticks are in delta version %d; this iopulse reads versions %d "
			         "to %d (%s)",
			         path, (int)dv, COLL_DELTA_VERSION_MIN, COLL_DELTA_VERSION,
			         dv > COLL_DELTA_VERSION ? "a newer iopulse made it: use that one"
			                                 : "a recording made before iopulse 0.1: record "
			                                   "the job again");
			rec_opened_close(o);
			return IOP_ERR_BAD_VERSION;
		}
		o->delta_version = (unsigned)dv;
	}
	struct rec_info info;
	if (rec_info(o->r, &info) == IOP_OK) {
		o->job_id = info.job_id;
		o->start_ns = info.created_ns;
	}
	return IOP_OK;
}

int rec_opened_open(const char *cmd, const char *path, struct rec_opened *o)
{
	char why[1024];
	if (rec_opened_open_why(path, o, why, sizeof why)) {
		fprintf(stderr, "iopulse %s: %s\n", cmd, why);
		return 2;
	}
	return 0;
}

void rec_opened_close(struct rec_opened *o)
{
	rec_reader_close(o->r);
	if (o->io)
		rec_io_close(o->io);
	o->r = NULL;
	o->io = NULL;
}

enum iop_err rec_next_delta(const struct rec_opened *o, struct coll_delta *d, struct rec_frame *f,
                            uint64_t *bad)
{
	struct rec_reader *r = o->r;
	struct rec_frame scratch;
	f = f ? f : &scratch;
	enum iop_err e;
	while ((e = rec_next(r, f, NULL, 0)) == IOP_OK) {
		if (f->type != REC_DELTA)
			continue;
		struct iop_rcur c = iop_rcur_make(f->payload, f->len);
		if (coll_delta_decode_body_v(d, &c, o->delta_version) == IOP_OK)
			return IOP_OK;
		if (bad)
			(*bad)++;
	}
	return e;
}

void rec_follow_init(struct rec_follow *fw, struct rec_opened *o, bool follow)
{
	fw->o = o;
	fw->follow = follow;
}

enum iop_err rec_follow_next_delta(struct rec_follow *fw, struct coll_delta *d, uint64_t *bad,
                                   volatile sig_atomic_t *stop)
{
	for (;;) {
		enum iop_err e = rec_next_delta(fw->o, d, NULL, bad);
		if (e != IOP_ERR_NOT_FOUND || !fw->follow)
			return e;
		bool grew = false;
		while (!grew) {
			if (rec_closed(fw->o->r) || (stop && *stop))
				return IOP_ERR_NOT_FOUND;
			struct timespec ts = {0, REC_FOLLOW_POLL_MS * 1000000L};
			nanosleep(&ts, NULL);
			if ((e = rec_refresh(fw->o->r, &grew)))
				return e;
		}
	}
}

void rec_opened_state_init(const struct rec_opened *o, struct coll_state *s, uint64_t tick_ns)
{
	struct coll_history_cfg h;
	coll_history_cfg_default(&h, tick_ns);
	h.max_bytes = o->history_bytes;
	coll_state_init(s, tick_ns, &h);
	s->detail_ticks = rec_opened_detail_ticks(o, tick_ns);
}

uint32_t rec_opened_detail_ticks(const struct rec_opened *o, uint64_t tick_ns)
{
	uint64_t n = tick_ns ? o->detail_ns / tick_ns : 0;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

const char *rec_lean_rules_msg(const char *cmd, const char *path)
{
	static char msg[1024];
	snprintf(msg, sizeof msg,
	         "iopulse %s: %s is a lean recording (whole ticks once a period; iopulse run "
	         "--record-detail): its alerts are those the live run raised, and --rules cannot "
	         "judge it again; record with --record-detail full for that\n",
	         cmd, path);
	return msg;
}
