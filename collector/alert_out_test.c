/* Unit tests for alert output: the JSON record has exactly DESIGN.md's keys
 * (optional ones only when the alert is about a rank, file or layer) and
 * parses back; the human line matches UX.md's shape; numbers read well. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alert_int.h"
#include "alert_synth.h"
#include "test_util.h"

/* 12:03:10 UTC on 2023-11-14 */
#define NOON_ISH (UINT64_C(1699963390) * 1000000000u)

static const char *lookup(void *arg, uint64_t file)
{
	return file == 0x1234 ? "/scratch/run/out.h5" : NULL;
}

/* The record as text, parsed back: what a script reading the JSONL sees. */
static json_t *round_trip(const struct coll_alert *a)
{
	json_t *o = coll_alert_json(a, lookup, NULL);
	assert_non_null(o);
	char *text = json_dumps(o, COLL_ALERT_JSON_FLAGS);
	assert_non_null(text);
	assert_null(strchr(text, '\n'));
	json_decref(o);
	json_error_t err;
	json_t *back = json_loads(text, 0, &err);
	free(text);
	assert_non_null(back);
	return back;
}

static void assert_schema(json_t *o)
{
	static const char *const required[] = {"v", "type",  "state",    "kind",   "severity",
	                                       "t", "value", "baseline", "message"};
	static const char *const optional[] = {"rank", "file", "layer"};
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		assert_non_null(json_object_get(o, required[i]));
	size_t known = sizeof(required) / sizeof(required[0]);
	for (size_t i = 0; i < sizeof(optional) / sizeof(optional[0]); i++)
		known += json_object_get(o, optional[i]) != NULL;
	assert_int_equal(json_object_size(o), known);
	assert_int_equal(json_integer_value(json_object_get(o, "v")), 1);
	assert_string_equal(json_string_value(json_object_get(o, "type")), "alert");
	assert_true(json_is_number(json_object_get(o, "t")));
	assert_true(json_is_number(json_object_get(o, "value")));
	assert_true(json_is_number(json_object_get(o, "baseline")));
	const char *sev = json_string_value(json_object_get(o, "severity"));
	assert_true(strcmp(sev, "warn") == 0 || strcmp(sev, "crit") == 0);
	const char *st = json_string_value(json_object_get(o, "state"));
	assert_true(strcmp(st, "start") == 0 || strcmp(st, "ongoing") == 0 ||
	            strcmp(st, "end") == 0);
	enum coll_alert_kind k;
	assert_true(coll_alert_kind_from_name(json_string_value(json_object_get(o, "kind")), &k));
}

static void test_json_fields(void **state)
{
	struct coll_alert a = {.state = COLL_ALERT_START,
	                       .kind = COLL_ALERT_LATENCY_SPIKE,
	                       .severity = COLL_SEV_CRIT,
	                       .start_ns = NOON_ISH - 2000000000u,
	                       .t_ns = NOON_ISH + 500000000u,
	                       .rank = COLL_RANK_NONE,
	                       .file = 0x1234,
	                       .layer = IOP_LAYER_MPIIO,
	                       .value = 21.5,
	                       .baseline = 0.004,
	                       .message = "file /scratch/run/out.h5 ..."};
	json_t *o = round_trip(&a);
	assert_schema(o);
	assert_string_equal(json_string_value(json_object_get(o, "state")), "start");
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "latency_spike");
	assert_string_equal(json_string_value(json_object_get(o, "severity")), "crit");
	assert_true(json_number_value(json_object_get(o, "t")) == 1699963390.5);
	assert_null(json_object_get(o, "rank"));
	assert_string_equal(json_string_value(json_object_get(o, "file")), "/scratch/run/out.h5");
	assert_string_equal(json_string_value(json_object_get(o, "layer")), "mpiio");
	assert_true(json_number_value(json_object_get(o, "value")) == 21.5);
	assert_true(json_number_value(json_object_get(o, "baseline")) == 0.004);
	json_decref(o);

	/* printed as people wrote them, not 0.0040000000000000001 */
	o = coll_alert_json(&a, lookup, NULL);
	char *text = json_dumps(o, COLL_ALERT_JSON_FLAGS);
	assert_non_null(strstr(text, "\"t\":1699963390.5,"));
	assert_non_null(strstr(text, "\"baseline\":0.004,"));
	free(text);
	json_decref(o);

	/* a rank's alert; a file without a name; a job's alert */
	a.rank = 12;
	a.file = 0xabc;
	a.layer = -1;
	a.state = COLL_ALERT_END;
	a.severity = COLL_SEV_WARN;
	o = round_trip(&a);
	assert_schema(o);
	assert_int_equal(json_integer_value(json_object_get(o, "rank")), 12);
	assert_string_equal(json_string_value(json_object_get(o, "file")), "0x0000000000000abc");
	assert_null(json_object_get(o, "layer"));
	assert_string_equal(json_string_value(json_object_get(o, "severity")), "warn");
	json_decref(o);
	a.rank = COLL_RANK_NONE;
	a.file = 0;
	a.value = INFINITY; /* never in JSON: it has no infinity */
	o = round_trip(&a);
	assert_schema(o);
	assert_int_equal(json_object_size(o), 9);
	assert_true(json_number_value(json_object_get(o, "value")) == 0);
	json_decref(o);
}

