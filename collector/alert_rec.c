/* A recording's alerts read back. See alert_rec.h. */
#include "alert_rec.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hash.h"
#include "judge.h"

bool coll_grow_room(void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? 2 * *cap : 64;
	void *nv = realloc(*v, c * size);
	if (!nv)
		return false;
	*v = nv;
	*cap = c;
	return true;
}

bool coll_alert_rec_parse(const char *json, size_t len, uint64_t tick_ns,
                          struct coll_alert_rec *r)
{
	json_t *o = json_loadb(json, len, 0, NULL);
	const char *state = json_string_value(json_object_get(o, "state"));
	const char *kind = json_string_value(json_object_get(o, "kind"));
	const char *sev = json_string_value(json_object_get(o, "severity"));
	*r = (struct coll_alert_rec){.a = {.rank = COLL_RANK_NONE, .layer = -1}};
	struct coll_alert_record *a = &r->a;
	if (!state || !kind || !sev || !coll_alert_kind_from_name(kind, &a->kind)) {
		json_decref(o);
		return false;
	}
	r->state = !strcmp(state, "start") ? COLL_AREC_START
	           : !strcmp(state, "end") ? COLL_AREC_END
	                                   : COLL_AREC_ONGOING;
	a->severity = !strcmp(sev, "crit") ? COLL_SEV_CRIT : COLL_SEV_WARN;
	json_t *rank = json_object_get(o, "rank");
	if (json_is_integer(rank))
		a->rank = (uint32_t)json_integer_value(rank);
	const char *file = json_string_value(json_object_get(o, "file"));
	if (file)
		a->file = !strncmp(file, "0x", 2) && strlen(file) == 18 ? strtoull(file + 2, NULL, 16)
		                                                        : iop_hash_str(file);
	const char *layer = json_string_value(json_object_get(o, "layer"));
	for (int l = 0; layer && l < IOP_LAYER__COUNT; l++)
		if (!strcmp(layer, iop_layer_name((enum iop_layer)l)))
			a->layer = l;
	r->t_ns = iop_ns_of_secs(json_number_value(json_object_get(o, "t")));
	json_t *start = json_object_get(o, "start"); /* recordings since iopulse 0.1 */
	a->start_ns = json_is_number(start) ? iop_ns_of_secs(json_number_value(start))
	                                    : r->t_ns - (r->t_ns >= tick_ns ? tick_ns : 0);
	a->peak_value = json_number_value(json_object_get(o, "value"));
	a->baseline = json_number_value(json_object_get(o, "baseline"));
	const char *msg = json_string_value(json_object_get(o, "message"));
	snprintf(a->message, sizeof a->message, "%s", msg ? msg : "");
	json_decref(o);
	return true;
}

void coll_alert_list_free(struct coll_alert_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static bool same_subject(const struct coll_alert_record *a, const struct coll_alert_record *b)
{
	return a->kind == b->kind && a->rank == b->rank && a->file == b->file && a->layer == b->layer;
}

bool coll_alert_list_fold(struct coll_alert_list *l, const struct coll_alert_rec *r,
                          bool *escalated)
{
	const struct coll_alert_record *a = &r->a;
	struct coll_alert_record *open = NULL;
	if (escalated)
		*escalated = false;
	for (size_t i = l->n; i-- > 0 && !open;)
		if (!l->v[i].end_ns && same_subject(&l->v[i], a))
			open = &l->v[i];
	if (r->state == COLL_AREC_START || !open) {
		if (!coll_grow_room((void **)&l->v, &l->cap, l->n, sizeof *l->v))
			return false;
		l->v[l->n++] = *a;
	} else if (r->state == COLL_AREC_END) {
		open->end_ns = r->t_ns ? r->t_ns : 1;
		open->severity = a->severity; /* the peak */
		open->peak_value = a->peak_value;
		open->baseline = a->baseline;
		/* "SUBJECT ended after D, peak SEV: DETAIL" (alerts.c) says the
		 * peak's message: "SUBJECT DETAIL" */
		const char *m = a->message, *e = strstr(m, "ended after ");
		const char *p = e ? strstr(e, ", peak ") : NULL;
		if (p && (!strncmp(p + 7, "CRIT: ", 6) || !strncmp(p + 7, "WARN: ", 6)))
			snprintf(open->message, sizeof open->message, "%.*s%s", (int)(e - m), m, p + 13);
	} else if (a->severity > open->severity ||
	           (a->severity == open->severity && a->peak_value > open->peak_value)) {
		if (escalated)
			*escalated = a->severity > open->severity;
		open->severity = a->severity;
		open->peak_value = a->peak_value;
		open->baseline = a->baseline;
		snprintf(open->message, sizeof open->message, "%s", a->message);
	}
	return true;
}

void coll_alert_recs_load(struct rec_reader *r, uint64_t tick_ns, uint64_t *after,
                          struct coll_alert_rec **v, size_t *n, size_t *cap)
{
	const struct rec_index_entry *ix;
	size_t m;
	if (rec_index(r, &ix, &m) != IOP_OK)
		return;
	for (size_t i = 0; i < m; i++) {
		struct rec_frame f;
		struct coll_alert_rec rec;
		if (ix[i].type != REC_ALERT || (*after && ix[i].offset <= *after) ||
		    rec_read_at(r, ix[i].offset, &f, NULL, 0) != IOP_OK)
			continue;
		*after = ix[i].offset;
		if (coll_alert_rec_parse((const char *)f.payload, f.len, tick_ns, &rec) &&
		    coll_grow_room((void **)v, cap, *n, sizeof **v))
			(*v)[(*n)++] = rec;
	}
}

void coll_alert_list_load(struct rec_reader *r, uint64_t tick_ns, struct coll_alert_list *l)
{
	struct coll_alert_rec *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t after = 0;
	coll_alert_recs_load(r, tick_ns, &after, &v, &n, &cap);
	for (size_t i = 0; i < n; i++)
		(void)coll_alert_list_fold(l, &v[i], NULL);
	free(v);
}

json_t *coll_alert_list_json(const struct coll_alert_list *l, uint64_t end_ns,
                             const struct coll_state *s)
{
	json_t *out = json_array();
	for (size_t i = 0; out && i < l->n; i++) {
		struct coll_alert_record a = l->v[i];
		if (!a.end_ns)
			a.end_ns = end_ns > a.start_ns ? end_ns : a.start_ns;
		json_array_append_new(out, coll_alert_record_json(&a, coll_state_name, (void *)s));
	}
	return out;
}

void coll_alert_rec_alert(const struct coll_alert_rec *r, bool escalated, struct coll_alert *a)
{
	*a = (struct coll_alert){
		.state = r->state == COLL_AREC_START ? COLL_ALERT_START
		         : r->state == COLL_AREC_END ? COLL_ALERT_END
		                                     : COLL_ALERT_ONGOING,
		.kind = r->a.kind,
		.severity = r->a.severity,
		.escalated = escalated,
		.start_ns = r->a.start_ns,
		.t_ns = r->t_ns,
		.rank = r->a.rank,
		.file = r->a.file,
		.layer = r->a.layer,
		.value = r->a.peak_value,
		.baseline = r->a.baseline,
		.message = r->a.message,
	};
}
