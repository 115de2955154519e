/* The node's own I/O figures. See sample.h. */
#include "sample.h"

#include <stdlib.h>
#include <string.h>

/* A line cursor over [p, end). */
struct lines {
	const char *p, *end;
};

/* The next line [*s, *e) without its '\n'; false at the end. */
static bool next_line(struct lines *l, const char **s, const char **e)
{
	if (l->p >= l->end)
		return false;
	const char *nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
	*s = l->p;
	*e = nl ? nl : l->end;
	l->p = nl ? nl + 1 : l->end;
	return true;
}

static bool starts(const char *s, const char *e, const char *word)
{
	size_t n = strlen(word);
	return (size_t)(e - s) >= n && !memcmp(s, word, n);
}

/* An unsigned decimal at *p (spaces skipped), to at most end. */
static bool get_u64(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s >= end || *s < '0' || *s > '9')
		return false;
	uint64_t x = 0;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	*p = s;
	return true;
}

/* A decimal like 12.34 (at most two places are kept) as a double. */
static bool get_fixed(const char **p, const char *end, double *v)
{
	uint64_t whole, frac = 0;
	if (!get_u64(p, end, &whole))
		return false;
	double scale = 1;
	if (*p < end && **p == '.') {
		(*p)++;
		const char *s = *p;
		while (*p < end && **p >= '0' && **p <= '9' && *p - s < 6) {
			frac = frac * 10 + (uint64_t)(**p - '0');
			scale *= 10;
			(*p)++;
		}
		while (*p < end && **p >= '0' && **p <= '9')
			(*p)++;
	}
	*v = (double)whole + (double)frac / scale;
	return true;
}

/* The value after "key=" on [s, e). */
static bool key_value(const char *s, const char *e, const char *key, bool fixed, double *d,
                      uint64_t *u)
{
	size_t n = strlen(key);
	for (const char *p = s; p + n <= e; p++) {
		if ((p == s || p[-1] == ' ') && !memcmp(p, key, n)) {
			const char *v = p + n;
			return fixed ? get_fixed(&v, e, d) : get_u64(&v, e, u);
		}
	}
	return false;
}

enum iop_err iop_psi_parse(const char *text, size_t len, struct iop_psi *out)
{
	*out = (struct iop_psi){0};
	struct lines l = {text, text + len};
	const char *s, *e;
	bool some = false;
	while (next_line(&l, &s, &e)) {
		bool is_some = starts(s, e, "some "), is_full = starts(s, e, "full ");
		if (!is_some && !is_full)
			continue;
		double avg;
		uint64_t total;
		if (!key_value(s, e, "avg10=", true, &avg, NULL) ||
		    !key_value(s, e, "total=", false, NULL, &total))
			return IOP_ERR_MALFORMED;
		if (is_some) {
			out->some_avg10 = avg;
			out->some_us = total;
			some = true;
		} else {
			out->full_avg10 = avg;
			out->full_us = total;
			out->has_full = true;
		}
	}
	return some ? IOP_OK : IOP_ERR_MALFORMED;
}

enum iop_err iop_diskstats_find(const char *text, size_t len, uint32_t major, uint32_t minor,
                                struct iop_diskstat *out)
{
	struct lines l = {text, text + len};
	const char *s, *e;
	while (next_line(&l, &s, &e)) {
		const char *p = s;
		uint64_t ma, mi;
		if (!get_u64(&p, e, &ma) || !get_u64(&p, e, &mi))
			continue;
		if (ma != major || mi != minor)
			continue;
		*out = (struct iop_diskstat){.major = major, .minor = minor};
		while (p < e && *p == ' ')
			p++;
		const char *name = p;
		while (p < e && *p != ' ')
			p++;
		size_t n = (size_t)(p - name);
		if (!n)
			return IOP_ERR_MALFORMED;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)name[i] < 0x21 || name[i] == 0x7f)
				return IOP_ERR_MALFORMED; /* a device name is printable */
		memcpy(out->name, name, n < sizeof out->name - 1 ? n : sizeof out->name - 1);
		/* reads, merged, sectors, ms; writes, merged, sectors, ms; in
		 * flight, io ms (kernel's Documentation/admin-guide/iostats.rst) */
		uint64_t f[10];
		for (int i = 0; i < 10; i++)
			if (!get_u64(&p, e, &f[i]))
				return IOP_ERR_MALFORMED;
		out->rd_ios = f[0];
		out->rd_sectors = f[2];
		out->rd_ms = f[3];
		out->wr_ios = f[4];
		out->wr_sectors = f[6];
		out->wr_ms = f[7];
		out->in_flight = f[8];
		out->io_ms = f[9];
		return IOP_OK;
	}
	return IOP_ERR_NOT_FOUND;
}

