/* The rule table's defaults and its JSON overrides (`--rules FILE`).
 *
 * Each override key is described once (name, type, where it lives in struct
 * coll_rule, its range, and the rules it means something for), so parsing,
 * range checks and the "unknown key" error all come from one table. */
#include "rules.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define MIB (UINT64_C(1) << 20)

static const char *const kind_names[] = {
#define X(id, name, scope) [COLL_ALERT_##id] = #name,
    COLL_ALERT_KINDS(X)
#undef X
};
static const enum coll_alert_scope kind_scopes[] = {
#define X(id, name, scope) [COLL_ALERT_##id] = COLL_SCOPE_##scope,
    COLL_ALERT_KINDS(X)
#undef X
};

const char *coll_alert_kind_name(enum coll_alert_kind kind)
{
	return (unsigned)kind < COLL_ALERT__COUNT ? kind_names[kind] : "?";
}

bool coll_alert_kind_from_name(const char *name, enum coll_alert_kind *out)
{
	for (unsigned k = 0; k < COLL_ALERT__COUNT; k++)
		if (strcmp(name, kind_names[k]) == 0) {
			*out = (enum coll_alert_kind)k;
			return true;
		}
	return false;
}

enum coll_alert_scope coll_alert_kind_scope(enum coll_alert_kind kind)
{
	return (unsigned)kind < COLL_ALERT__COUNT ? kind_scopes[kind] : COLL_SCOPE_JOB;
}

/* The reasoning behind each number is in docs/alerts.md. The variability
 * rules use short windows so a fault shows within a few ticks; the
 * diagnosis rules want a sustained pattern at volume before they speak.
 * Columns in the order of struct coll_rule. */
/* clang-format off */
static const struct coll_rule defaults[COLL_ALERT__COUNT] = {
/*                              on    warn  crit      dur int  win base ops   bytes     time ranks z    pair max_mean */
[COLL_ALERT_STRAGGLER]       = {true, 3,    8,        3,  30,  5,  0,   2,    0,        0.1, 2,    3.5, 5,   0},
[COLL_ALERT_THROUGHPUT_DROP] = {true, 0.5,  0.8,      2,  30,  3,  30,  20,   MIB,      0.1, 0,    0,   0,   0},
[COLL_ALERT_LATENCY_SPIKE]   = {true, 5,    15,       2,  30,  0,  30,  16,   0,        0.05,0,    0,   0,   0},
[COLL_ALERT_HUNG_IO]         = {true, 10,   30,       0,  30,  0,  0,   0,    0,        0,   0,    0,   0,   0},
[COLL_ALERT_IMBALANCE]       = {true, 2.5,  8,        1,  60,  3,  0,   0,    64 * MIB, 0,   2,    0,   0,   0},
[COLL_ALERT_SMALL_IO]        = {true, 0.5,  0.9,      3,  60,  10, 0,   1000, 0,        0.2, 0,    0,   0,   0},
[COLL_ALERT_RANDOM_IO]       = {true, 0.2,  0.4,      3,  60,  10, 0,   1000, 0,        0.2, 0,    0,   0,   MIB},
[COLL_ALERT_METADATA]        = {true, 0.3,  0.6,      3,  60,  10, 0,   20,   0,        1,   0,    0,   0,   0},
[COLL_ALERT_STDIO_SHARE]     = {true, 0.5,  0.9,      3,  60,  10, 0,   0,    64 * MIB, 0,   0,    0,   0,   0},
[COLL_ALERT_NO_COLLECTIVE]   = {true, 0.99, HUGE_VAL, 3,  60,  10, 0,   100,  16 * MIB, 0,   2,    0,   0,   0},
[COLL_ALERT_FRAGMENTATION]   = {true, 8,    64,       3,  60,  10, 0,   20,   0,        0.2, 0,    0,   0,   MIB},
[COLL_ALERT_MONITOR_LOSS]    = {true, 0.01, 0.1,      2,  60,  10, 0,   1000, 0,        0,   0,    0,   0,   0},
[COLL_ALERT_LATE_ARRIVAL]    = {true, 0.2,  0.5,      1,  30,  5,  0,   3,    0,        0.1, 2,    0,   0,   0},
[COLL_ALERT_NODE_PRESSURE]   = {true, 0.5,  0.9,      3,  60,  0,  0,   1,    0,        0,   0,    0,   0,   0},
};
/* clang-format on */

