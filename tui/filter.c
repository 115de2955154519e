/* The filter and seek parsers of filter.h. */
#include "filter.h"

#include <ctype.h>
#include <math.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events.h"

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	size_t i = 0;
	while (isspace((unsigned char)s[i]))
		i++;
	memmove(s, s + i, n - i + 1);
}

static bool layer_by_any_name(const char *s, unsigned *out)
{
	enum iop_layer l;
	if (iop_layer_from_name(s, &l)) {
		*out = l;
		return true;
	}
	for (unsigned i = 0; i < IOP_LAYER__COUNT; i++) {
		if (!strcasecmp(s, iop_layer_label(i)) || !strcasecmp(s, iop_layer_name(i))) {
			*out = i;
			return true;
		}
	}
	return false;
}

/* "0-63,70,80-90" */
static int parse_ranges(struct tui_term *t, const char *s)
{
	t->n_r = 0;
	while (*s) {
		char *end;
		if (!isdigit((unsigned char)*s) || t->n_r == TUI_FILTER_RANGES)
			return -1;
		unsigned long lo = strtoul(s, &end, 10), hi = lo;
		if (*end == '-') {
			s = end + 1;
			if (!isdigit((unsigned char)*s))
				return -1;
			hi = strtoul(s, &end, 10);
		}
		if (hi < lo || hi > UINT32_MAX - 1)
			return -1;
		t->r[t->n_r].lo = (uint32_t)lo;
		t->r[t->n_r++].hi = (uint32_t)hi;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return t->n_r ? 0 : -1;
}

static int parse_term(struct tui_term *t, char *s, char *err, size_t errlen)
{
	trim(s);
	memset(t, 0, sizeof *t);
	if (!*s) {
		snprintf(err, errlen, "empty term");
		return -1;
	}
	if (strlen(s) >= sizeof t->text) {
		snprintf(err, errlen, "term too long");
		return -1;
	}
	char *eq = strchr(s, '=');
	if (!eq) {
		t->kind = TUI_TERM_SUB;
		strcpy(t->text, s);
		return 0;
	}
	*eq = 0;
	const char *key = s, *val = eq + 1;
	strcpy(t->text, val);
	if (!strcmp(key, "rank")) {
		t->kind = TUI_TERM_RANK;
		if (parse_ranges(t, val) == 0)
			return 0;
		snprintf(err, errlen, "rank= wants numbers and ranges: rank=0-63,70");
	} else if (!strcmp(key, "file")) {
		t->kind = TUI_TERM_FILE;
		if (*val)
			return 0;
		snprintf(err, errlen, "file= wants a pattern: file=*.h5");
	} else if (!strcmp(key, "node")) {
		t->kind = TUI_TERM_NODE;
		if (*val)
			return 0;
		snprintf(err, errlen, "node= wants a pattern: node=n00*");
	} else if (!strcmp(key, "layer")) {
		t->kind = TUI_TERM_LAYER;
		if (layer_by_any_name(val, &t->layer))
			return 0;
		snprintf(err, errlen, "layer= wants posix, stdio, mpiio or hdf5");
	} else {
		snprintf(err, errlen, "unknown key '%s': rank=, file=, layer=, node=", key);
	}
	return -1;
}

int tui_filter_parse(struct tui_filter *f, const char *text, char *err, size_t errlen)
{
	struct tui_filter nf = {0};
	char buf[TUI_FILTER_TERMS * TUI_FILTER_TEXT];
	if (strlen(text) >= sizeof buf) {
		snprintf(err, errlen, "filter too long");
		return -1;
	}
	strcpy(buf, text);
	trim(buf);
	char *p = buf;
	if (*p == '!') {
		nf.invert = true;
		p++;
	}
	if (!*p) {
		if (nf.invert) {
			snprintf(err, errlen, "'!' inverts a filter: !rank=0-3");
			return -1;
		}
		*f = nf;
		return 0;
	}
	char *save = NULL;
	for (char *tok = strtok_r(p, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
		if (nf.n == TUI_FILTER_TERMS) {
			snprintf(err, errlen, "at most %d terms", TUI_FILTER_TERMS);
			return -1;
		}
		if (parse_term(&nf.t[nf.n++], tok, err, errlen))
			return -1;
	}
	if (!nf.n) {
		snprintf(err, errlen, "empty filter");
		return -1;
	}
	*f = nf;
	return 0;
}

static bool term_match(const struct tui_term *t, const struct tui_subject *s)
{
	switch (t->kind) {
	case TUI_TERM_RANK:
		for (unsigned i = 0; s->rank != UINT32_MAX && i < t->n_r; i++)
			if (s->rank >= t->r[i].lo && s->rank <= t->r[i].hi)
				return true;
		return false;
	case TUI_TERM_FILE: return s->path && fnmatch(t->text, s->path, 0) == 0;
	case TUI_TERM_NODE: return s->node && fnmatch(t->text, s->node, 0) == 0;
	case TUI_TERM_LAYER: return (s->layers >> t->layer) & 1;
	case TUI_TERM_SUB: {
		char num[16];
		if (s->rank != UINT32_MAX) {
			snprintf(num, sizeof num, "%u", s->rank);
			if (strstr(num, t->text))
				return true;
		}
		return (s->label && strcasestr(s->label, t->text)) ||
		       (s->path && strcasestr(s->path, t->text)) ||
		       (s->node && strcasestr(s->node, t->text));
	}
	}
	return false;
}

bool tui_filter_match(const struct tui_filter *f, const struct tui_subject *s)
{
	if (!f->n)
		return true;
	bool any = false;
	for (unsigned i = 0; i < f->n && !any; i++)
		any = term_match(&f->t[i], s);
	return any != f->invert;
}

static int64_t clamp(int64_t t, int64_t lo, int64_t hi)
{
	return t < lo ? lo : t > hi ? hi : t;
}

/* "30s", "5m", "2h", "90" (seconds), in seconds; <0 on error. */
static double parse_secs(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || !isfinite(v) || v < 0)
		return -1;
	if (!*end || !strcmp(end, "s"))
		return v;
	if (!strcmp(end, "m"))
		return v * 60;
	if (!strcmp(end, "h"))
		return v * 3600;
	return -1;
}

int tui_seek_parse(const char *text, int64_t cur, int64_t first, int64_t last, uint64_t tick_ns,
                   int64_t *out)
{
	char buf[64];
	if (!tick_ns || first > last || strlen(text) >= sizeof buf)
		return -1;
	strcpy(buf, text);
	trim(buf);
	size_t n = strlen(buf);
	double tick_s = tick_ns / 1e9;
	if (n && buf[n - 1] == '%') {
		buf[n - 1] = 0;
		char *end;
		double pc = strtod(buf, &end);
		if (end == buf || *end || !(pc >= 0 && pc <= 100))
			return -1;
		*out = first + (int64_t)((double)(last - first) * pc / 100.0 + 0.5);
		return 0;
	}
	if (buf[0] == '+' || buf[0] == '-') {
		double s = parse_secs(buf + 1);
		if (s < 0)
			return -1;
		/* no further than the recording is long, so no overflow */
		double q = s / tick_s + 0.5;
		int64_t d = q < (double)(last - first) ? (int64_t)q : last - first;
		*out = clamp(buf[0] == '+' ? cur + d : cur - d, first, last);
		return 0;
	}
	unsigned hh, mm, ss = 0;
	int used = 0;
	if ((sscanf(buf, "%u:%u:%u%n", &hh, &mm, &ss, &used) == 3 ||
	     sscanf(buf, "%u:%u%n", &hh, &mm, &used) == 2) &&
	    (size_t)used == n && hh < 24 && mm < 60 && ss < 60) {
		time_t at = (time_t)((double)cur * tick_s);
		struct tm tm;
		localtime_r(&at, &tm);
		tm.tm_hour = (int)hh;
		tm.tm_min = (int)mm;
		tm.tm_sec = (int)ss;
		tm.tm_isdst = -1;
		time_t want = mktime(&tm);
		if (want == (time_t)-1)
			return -1;
		/* the tick that ends then: the header's `at` shows a tick's end */
		*out = clamp((int64_t)((double)want / tick_s) - 1, first, last);
		return 0;
	}
	return -1;
}
