/* Unit tests for the rule table: the defaults are sane, `--rules` JSON
 * overrides change exactly what they name, and every mistake in a rules
 * file is refused with a message that names it, leaving the table as it was. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alert_synth.h"
#include "rules.h"
#include "test_util.h"

static void test_defaults(void **state)
{
	struct coll_rules r;
	coll_rules_default(&r);
	assert_true(r.max_files > 0);
	for (unsigned k = 0; k < COLL_ALERT__COUNT; k++) {
		const struct coll_rule *x = &r.rule[k];
		assert_true(x->enabled);
		assert_true(x->warn > 0 && x->warn <= x->crit);
		enum coll_alert_kind back;
		assert_true(coll_alert_kind_from_name(coll_alert_kind_name(k), &back));
		assert_int_equal(back, k);
	}
	/* the table is positional: a few columns checked by name */
	assert_true(r.rule[COLL_ALERT_STRAGGLER].min_z == 3.5);
	assert_true(r.rule[COLL_ALERT_STRAGGLER].pair_ratio == 5);
	assert_int_equal(r.rule[COLL_ALERT_THROUGHPUT_DROP].baseline_n, 30);
	assert_int_equal(r.rule[COLL_ALERT_IMBALANCE].min_bytes, 64 << 20);
	assert_int_equal(r.rule[COLL_ALERT_RANDOM_IO].max_mean_bytes, 1 << 20);
	assert_true(r.rule[COLL_ALERT_METADATA].min_time_s == 1);
	assert_true(isinf(r.rule[COLL_ALERT_NO_COLLECTIVE].crit));
	assert_string_equal(coll_alert_kind_name(COLL_ALERT_MONITOR_LOSS), "monitor_loss");
	assert_string_equal(coll_alert_kind_name(COLL_ALERT__COUNT), "?");
	assert_int_equal(coll_alert_kind_scope(COLL_ALERT_STRAGGLER), COLL_SCOPE_RANK);
	assert_int_equal(coll_alert_kind_scope(COLL_ALERT_IMBALANCE), COLL_SCOPE_JOB);
}

static void test_overrides(void **state)
{
	struct coll_rules r, d;
	coll_rules_default(&r);
	coll_rules_default(&d);
	char err[256] = "";
	assert_int_equal(coll_rules_parse_json(&r,
	                                       "{\"straggler\": {\"warn\": 4, \"crit\": 12, "
	                                       "\"min_duration_s\": 5, \"min_z\": 5},"
	                                       " \"small_io\": {\"enabled\": false, "
	                                       "\"min_ops\": 5000},"
	                                       " \"no_collective\": {\"crit\": null}}",
	                                       err, sizeof(err)),
	                 IOP_OK);
	assert_true(r.rule[COLL_ALERT_STRAGGLER].warn == 4);
	assert_true(r.rule[COLL_ALERT_STRAGGLER].crit == 12);
	assert_true(r.rule[COLL_ALERT_STRAGGLER].min_duration_s == 5);
	assert_true(r.rule[COLL_ALERT_STRAGGLER].min_z == 5);
	assert_false(r.rule[COLL_ALERT_SMALL_IO].enabled);
	assert_int_equal(r.rule[COLL_ALERT_SMALL_IO].min_ops, 5000);
	assert_true(isinf(r.rule[COLL_ALERT_NO_COLLECTIVE].crit));
	/* nothing else moved */
	assert_memory_equal(&r.rule[COLL_ALERT_HUNG_IO], &d.rule[COLL_ALERT_HUNG_IO],
	                    sizeof(struct coll_rule));
	assert_true(r.rule[COLL_ALERT_STRAGGLER].min_interval_s ==
	            d.rule[COLL_ALERT_STRAGGLER].min_interval_s);
}

/* The text is refused with e, the message contains want, r is unchanged. */
static void refused(const char *text, enum iop_err e, const char *want)
{
	struct coll_rules r, d;
	coll_rules_default(&r);
	coll_rules_default(&d);
	char err[512] = "";
	assert_int_equal(coll_rules_parse_json(&r, text, err, sizeof(err)), e);
	if (!strstr(err, want))
		fail_msg("error '%s' does not say '%s'", err, want);
	assert_memory_equal(&r, &d, sizeof(r));
}

