/* Unit test of libiopfault.so's configuration parser (fault_config.c):
 * rank lists, function sets, seconds, and what a bad value does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fault.h"

static const char *const *vars; /* NULL-terminated name, value pairs */

static const char *table_get(const char *name)
{
	for (size_t i = 0; vars[i]; i += 2)
		if (strcmp(vars[i], name) == 0)
			return vars[i + 1];
	return NULL;
}

static void read_cfg(struct fault_cfg *cfg, const char *const *table, bool launcher)
{
	vars = table;
	fault_cfg_read(cfg, table_get, launcher);
}

static void rank_lists(void **state)
{
	bool m;
	assert_true(fault_rank_in_list("3", 3, &m) && m);
	assert_true(fault_rank_in_list("3", 4, &m) && !m);
	assert_true(fault_rank_in_list("0,2-5,9", 4, &m) && m);
	assert_true(fault_rank_in_list("0,2-5,9", 6, &m) && !m);
	assert_true(fault_rank_in_list("0,2-5,9", 9, &m) && m);
	assert_true(fault_rank_in_list("7-7", 7, &m) && m);
	assert_false(fault_rank_in_list("", 0, &m));
	assert_false(fault_rank_in_list("5-2", 3, &m));
	assert_false(fault_rank_in_list("1,", 1, &m));
	assert_false(fault_rank_in_list("a", 1, &m));
	assert_false(fault_rank_in_list("-1", 1, &m));
	assert_false(fault_rank_in_list("99999999999", 1, &m));
}

static void function_sets(void **state)
{
	unsigned f;
	assert_true(fault_parse_fns("read", &f));
	assert_int_equal(f, FN_READ_CLASS);
	assert_true(fault_parse_fns("write,fsync", &f));
	assert_int_equal(f, FN_WRITE_CLASS | FN_FSYNC);
	assert_true(fault_parse_fns("pwrite", &f));
	assert_int_equal(f, FN_PWRITE);
	assert_true(fault_parse_fns("sync", &f));
	assert_int_equal(f, FN_FSYNC | FN_FDATASYNC);
	assert_true(fault_parse_fns("all", &f));
	assert_int_equal(f, FN_ALL);
	assert_false(fault_parse_fns("write,bogus", &f));
	assert_false(fault_parse_fns("writ", &f));
	assert_false(fault_parse_fns(",", &f));
}

static void seconds(void **state)
{
	uint64_t ns;
	assert_true(fault_parse_seconds("2", &ns));
	assert_int_equal(ns, 2000000000u);
	assert_true(fault_parse_seconds("0.25", &ns));
	assert_int_equal(ns, 250000000u);
	assert_false(fault_parse_seconds("-1", &ns));
	assert_false(fault_parse_seconds("1s", &ns));
	assert_false(fault_parse_seconds("nan", &ns));
	assert_false(fault_parse_seconds("", &ns));
}

/* IOPFAULT_EPOCH_S: a Unix time; the window then counts from it for
 * every process, and the description says so; or "first". */
static void epoch(void **state)
{
	uint64_t ns;
	assert_true(fault_parse_epoch("1795319888.5", &ns));
	assert_int_equal(ns, 1795319888500000000ull);
	assert_false(fault_parse_epoch("8", &ns)); /* seconds, not a time */
	assert_false(fault_parse_epoch("-1795319888", &ns));
	assert_false(fault_parse_epoch("1e12", &ns));
	assert_false(fault_parse_epoch("now", &ns));
	static const char *const env[] = {"IOPFAULT_DELAY_US", "10", "IOPFAULT_EPOCH_S",
	                                  "1795319888", "IOPFAULT_AFTER_S", "8", NULL};
	struct fault_cfg cfg;
	read_cfg(&cfg, env, false);
	assert_true(cfg.active);
	assert_int_equal(cfg.epoch_ns, 1795319888000000000ull);
	char text[1024];
	assert_true(fault_cfg_describe(&cfg, text, sizeof text) > 0);
	assert_non_null(strstr(text, "window 8.000 s .. end of process (from 1795319888.000)"));
	fault_cfg_free(&cfg);
	static const char *const bad[] = {"IOPFAULT_DELAY_US", "10", "IOPFAULT_EPOCH_S", "8", NULL};
	read_cfg(&cfg, bad, false);
	assert_true(cfg.bad);
	assert_false(cfg.active);
	fault_cfg_free(&cfg);
	/* first: from each process's first selected call */
	static const char *const first[] = {
	    "IOPFAULT_DELAY_US", "10", "IOPFAULT_EPOCH_S", "first", "IOPFAULT_AFTER_S", "8", NULL};
	read_cfg(&cfg, first, false);
	assert_true(cfg.active);
	assert_true(cfg.epoch_first);
	assert_int_equal(cfg.epoch_ns, 0);
	assert_true(fault_cfg_describe(&cfg, text, sizeof text) > 0);
	assert_non_null(strstr(text, "end of process (from the first selected call)"));
	fault_cfg_free(&cfg);
}