void coll_rules_default(struct coll_rules *r)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->rule, defaults, sizeof(defaults));
	r->max_files = 1024;
}

/* ------------------------------------------------------------- overrides */

enum key_type { KEY_BOOL, KEY_NUM, KEY_U32, KEY_U64 };

#define ALL_RULES ((1u << COLL_ALERT__COUNT) - 1)
#define R(id)     (1u << COLL_ALERT_##id)

struct key_desc {
	const char *name;
	enum key_type type;
	size_t off;
	double lo, hi;  /* accepted range */
	unsigned rules; /* bit per kind that has this key */
};

static const struct key_desc keys[] = {
    {"enabled", KEY_BOOL, offsetof(struct coll_rule, enabled), 0, 1, ALL_RULES},
    {"warn", KEY_NUM, offsetof(struct coll_rule, warn), 0, 1e18, ALL_RULES},
    {"crit", KEY_NUM, offsetof(struct coll_rule, crit), 0, 1e18, ALL_RULES},
    {"min_duration_s", KEY_NUM, offsetof(struct coll_rule, min_duration_s), 0, 3600, ALL_RULES},
    {"min_interval_s", KEY_NUM, offsetof(struct coll_rule, min_interval_s), 0, 86400, ALL_RULES},
    {"window_s", KEY_NUM, offsetof(struct coll_rule, window_s), 0, 600,
     ALL_RULES & ~(R(LATENCY_SPIKE) | R(HUNG_IO) | R(NODE_PRESSURE))},
    {"baseline_n", KEY_U32, offsetof(struct coll_rule, baseline_n), 3, 1000,
     R(THROUGHPUT_DROP) | R(LATENCY_SPIKE)},
    {"min_ops", KEY_U64, offsetof(struct coll_rule, min_ops), 0, 1e15,
     ALL_RULES & ~(R(HUNG_IO) | R(IMBALANCE) | R(STDIO_SHARE))},
    {"min_bytes", KEY_U64, offsetof(struct coll_rule, min_bytes), 0, 1e18,
     R(THROUGHPUT_DROP) | R(IMBALANCE) | R(STDIO_SHARE) | R(NO_COLLECTIVE)},
    {"min_time_s", KEY_NUM, offsetof(struct coll_rule, min_time_s), 0, 1e9,
     R(STRAGGLER) | R(THROUGHPUT_DROP) | R(LATENCY_SPIKE) | R(SMALL_IO) | R(RANDOM_IO) |
         R(METADATA) | R(FRAGMENTATION) | R(LATE_ARRIVAL)},
    {"min_ranks", KEY_U32, offsetof(struct coll_rule, min_ranks), 2, 1e9,
     R(STRAGGLER) | R(IMBALANCE) | R(NO_COLLECTIVE) | R(LATE_ARRIVAL)},
    {"min_z", KEY_NUM, offsetof(struct coll_rule, min_z), 0, 1e6, R(STRAGGLER)},
    {"pair_ratio", KEY_NUM, offsetof(struct coll_rule, pair_ratio), 1, 1e6, R(STRAGGLER)},
    {"max_mean_bytes", KEY_U64, offsetof(struct coll_rule, max_mean_bytes), 1, 1e18,
     R(RANDOM_IO) | R(FRAGMENTATION)},
};

static enum iop_err fail(char *errbuf, size_t errlen, enum iop_err e, const char *fmt,
                         const char *a, const char *b)
{
	if (errlen)
		snprintf(errbuf, errlen, fmt, a, b);
	return e;
}

