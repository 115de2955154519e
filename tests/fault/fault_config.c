/* libiopfault.so's configuration: the IOPFAULT_* variables, read once when
 * the library loads (see fault.h, docs/testing-tools.md). Pure parsing, no
 * I/O, so the unit test can drive it with a table instead of getenv. A
 * variable that does not parse turns every fault off: a test that asked for
 * a fault it did not get should see nothing happen, and the library says so
 * on stderr whatever IOPFAULT_VERBOSE says. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"

/* The shim's order (pmpi-shim/core.c), so both agree on a process's rank. */
static const char *const rank_vars[] = {"IOPULSE_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                        "PMIX_RANK",    "SLURM_PROCID",         "RANK"};

static const struct {
	const char *name;
	unsigned fns;
} fn_names[] = {
    {"read", FN_READ_CLASS}, {"write", FN_WRITE_CLASS}, {"sync", FN_SYNC_CLASS},
    {"all", FN_ALL},         {"pread", FN_PREAD},       {"pwrite", FN_PWRITE},
    {"readv", FN_READV},     {"writev", FN_WRITEV},     {"preadv", FN_PREADV},
    {"pwritev", FN_PWRITEV}, {"fsync", FN_FSYNC},       {"fdatasync", FN_FDATASYNC},
};

static bool parse_u32(const char *s, const char **end, uint32_t *v)
{
	char *e;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	unsigned long n = strtoul(s, &e, 10);
	if (errno || n > UINT32_MAX)
		return false;
	*v = (uint32_t)n;
	*end = e;
	return true;
}

/* "3", "0,2-5,9": true when it parses; *match when rank is in it. */
bool fault_rank_in_list(const char *list, uint32_t rank, bool *match)
{
	const char *p = list;
	*match = false;
	for (;;) {
		uint32_t lo, hi;
		if (!parse_u32(p, &p, &lo))
			return false;
		hi = lo;
		if (*p == '-' && (!parse_u32(p + 1, &p, &hi) || hi < lo))
			return false;
		*match |= rank >= lo && rank <= hi;
		if (*p == 0)
			return true;
		if (*p++ != ',')
			return false;
	}
}

/* "read,fsync": the union of the named sets. */
bool fault_parse_fns(const char *list, unsigned *fns)
{
	*fns = 0;
	const char *p = list;
	while (*p) {
		size_t len = strcspn(p, ",");
		size_t i = 0;
		for (; i < sizeof fn_names / sizeof *fn_names; i++)
			if (strlen(fn_names[i].name) == len &&
			    strncmp(fn_names[i].name, p, len) == 0)
				break;
		if (i == sizeof fn_names / sizeof *fn_names)
			return false;
		*fns |= fn_names[i].fns;
		p += len + (p[len] == ',');
	}
	return *fns != 0;
}

/* Decimal seconds ("2", "0.25") to ns; at most a year. */
/* A decimal number of seconds in [lo, hi], as ns. */
static bool parse_seconds_in(const char *s, double lo, double hi, uint64_t *ns)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo) || v > hi)
		return false;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return true;
}

bool fault_parse_seconds(const char *s, uint64_t *ns)
{
	return parse_seconds_in(s, 0, 366.0 * 86400, ns);
}

bool fault_parse_epoch(const char *s, uint64_t *ns)
{
	return parse_seconds_in(s, 1e9, 1e11, ns);
}

static void fail(struct fault_cfg *cfg, const char *var, const char *val)
{
	if (!cfg->bad)
		snprintf(cfg->error, sizeof cfg->error, "bad %s='%.60s'", var, val);
	cfg->bad = true;
}

static void read_rank(struct fault_cfg *cfg, fault_getenv_fn *get)
{
	for (size_t i = 0; i < sizeof rank_vars / sizeof *rank_vars; i++) {
		const char *v = get(rank_vars[i]), *end;
		uint32_t r;
		if (v && *v && parse_u32(v, &end, &r) && *end == 0) {
			cfg->rank = r;
			cfg->rank_from_env = true;
			return;
		}
	}
}

static void read_globs(struct fault_cfg *cfg, const char *list)
{
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ":");
		if (len && cfg->n_globs == FAULT_MAX_GLOBS) {
			fail(cfg, "IOPFAULT_FILE (more than 8 patterns)", list);
			return;
		}
		if (len && !(cfg->globs[cfg->n_globs++] = strndup(p, len))) {
			fail(cfg, "IOPFAULT_FILE (out of memory)", list);
			return;
		}
		p += len + (p[len] == ':');
	}
}

/* A variable that is set and not empty. */
static const char *var(fault_getenv_fn *get, const char *name)
{
	const char *v = get(name);
	return v && *v ? v : NULL;
}