static void test_json_of_engine_alerts(void **state)
{
	/* every record a real run produces parses and has the schema */
	struct coll_rules rules;
	coll_rules_default(&rules);
	struct coll_alerts *a;
	assert_int_equal(coll_alerts_new(&rules, &a), IOP_OK);
	struct synth s;
	synth_init(&s, 1);
	struct synth_job j;
	synth_job_default(&j, 16);
	j.files = 16;
	struct synth_log log = {0};
	synth_run(&s, a, &j, NULL, &log, 0, 40);
	j.slow_rank = 4;
	j.slow_factor = 10;
	j.spike_file = 9;
	j.spike_factor = 30;
	synth_run(&s, a, &j, NULL, &log, 40, 80);
	coll_alerts_finish(a, (uint64_t)(SYNTH_T0 + 80) * SYNTH_TICK, synth_collect, &log);
	assert_true(log.n >= 4);
	for (size_t i = 0; i < log.n; i++) {
		struct coll_alert x = log.v[i].a;
		x.message = log.v[i].message;
		json_t *o = round_trip(&x);
		assert_schema(o);
		json_decref(o);
	}
	size_t n;
	const struct coll_alert_record *h = coll_alerts_history(a, &n, NULL);
	assert_true(n >= 2);
	for (size_t i = 0; i < n; i++) {
		json_t *o = coll_alert_record_json(&h[i], NULL, NULL);
		assert_non_null(o);
		assert_non_null(json_object_get(o, "kind"));
		assert_non_null(json_object_get(o, "start"));
		assert_true(json_is_number(json_object_get(o, "end")));
		assert_non_null(json_object_get(o, "peak_value"));
		json_decref(o);
	}
	synth_log_free(&log);
	synth_free(&s);
	coll_alerts_free(a);
}

static void test_human_line(void **state)
{
	setenv("TZ", "UTC", 1);
	tzset();
	struct coll_alert a = {
	    .state = COLL_ALERT_START,
	    .kind = COLL_ALERT_STRAGGLER,
	    .severity = COLL_SEV_CRIT,
	    .start_ns = NOON_ISH - 12000000000u,
	    .t_ns = NOON_ISH,
	    .rank = 12,
	    .layer = IOP_LAYER_MPIIO,
	    .value = 6.2,
	    .baseline = 0.0066,
	    .message = "rank 12 mpiio write 41 ms/call = 6.2x median 6.6 ms of 63 peers"};
	char line[512];
	coll_alert_line(&a, line, sizeof(line));
	assert_string_equal(line, "12:03:10 CRIT straggler rank 12 mpiio write 41 ms/call = 6.2x "
	                          "median 6.6 ms of 63 peers (12 s)");
	a.state = COLL_ALERT_END;
	a.message = "rank 12 ended after 42 s, peak CRIT: mpiio write 41 ms/call";
	coll_alert_line(&a, line, sizeof(line));
	assert_string_equal(line, "12:03:10 END  straggler rank 12 ended after 42 s, peak CRIT: "
	                          "mpiio write 41 ms/call");
	a.state = COLL_ALERT_ONGOING;
	a.severity = COLL_SEV_WARN;
	a.message = "x";
	char small[16];
	int n = coll_alert_line(&a, small, sizeof(small));
	assert_true(n > (int)sizeof(small));
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, "12:03:10 WARN s", 15);
}

static void test_numbers(void **state)
{
	static const struct {
		void (*fmt)(char *, size_t, double);
		double x;
		const char *want;
	} cases[] = {
	    {coll_fmt_bytes, 512, "512 B"},
	    {coll_fmt_bytes, 1536, "1.5 KiB"},
	    {coll_fmt_bytes, 120.0 * 1048576, "120.0 MiB"},
	    {coll_fmt_secs, 850e-6, "850 us"},
	    {coll_fmt_secs, 4.04e-3, "4.0 ms"},
	    {coll_fmt_secs, 0.041, "41 ms"},
	    {coll_fmt_secs, 2.5, "2.5 s"},
	    {coll_fmt_secs, 42, "42 s"},
	    {coll_fmt_secs, 1800, "30 min"},
	    {coll_fmt_count, 950, "950"},
	    {coll_fmt_count, 4100, "4.1k"},
	    {coll_fmt_count, 12e6, "12.0M"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char b[32];
		cases[i].fmt(b, sizeof(b), cases[i].x);
		assert_string_equal(b, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_json_fields),
	    cmocka_unit_test(test_json_of_engine_alerts),
	    cmocka_unit_test(test_human_line),
	    cmocka_unit_test(test_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