enum iop_err iop_meminfo_parse(const char *text, size_t len, struct iop_meminfo *out)
{
	*out = (struct iop_meminfo){0};
	struct lines l = {text, text + len};
	const char *s, *e;
	int found = 0;
	while (next_line(&l, &s, &e)) {
		uint64_t *to = starts(s, e, "Dirty:") ? &out->dirty_kib
		               : starts(s, e, "Writeback:") ? &out->writeback_kib : NULL;
		if (!to)
			continue;
		const char *p = memchr(s, ':', (size_t)(e - s)) + 1;
		if (!get_u64(&p, e, to))
			return IOP_ERR_MALFORMED;
		found++;
	}
	return found == 2 ? IOP_OK : IOP_ERR_MALFORMED;
}

enum iop_err iop_cpustat_parse(const char *text, size_t len, struct iop_cpustat *out)
{
	*out = (struct iop_cpustat){0};
	struct lines l = {text, text + len};
	const char *s, *e;
	while (next_line(&l, &s, &e)) {
		if (!starts(s, e, "cpu "))
			continue;
		const char *p = s + 4;
		/* user nice system idle iowait irq softirq steal (guest and
		 * guest_nice are within user and nice) */
		uint64_t f[8];
		int n = 0;
		while (n < 8 && get_u64(&p, e, &f[n]))
			n++;
		if (n < 5)
			return IOP_ERR_MALFORMED;
		for (int i = 0; i < n; i++) {
			if (out->total > UINT64_MAX - f[i])
				return IOP_ERR_MALFORMED;
			out->total += f[i];
		}
		out->iowait = f[4];
		return IOP_OK;
	}
	return IOP_ERR_MALFORMED;
}

void iop_disk_rates(const struct iop_diskstat *a, const struct iop_diskstat *b, uint64_t dt_ns,
                    struct iop_disk_rates *out)
{
	*out = (struct iop_disk_rates){0};
	double dt = dt_ns / 1e9;
	if (dt <= 0)
		return;
	/* counters only grow; a device that went away and came back (or a
	 * wrapped 32-bit counter on an old kernel) reads as nothing moved */
#define D(f) (b->f >= a->f ? (double)(b->f - a->f) : 0.0)
	out->read_Bps = D(rd_sectors) * 512 / dt;
	out->write_Bps = D(wr_sectors) * 512 / dt;
	out->read_iops = D(rd_ios) / dt;
	out->write_iops = D(wr_ios) / dt;
	out->util = D(io_ms) / (dt * 1000);
	if (out->util > 1)
		out->util = 1;
	double ios = D(rd_ios) + D(wr_ios);
	out->wait_ms = ios > 0 ? (D(rd_ms) + D(wr_ms)) / ios : 0;
#undef D
}

/* Whether the escaped field [s, e) (octal escapes as mountinfo's: \040)
 * reads plain. */
static bool escaped_is(const char *s, const char *e, const char *plain)
{
	while (s < e) {
		char c = *s++;
		if (c == '\\' && e - s >= 3 && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' && s[1] <= '7' &&
		    s[2] >= '0' && s[2] <= '7') {
			c = (char)((s[0] - '0') << 6 | (s[1] - '0') << 3 | (s[2] - '0'));
			s += 3;
		}
		if (!*plain || *plain++ != c)
			return false;
	}
	return !*plain;
}

/* The word [s, e) between before and after on the line [l, le); false
 * when either is missing. */
static bool between(const char *l, const char *le, const char *before, const char *after,
                    const char **s, const char **e)
{
	size_t nb = strlen(before), na = strlen(after);
	for (const char *p = l; p + nb <= le; p++) {
		if (memcmp(p, before, nb))
			continue;
		*s = p + nb;
		for (const char *q = *s; q + na <= le; q++)
			if (!memcmp(q, after, na)) {
				*e = q;
				return true;
			}
		return false;
	}
	return false;
}

/* An NFS per-op line "OP: ops trans timeouts sent recv queue rtt exec"
 * (spaces before OP) of the op word; false when it is another line. */
