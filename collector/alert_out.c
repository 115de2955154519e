/* Alerts as people and scripts read them: numbers with units for messages,
 * the JSON records of DESIGN.md and the headless line of UX.md. The engine
 * builds messages at judging time (it knows the numbers); this file only
 * formats. Local time appears only in the human line, never in the engine. */
#include "alert_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void fmt_text(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}


static const char *path_of(coll_name_fn name, void *arg, uint64_t file)
{
	return name ? name(arg, file) : NULL;
}

void fmt_file(const struct coll_alerts *a, char *buf, size_t len, uint64_t file)
{
	const char *path = a->ctx ? path_of(a->ctx->name, a->ctx->name_arg, file) : NULL;
	if (!path) {
		snprintf(buf, len, "file 0x%016" PRIx64, file);
		return;
	}
	/* long paths keep their end, where the file's own name is */
	size_t n = strlen(path), room = len > 9 ? len - 9 : 1;
	if (n <= room)
		snprintf(buf, len, "file %s", path);
	else
		snprintf(buf, len, "file ...%s", path + (n - room + 3));
}

/* ------------------------------------------------------------------- JSON */

static const char *const state_names[] = {"start", "ongoing", "end"};

static const char *sev_name(enum coll_alert_sev s)
{
	return s == COLL_SEV_CRIT ? "crit" : "warn";
}

static double finite_or_0(double x)
{
	return isfinite(x) ? x : 0;
}

/* rank, file and layer, each only when the alert is about one */
static int add_subject(json_t *o, uint32_t rank, uint64_t file, int layer, coll_name_fn name,
                       void *name_arg)
{
	int rc = 0;
	if (rank != COLL_RANK_NONE)
		rc |= json_object_set_new(o, "rank", json_integer(rank));
	if (file) {
		const char *path = path_of(name, name_arg, file);
		char hex[24];
		snprintf(hex, sizeof(hex), "0x%016" PRIx64, file);
		rc |= json_object_set_new(o, "file", json_string(path ? path : hex));
	}
	if (layer >= 0)
		rc |= json_object_set_new(o, "layer",
		                          json_string(iop_layer_name((enum iop_layer)layer)));
	return rc;
}

static json_t *finish_object(json_t *o, int rc)
{
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *coll_alert_json(const struct coll_alert *a, coll_name_fn name, void *name_arg)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	int rc = json_object_set_new(o, "v", json_integer(1));
	rc |= json_object_set_new(o, "type", json_string("alert"));
	rc |= json_object_set_new(o, "state", json_string(state_names[a->state]));
	rc |= json_object_set_new(o, "kind", json_string(coll_alert_kind_name(a->kind)));
	rc |= json_object_set_new(o, "severity", json_string(sev_name(a->severity)));
	rc |= json_object_set_new(o, "t", json_real((double)a->t_ns / 1e9));
	rc |= add_subject(o, a->rank, a->file, a->layer, name, name_arg);
	rc |= json_object_set_new(o, "value", json_real(finite_or_0(a->value)));
	rc |= json_object_set_new(o, "baseline", json_real(finite_or_0(a->baseline)));
	rc |= json_object_set_new(o, "message", json_string(a->message));
	return finish_object(o, rc);
}

json_t *coll_alert_record_json(const struct coll_alert_record *r, coll_name_fn name, void *name_arg)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	int rc = json_object_set_new(o, "kind", json_string(coll_alert_kind_name(r->kind)));
	rc |= json_object_set_new(o, "severity", json_string(sev_name(r->severity)));
	rc |= add_subject(o, r->rank, r->file, r->layer, name, name_arg);
	rc |= json_object_set_new(o, "start", json_real((double)r->start_ns / 1e9));
	rc |= json_object_set_new(o, "end",
	                          r->end_ns ? json_real((double)r->end_ns / 1e9) : json_null());
	rc |= json_object_set_new(o, "peak_value", json_real(finite_or_0(r->peak_value)));
	rc |= json_object_set_new(o, "baseline", json_real(finite_or_0(r->baseline)));
	rc |= json_object_set_new(o, "message", json_string(r->message));
	return finish_object(o, rc);
}

/* ------------------------------------------------------------- human line */

int coll_alert_line(const struct coll_alert *a, char *buf, size_t len)
{
	time_t secs = (time_t)(a->t_ns / 1000000000u);
	struct tm tm;
	char clock[16] = "??:??:??";
	if (localtime_r(&secs, &tm))
		strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	const char *kind = coll_alert_kind_name(a->kind);
	if (a->state == COLL_ALERT_END)
		return snprintf(buf, len, "%s END  %s %s", clock, kind, a->message);
	char dur[16];
	coll_fmt_secs(dur, sizeof(dur),
	         a->t_ns > a->start_ns ? (double)(a->t_ns - a->start_ns) / 1e9 : 0);
	return snprintf(buf, len, "%s %s %s %s (%s)", clock,
	                a->severity == COLL_SEV_CRIT ? "CRIT" : "WARN", kind, a->message, dur);
}
