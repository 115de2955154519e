/* The summary's files (summary_files.h): the top entries by bytes and by
 * time, the rest in an "other" entry per layer whose sums keep each
 * layer's entries adding up to its totals; every entry with "all". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "summary.h"
#include "summary_files.h"
#include "test_util.h"

#define SEC 1000000000ull
#define NF  30

/* 30 POSIX files, file i written by rank i % 4 with (i + 1) * 1000 bytes
 * in (30 - i) ms (the most bytes, the least time), and 3 MPI-IO entries
 * of 10 bytes in 1 us by ranks 5 and 6. */
static void job(struct coll_state *s)
{
	coll_state_init(s, SEC, NULL);
	struct coll_delta d;
	coll_delta_init(&d, 1, SEC);
	for (uint32_t i = 0; i < NF; i++) {
		char path[32];
		int len = snprintf(path, sizeof path, "/d/f%02u", i);
		uint64_t h = iop_hash_str(path);
		assert_int_equal(coll_delta_add_name(&d, h, IOP_NAME_FILE, path, (uint32_t)len), IOP_OK);
		struct coll_counter c = {.file = h, .ops = 2, .bytes = (i + 1) * 1000ull,
		                         .time_ns = (NF - i) * 1000000ull, .rank = i % 4,
		                         .pid = 100 + i % 4, .layer = IOP_LAYER_POSIX,
		                         .cls = IOP_CLASS_WRITE};
		assert_int_equal(coll_delta_add_counter(&d, &c), IOP_OK);
		if (i < 3) {
			c = (struct coll_counter){.file = h, .ops = 1, .bytes = 10, .time_ns = 1000,
			                          .rank = 5 + i % 2, .pid = 200 + i % 2,
			                          .layer = IOP_LAYER_MPIIO, .cls = IOP_CLASS_READ};
			assert_int_equal(coll_delta_add_counter(&d, &c), IOP_OK);
		}
	}
	assert_int_equal(coll_state_apply(s, &d), IOP_OK);
	coll_delta_free(&d);
}

static json_int_t num(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static void top_by_bytes_and_time(void **st)
{
	(void)st;
	struct coll_state s;
	job(&s);
	json_t *a = coll_summary_files(&s, 5);
	/* files 29..25 (bytes), 0..4 (time), then POSIX and MPI-IO "other" */
	assert_int_equal(json_array_size(a), 12);
	for (size_t i = 0; i < 10; i++) {
		json_t *e = json_array_get(a, i);
		const char *path = json_string_value(json_object_get(e, "path"));
		unsigned f = (unsigned)atoi(path + 4);
		assert_true(f >= 25 || f <= 4);
		assert_string_equal(json_string_value(json_object_get(e, "kind")), "file");
		assert_int_equal(num(e, "write_bytes"), (f + 1) * 1000);
		assert_true(json_real_value(json_object_get(e, "time_s")) == (NF - f) / 1e3);
		if (i)
			assert_true(num(e, "write_bytes") <
			            num(json_array_get(a, i - 1), "write_bytes")); /* by bytes */
	}
	json_t *po = json_array_get(a, 10), *mo = json_array_get(a, 11);
	assert_string_equal(json_string_value(json_object_get(po, "kind")), "other");
	assert_string_equal(json_string_value(json_object_get(po, "layer")), "posix");
	assert_int_equal(num(po, "files"), 20);
	json_int_t want = 0;
	for (unsigned f = 5; f < 25; f++)
		want += (f + 1) * 1000;
	assert_int_equal(num(po, "write_bytes"), want);
	assert_int_equal(num(po, "write_ops"), 40);
	assert_int_equal(num(po, "ranks"), 4);
	assert_true(json_is_null(json_object_get(po, "mount")));
	assert_string_equal(json_string_value(json_object_get(mo, "layer")), "mpiio");
	assert_int_equal(num(mo, "files"), 3);
	assert_int_equal(num(mo, "read_bytes"), 30);
	assert_int_equal(num(mo, "read_ops"), 3);
	assert_int_equal(num(mo, "ranks"), 2);
	json_decref(a);
	/* the default (1000) and all: every entry, no "other" */
	for (int all = 0; all < 2; all++) {
		a = coll_summary_files(&s, all ? COLL_SUMMARY_FILES_ALL : 0);
		assert_int_equal(json_array_size(a), NF + 3);
		for (size_t i = 0; i < json_array_size(a); i++)
			assert_string_not_equal(json_string_value(json_object_get(json_array_get(a, i),
			                                                          "kind")), "other");
		json_decref(a);
	}
	/* through the summary record: each layer's entries add up to its totals */
	struct coll_job_info j = {.id = 1, .start_ns = SEC, .end_ns = 2 * SEC, .tick_ns = SEC,
	                          .summary_files = 2};
	json_t *sum = coll_summary_json(&s, &j, NULL);
	json_t *files = json_object_get(sum, "files"), *layers = json_object_get(sum, "layers");
	assert_int_equal(json_array_size(files), 4 + 2); /* 2 + 2 POSIX, an "other" a layer */
	for (int l = 0; l < IOP_LAYER__COUNT; l++) {
		json_int_t rd = 0, wr = 0;
		for (size_t i = 0; i < json_array_size(files); i++) {
			json_t *e = json_array_get(files, i);
			if (!strcmp(json_string_value(json_object_get(e, "layer")), iop_layer_name(l))) {
				rd += num(e, "read_bytes");
				wr += num(e, "write_bytes");
			}
		}
		json_t *lo = json_object_get(layers, iop_layer_name(l));
		assert_int_equal(rd, num(lo, "read_bytes"));
		assert_int_equal(wr, num(lo, "write_bytes"));
	}
	json_decref(sum);
	coll_state_free(&s);
}

static void parse(void **st)
{
	(void)st;
	uint32_t m = 7;
	assert_int_equal(coll_parse_summary_files("all", &m), 0);
	assert_int_equal(m, COLL_SUMMARY_FILES_ALL);
	assert_int_equal(coll_parse_summary_files("1", &m), 0);
	assert_int_equal(m, 1);
	assert_int_equal(coll_parse_summary_files("16777216", &m), 0);
	assert_int_equal(m, 16777216);
	static const char *const bad[] = {"", "0", "-3", "x", "12k", "16777217", "ALL"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(coll_parse_summary_files(bad[i], &m), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(top_by_bytes_and_time),
	    cmocka_unit_test(parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