static bool op_line(const char *s, const char *e, const char *op, uint64_t f[8], bool *bad)
{
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	size_t n = strlen(op);
	if ((size_t)(e - s) <= n || memcmp(s, op, n) || s[n] != ':')
		return false;
	const char *p = s + n + 1;
	for (int i = 0; i < 8; i++)
		if (!get_u64(&p, e, &f[i]))
			*bad = true;
	return true;
}

enum iop_err iop_mountstats_find(const char *text, size_t len, const char *point,
                                 struct iop_netfs_stat *out)
{
	*out = (struct iop_netfs_stat){0};
	struct lines l = {text, text + len};
	const char *s, *e;
	bool in = false, found = false, rd = false, wr = false, bad = false;
	while (next_line(&l, &s, &e)) {
		if (starts(s, e, "device ")) {
			if (in)
				break; /* the next mount's section */
			/* "device SRC mounted on POINT with fstype nfs4 statvers=1.1" */
			static const char with[] = " with fstype ";
			const char *ps, *pe;
			in = between(s, e, " mounted on ", with, &ps, &pe) && escaped_is(ps, pe, point) &&
			     e - (pe + sizeof with - 1) >= 3 && !memcmp(pe + sizeof with - 1, "nfs", 3);
			found = found || in;
			continue;
		}
		uint64_t f[8];
		if (in && op_line(s, e, "READ", f, &bad)) {
			out->rd_ops = f[0], out->rd_bytes = f[4], out->rtt_ms += f[6], rd = true;
		} else if (in && op_line(s, e, "WRITE", f, &bad)) {
			out->wr_ops = f[0], out->wr_bytes = f[3], out->rtt_ms += f[6], wr = true;
		}
	}
	if (!found)
		return IOP_ERR_NOT_FOUND;
	if (bad || !rd || !wr) {
		*out = (struct iop_netfs_stat){0};
		return IOP_ERR_MALFORMED;
	}
	out->has_rtt = true;
	return IOP_OK;
}

/* "NAME N samples [bytes] MIN MAX SUM": N and SUM. */
static bool llite_line(const char *s, const char *e, const char *name, uint64_t *n,
                       uint64_t *sum, bool *bad)
{
	size_t k = strlen(name);
	if ((size_t)(e - s) <= k || memcmp(s, name, k) || (s[k] != ' ' && s[k] != '\t'))
		return false;
	const char *p = s + k;
	const char *br = memchr(p, ']', (size_t)(e - p));
	uint64_t min, max;
	if (!get_u64(&p, e, n) || !br || (p = br + 1, !get_u64(&p, e, &min)) ||
	    !get_u64(&p, e, &max) || !get_u64(&p, e, sum))
		*bad = true;
	return true;
}

enum iop_err iop_llite_parse(const char *text, size_t len, struct iop_netfs_stat *out)
{
	*out = (struct iop_netfs_stat){0};
	struct lines l = {text, text + len};
	const char *s, *e;
	bool snap = false, bad = false;
	while (next_line(&l, &s, &e)) {
		snap = snap || starts(s, e, "snapshot_time");
		(void)(llite_line(s, e, "read_bytes", &out->rd_ops, &out->rd_bytes, &bad) ||
		       llite_line(s, e, "write_bytes", &out->wr_ops, &out->wr_bytes, &bad));
	}
	if (!snap || bad) {
		*out = (struct iop_netfs_stat){0};
		return IOP_ERR_MALFORMED;
	}
	return IOP_OK;
}

void iop_netfs_rates(const struct iop_netfs_stat *a, const struct iop_netfs_stat *b,
                     uint64_t dt_ns, struct iop_disk_rates *out)
{
	*out = (struct iop_disk_rates){0};
	double dt = dt_ns / 1e9;
	if (dt <= 0)
		return;
#define D(f) (b->f >= a->f ? (double)(b->f - a->f) : 0.0)
	out->read_Bps = D(rd_bytes) / dt;
	out->write_Bps = D(wr_bytes) / dt;
	out->read_iops = D(rd_ops) / dt;
	out->write_iops = D(wr_ops) / dt;
	double ops = D(rd_ops) + D(wr_ops);
	out->wait_ms = a->has_rtt && b->has_rtt && ops > 0 ? D(rtt_ms) / ops : 0;
#undef D
}