static void test_mistakes(void **state)
{
	refused("{\"stragler\": {\"warn\": 4}}", IOP_ERR_INVAL, "unknown rule 'stragler'");
	refused("{\"stragler\": {\"warn\": 4}}", IOP_ERR_INVAL,
	        "(known: straggler, throughput_drop, latency_spike, hung_io, imbalance, small_io, "
	        "random_io, metadata, stdio_share, no_collective, fragmentation, monitor_loss, late_arrival, "
	        "node_pressure)");
	refused("{\"straggler\": {\"wran\": 4}}", IOP_ERR_INVAL,
	        "rule 'straggler' has no key 'wran'");
	refused("{\"hung_io\": {\"min_bytes\": 4}}", IOP_ERR_INVAL,
	        "rule 'hung_io' has no key 'min_bytes'");
	refused("{\"straggler\": {\"warn\": \"4\"}}", IOP_ERR_INVAL,
	        "straggler.warn must be a number");
	refused("{\"straggler\": {\"enabled\": 1}}", IOP_ERR_INVAL, "must be true or false");
	refused("{\"straggler\": {\"min_duration_s\": -1}}", IOP_ERR_INVAL,
	        "straggler.min_duration_s is out of range");
	refused("{\"small_io\": {\"min_ops\": 2.5}}", IOP_ERR_INVAL,
	        "small_io.min_ops is out of range");
	/* the first rule is fine, the second is not: neither is applied */
	refused("{\"small_io\": {\"warn\": 0.2}, \"imbalance\": {\"warn\": 9}}", IOP_ERR_INVAL,
	        "imbalance has warn above crit");
	refused("{\"straggler\": 4}", IOP_ERR_INVAL, "'straggler' must be an object");
	refused("[1, 2]", IOP_ERR_INVAL, "expected an object");
	refused("{\"straggler\": {\"warn\": 4,}}", IOP_ERR_MALFORMED, "line 1");
	refused("{\"straggler\": {\"warn\": 4}, \"straggler\": {}}", IOP_ERR_MALFORMED, "line 1");
}

static void test_load_file(void **state)
{
	char path[] = "/tmp/iop_rules_test_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "{\n  \"hung_io\": {\"warn\": 60, \"crit\": 300}\n}\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	struct coll_rules r;
	coll_rules_default(&r);
	char err[256] = "";
	assert_int_equal(coll_rules_load_json(&r, path, err, sizeof(err)), IOP_OK);
	assert_true(r.rule[COLL_ALERT_HUNG_IO].warn == 60);
	assert_true(r.rule[COLL_ALERT_HUNG_IO].crit == 300);
	unlink(path);
	assert_int_equal(coll_rules_load_json(&r, path, err, sizeof(err)), IOP_ERR_IO);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "No such file"));
}

/* Straggler starts in an 8-rank job with one rank 10x slower? */
static size_t straggler_alerts(const struct coll_rules *rules)
{
	struct coll_alerts *a;
	assert_int_equal(coll_alerts_new(rules, &a), IOP_OK);
	struct synth s;
	synth_init(&s, 11);
	struct synth_job j;
	synth_job_default(&j, 8);
	struct synth_log log = {0};
	synth_run(&s, a, &j, NULL, &log, 0, 30);
	j.slow_rank = 2;
	j.slow_factor = 10;
	synth_run(&s, a, &j, NULL, &log, 30, 50);
	size_t n = synth_count(&log, COLL_ALERT_STRAGGLER, COLL_ALERT_START);
	synth_log_free(&log);
	synth_free(&s);
	coll_alerts_free(a);
	return n;
}

static void test_override_changes_behaviour(void **state)
{
	struct coll_rules r;
	coll_rules_default(&r);
	assert_int_equal(straggler_alerts(&r), 1);
	char err[256];
	assert_int_equal(coll_rules_parse_json(&r, "{\"straggler\":{\"warn\":20,\"crit\":40}}", err,
	                                       sizeof(err)),
	                 IOP_OK);
	assert_int_equal(straggler_alerts(&r), 0);
	coll_rules_default(&r);
	assert_int_equal(
	    coll_rules_parse_json(&r, "{\"straggler\":{\"enabled\":false}}", err, sizeof(err)),
	    IOP_OK);
	assert_int_equal(straggler_alerts(&r), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_overrides),
	    cmocka_unit_test(test_mistakes),
	    cmocka_unit_test(test_load_file),
	    cmocka_unit_test(test_override_changes_behaviour),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