/* Sets one key of one rule from a JSON value. */
static enum iop_err set_key(struct coll_rule *rule, const char *rname, const char *kname, json_t *v,
                            char *errbuf, size_t errlen)
{
	enum coll_alert_kind kind;
	coll_alert_kind_from_name(rname, &kind);
	const struct key_desc *d = NULL;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(keys[i].name, kname) == 0)
			d = &keys[i];
	if (!d || !(d->rules & (1u << kind)))
		return fail(
		    errbuf, errlen, IOP_ERR_INVAL,
		    "rules: rule '%s' has no key '%s' (docs/alerts.md lists each rule's keys)",
		    rname, kname);
	char *field = (char *)rule + d->off;
	if (d->type == KEY_BOOL) {
		if (!json_is_boolean(v))
			return fail(errbuf, errlen, IOP_ERR_INVAL,
			            "rules: %s.%s must be true or false", rname, kname);
		*(bool *)field = json_is_true(v);
		return IOP_OK;
	}
	/* "crit": null turns the critical level off. */
	if (json_is_null(v) && strcmp(kname, "crit") == 0) {
		*(double *)field = HUGE_VAL;
		return IOP_OK;
	}
	if (!json_is_number(v))
		return fail(errbuf, errlen, IOP_ERR_INVAL, "rules: %s.%s must be a number", rname,
		            kname);
	double x = json_number_value(v);
	if (!(x >= d->lo && x <= d->hi) || (d->type != KEY_NUM && x != (double)(uint64_t)x))
		return fail(errbuf, errlen, IOP_ERR_INVAL,
		            "rules: %s.%s is out of range (see docs/alerts.md)", rname, kname);
	if (d->type == KEY_NUM)
		*(double *)field = x;
	else if (d->type == KEY_U32)
		*(uint32_t *)field = (uint32_t)x;
	else
		*(uint64_t *)field = (uint64_t)x;
	return IOP_OK;
}

static enum iop_err apply(struct coll_rules *r, json_t *root, char *errbuf, size_t errlen)
{
	if (!json_is_object(root))
		return fail(errbuf, errlen, IOP_ERR_INVAL,
		            "rules: expected an object keyed by rule name%s%s", "", "");
	const char *rname;
	json_t *obj;
	json_object_foreach(root, rname, obj)
	{
		enum coll_alert_kind kind;
		if (!coll_alert_kind_from_name(rname, &kind)) {
			char known[256] = "";
			for (unsigned k = 0; k < COLL_ALERT__COUNT; k++)
				snprintf(known + strlen(known), sizeof(known) - strlen(known),
				         "%s%s", k ? ", " : "", kind_names[k]);
			return fail(errbuf, errlen, IOP_ERR_INVAL,
			            "rules: unknown rule '%s' (known: %s)", rname, known);
		}
		if (!json_is_object(obj))
			return fail(errbuf, errlen, IOP_ERR_INVAL,
			            "rules: '%s' must be an object of keys%s", rname, "");
		struct coll_rule *rule = &r->rule[kind];
		const char *kname;
		json_t *v;
		json_object_foreach(obj, kname, v)
		{
			enum iop_err e = set_key(rule, rname, kname, v, errbuf, errlen);
			if (e)
				return e;
		}
		if (rule->warn > rule->crit)
			return fail(errbuf, errlen, IOP_ERR_INVAL,
			            "rules: %s has warn above crit%s", rname, "");
	}
	return IOP_OK;
}

static enum iop_err apply_parsed(struct coll_rules *r, json_t *root, const json_error_t *jerr,
                                 const char *where, char *errbuf, size_t errlen)
{
	if (!root) {
		if (errlen)
			snprintf(errbuf, errlen, "rules: %s line %d: %s", where, jerr->line,
			         jerr->text);
		return IOP_ERR_MALFORMED;
	}
	struct coll_rules copy = *r; /* all or nothing */
	enum iop_err e = apply(&copy, root, errbuf, errlen);
	json_decref(root);
	if (!e)
		*r = copy;
	return e;
}

enum iop_err coll_rules_parse_json(struct coll_rules *r, const char *text, char *errbuf,
                                   size_t errlen)
{
	json_error_t jerr;
	json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	return apply_parsed(r, root, &jerr, "text", errbuf, errlen);
}

enum iop_err coll_rules_load_json(struct coll_rules *r, const char *path, char *errbuf,
                                  size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return fail(errbuf, errlen, IOP_ERR_IO, "rules: cannot read %s: %s", path,
		            strerror(errno));
	json_error_t jerr;
	json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	fclose(f);
	return apply_parsed(r, root, &jerr, path, errbuf, errlen);
}