void fault_cfg_read(struct fault_cfg *cfg, fault_getenv_fn *get, bool launcher)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->until_ns = FAULT_NEVER;
	cfg->hang_ns = FAULT_NEVER;
	cfg->delay_fns = FN_READ_CLASS | FN_WRITE_CLASS;
	const char *v;
	cfg->verbose = (v = var(get, "IOPFAULT_VERBOSE")) && strcmp(v, "0") != 0;
	read_rank(cfg, get);
	bool selected = true;
	if ((cfg->ranks = var(get, "IOPFAULT_RANK")) &&
	    !fault_rank_in_list(cfg->ranks, cfg->rank, &selected))
		fail(cfg, "IOPFAULT_RANK", cfg->ranks);
	if ((v = var(get, "IOPFAULT_DELAY_US"))) {
		char *end;
		errno = 0;
		unsigned long long us = strtoull(v, &end, 10);
		if (errno || *end || v[0] == '-' || us > 1000000000ull)
			fail(cfg, "IOPFAULT_DELAY_US", v);
		else
			cfg->delay_ns = us * 1000;
	}
	if ((v = var(get, "IOPFAULT_OPS")) && !fault_parse_fns(v, &cfg->delay_fns))
		fail(cfg, "IOPFAULT_OPS", v);
	if ((v = var(get, "IOPFAULT_HANG")) && !fault_parse_fns(v, &cfg->hang_fns))
		fail(cfg, "IOPFAULT_HANG", v);
	if ((v = var(get, "IOPFAULT_HANG_S")) && !fault_parse_seconds(v, &cfg->hang_ns))
		fail(cfg, "IOPFAULT_HANG_S", v);
	if ((v = var(get, "IOPFAULT_EPOCH_S")) && !(cfg->epoch_first = !strcmp(v, "first")) &&
	    !fault_parse_epoch(v, &cfg->epoch_ns))
		fail(cfg, "IOPFAULT_EPOCH_S", v);
	if ((v = var(get, "IOPFAULT_AFTER_S")) && !fault_parse_seconds(v, &cfg->after_ns))
		fail(cfg, "IOPFAULT_AFTER_S", v);
	if ((v = var(get, "IOPFAULT_UNTIL_S")) &&
	    (!fault_parse_seconds(v, &cfg->until_ns) || cfg->until_ns <= cfg->after_ns))
		fail(cfg, "IOPFAULT_UNTIL_S (must be after IOPFAULT_AFTER_S)", v);
	if ((v = var(get, "IOPFAULT_FILE")))
		read_globs(cfg, v);
	bool some = cfg->delay_ns > 0 || cfg->hang_fns != 0;
	cfg->active = some && selected && !cfg->bad && !launcher;
}

void fault_cfg_free(struct fault_cfg *cfg)
{
	for (unsigned i = 0; i < cfg->n_globs; i++)
		free(cfg->globs[i]);
	cfg->n_globs = 0;
}

/* "read,fsync"-style names of a set, the largest named sets first. */
static size_t fns_text(unsigned fns, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof fn_names / sizeof *fn_names && fns; i++) {
		if ((fns & fn_names[i].fns) != fn_names[i].fns || fn_names[i].fns == FN_ALL)
			continue;
		int k = snprintf(buf + n, cap - n, "%s%s", n ? "," : "", fn_names[i].name);
		if (k < 0 || (size_t)k >= cap - n)
			break;
		n += (size_t)k;
		fns &= ~fn_names[i].fns;
	}
	return n;
}

static void add(char *buf, size_t cap, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add(char *buf, size_t cap, size_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = *n < cap ? vsnprintf(buf + *n, cap - *n, fmt, ap) : 0;
	va_end(ap);
	if (k > 0)
		*n = *n + (size_t)k < cap ? *n + (size_t)k : cap - 1;
}

size_t fault_cfg_describe(const struct fault_cfg *cfg, char *buf, size_t cap)
{
	size_t n = 0;
	char fns[96];
	buf[0] = 0;
	if (cfg->bad) {
		add(buf, cap, &n, "iopfault: %s: no fault injected\n", cfg->error);
		return n;
	}
	add(buf, cap, &n, "iopfault: rank %u%s, IOPFAULT_RANK=%s: %s\n", cfg->rank,
	    cfg->rank_from_env ? "" : " (no rank variable)", cfg->ranks ? cfg->ranks : "(all)",
	    cfg->active ? "faults active" : "no fault here");
	if (!cfg->active)
		return n;
	char from[64];
	if (cfg->epoch_first)
		snprintf(from, sizeof from, "from the first selected call");
	else if (cfg->epoch_ns)
		snprintf(from, sizeof from, "from %.3f", (double)cfg->epoch_ns / 1e9);
	else
		snprintf(from, sizeof from, "from library load");
	add(buf, cap, &n, "iopfault:   window %.3f s .. ", (double)cfg->after_ns / 1e9);
	if (cfg->until_ns == FAULT_NEVER)
		add(buf, cap, &n, "end of process (%s)\n", from);
	else
		add(buf, cap, &n, "%.3f s (%s)\n", (double)cfg->until_ns / 1e9, from);
	add(buf, cap, &n, "iopfault:   regular files: ");
	for (unsigned i = 0; i < cfg->n_globs; i++)
		add(buf, cap, &n, "%s'%s'", i ? " or " : "", cfg->globs[i]);
	add(buf, cap, &n, "%s\n", cfg->n_globs ? "" : "all");
	if (cfg->delay_ns) {
		fns_text(cfg->delay_fns, fns, sizeof fns);
		add(buf, cap, &n, "iopfault:   delay %llu us on %s\n",
		    (unsigned long long)(cfg->delay_ns / 1000), fns);
	}
	if (cfg->hang_fns) {
		fns_text(cfg->hang_fns, fns, sizeof fns);
		add(buf, cap, &n, "iopfault:   hang the first %s call ", fns);
		if (cfg->hang_ns == FAULT_NEVER)
			add(buf, cap, &n, "until the process is killed\n");
		else
			add(buf, cap, &n, "for %.3f s\n", (double)cfg->hang_ns / 1e9);
	}
	return n;
}