static void slow_rank_selected(void **state)
{
	static const char *const env[] = {
	    "OMPI_COMM_WORLD_RANK", "2", "IOPFAULT_RANK", "1-2", "IOPFAULT_DELAY_US", "1500", NULL};
	struct fault_cfg cfg;
	read_cfg(&cfg, env, false);
	assert_true(cfg.active);
	assert_int_equal(cfg.rank, 2);
	assert_int_equal(cfg.delay_ns, 1500000u);
	assert_int_equal(cfg.delay_fns, FN_READ_CLASS | FN_WRITE_CLASS);
	assert_int_equal(cfg.until_ns, FAULT_NEVER);
	char text[1024];
	assert_true(fault_cfg_describe(&cfg, text, sizeof text) > 0);
	assert_non_null(strstr(text, "delay 1500 us on read,write"));
	fault_cfg_free(&cfg);
}

static void other_rank_and_launcher_untouched(void **state)
{
	static const char *const env[] = {
	    "PMI_RANK", "0", "IOPFAULT_RANK", "1", "IOPFAULT_DELAY_US", "100", NULL};
	static const char *const all[] = {"IOPFAULT_DELAY_US", "100", NULL};
	struct fault_cfg cfg;
	read_cfg(&cfg, env, false);
	assert_false(cfg.active);
	assert_false(cfg.bad);
	read_cfg(&cfg, all, true); /* every rank, but a launcher */
	assert_false(cfg.active);
	read_cfg(&cfg, all, false); /* no rank variable: rank 0, every rank */
	assert_true(cfg.active);
	assert_false(cfg.rank_from_env);
}

static void shim_rank_override_first(void **state)
{
	static const char *const env[] = {
	    "IOPULSE_RANK", "5", "OMPI_COMM_WORLD_RANK", "1", "RANK", "x", "IOPFAULT_HANG",
	    "fsync",        NULL};
	struct fault_cfg cfg;
	read_cfg(&cfg, env, false);
	assert_int_equal(cfg.rank, 5);
	assert_true(cfg.active);
	assert_int_equal(cfg.hang_fns, FN_FSYNC);
	assert_int_equal(cfg.hang_ns, FAULT_NEVER);
}

static void window_and_files(void **state)
{
	static const char *const env[] = {"IOPFAULT_DELAY_US",
	                                  "10",
	                                  "IOPFAULT_AFTER_S",
	                                  "1.5",
	                                  "IOPFAULT_UNTIL_S",
	                                  "3",
	                                  "IOPFAULT_FILE",
	                                  "/tmp/*/a.dat::*.h5",
	                                  "IOPFAULT_HANG",
	                                  "pwrite",
	                                  "IOPFAULT_HANG_S",
	                                  "2",
	                                  NULL};
	struct fault_cfg cfg;
	read_cfg(&cfg, env, false);
	assert_true(cfg.active);
	assert_int_equal(cfg.after_ns, 1500000000u);
	assert_int_equal(cfg.until_ns, 3000000000u);
	assert_int_equal(cfg.hang_ns, 2000000000u);
	assert_int_equal(cfg.n_globs, 2);
	assert_string_equal(cfg.globs[0], "/tmp/*/a.dat");
	assert_string_equal(cfg.globs[1], "*.h5");
	fault_cfg_free(&cfg);
}

static void bad_values_turn_everything_off(void **state)
{
	static const char *const cases[][7] = {
	    {"IOPFAULT_DELAY_US", "10", "IOPFAULT_RANK", "1-", NULL},
	    {"IOPFAULT_DELAY_US", "-10", NULL},
	    {"IOPFAULT_DELAY_US", "10", "IOPFAULT_OPS", "writes", NULL},
	    {"IOPFAULT_HANG", "write", "IOPFAULT_HANG_S", "forever", NULL},
	    {"IOPFAULT_DELAY_US", "10", "IOPFAULT_AFTER_S", "2", "IOPFAULT_UNTIL_S", "1", NULL},
	    {"IOPFAULT_DELAY_US", "10", "IOPFAULT_FILE", "1:2:3:4:5:6:7:8:9", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct fault_cfg cfg;
		read_cfg(&cfg, cases[i], false);
		assert_true(cfg.bad);
		assert_false(cfg.active);
		char text[512];
		fault_cfg_describe(&cfg, text, sizeof text);
		assert_non_null(strstr(text, "no fault injected"));
		fault_cfg_free(&cfg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(rank_lists),
	    cmocka_unit_test(function_sets),
	    cmocka_unit_test(seconds),
	    cmocka_unit_test(epoch),
	    cmocka_unit_test(slow_rank_selected),
	    cmocka_unit_test(other_rank_and_launcher_untouched),
	    cmocka_unit_test(shim_rank_override_first),
	    cmocka_unit_test(window_and_files),
	    cmocka_unit_test(bad_values_turn_everything_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
