/* Where an alert lands (alert_where.h), on a state built from a delta
 * as the root's is: rank 3's file on a disk, rank 5's on an NFS mount,
 * their nodes' samples. The context names the file system of the file
 * the rank spent most time in; the device's utilisation (busy or idle) or
 * the NFS calls' round trip, and the node's I/O pressure; nothing for a
 * kind that does not say where, or a rank without files. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "alert_where.h"
#include "hash.h"

#define SEC  1000000000ull
#define DISK "/var/tmp\text4\tvda"
#define NFS  "/home\tnfs4\tsrv:/home"

static void file_on(struct coll_delta *d, const char *path, const char *fs)
{
	uint64_t f = iop_hash_str(path), id = iop_hash_str(fs);
	assert_int_equal(coll_delta_add_name(d, f, IOP_NAME_FILE, path, (uint32_t)strlen(path)),
	                 IOP_OK);
	char hex[17];
	snprintf(hex, sizeof hex, "%016llx", (unsigned long long)id);
	assert_int_equal(coll_delta_add_name(d, f ^ COLL_FILE_FS_SALT, COLL_NAME_FILE_FS, hex, 16),
	                 IOP_OK);
}

static void rank_on(struct coll_delta *d, uint32_t rank, uint32_t node, const char *path,
                    uint64_t time_ns)
{
	struct coll_proc p = {.t_ns = 100 * SEC, .rank = rank, .node = node, .pid = 100 + rank,
	                      .state = COLL_PROC_JOINED};
	assert_int_equal(coll_delta_add_proc(d, &p), IOP_OK);
	struct coll_counter c = {.file = iop_hash_str(path), .ops = 10, .bytes = 40960,
	                         .time_ns = time_ns, .rank = rank, .node = node, .pid = 100 + rank,
	                         .layer = IOP_LAYER_POSIX, .cls = IOP_CLASS_WRITE};
	assert_int_equal(coll_delta_add_counter(d, &c), IOP_OK);
}

static void make_state(struct coll_state *s, uint32_t disk_util_ppm)
{
	struct coll_delta d;
	coll_delta_init(&d, 100, SEC);
	assert_int_equal(coll_delta_add_name(&d, iop_hash_str(DISK), COLL_NAME_FS, DISK, strlen(DISK)),
	                 IOP_OK);
	assert_int_equal(coll_delta_add_name(&d, iop_hash_str(NFS), COLL_NAME_FS, NFS, strlen(NFS)),
	                 IOP_OK);
	file_on(&d, "/var/tmp/r3", DISK);
	file_on(&d, "/var/tmp/small", DISK);
	file_on(&d, "/home/r5", NFS);
	rank_on(&d, 3, 11, "/var/tmp/r3", 5 * SEC);
	rank_on(&d, 3, 11, "/var/tmp/small", SEC / 10); /* less time: not the one */
	rank_on(&d, 5, 12, "/home/r5", 2 * SEC);
	struct coll_node_sample a = {.t = 100, .node = 11, .flags = COLL_NODE_PSI | COLL_NODE_FULL,
	                             .psi_some_ppm = 700000, .psi_full_ppm = 600000, .n_fs = 1};
	a.fs[0] = (struct coll_node_fs){.fs = iop_hash_str(DISK), .util_ppm = disk_util_ppm};
	struct coll_node_sample b = {.t = 100, .node = 12, .flags = COLL_NODE_PSI,
	                             .psi_some_ppm = 100000, .n_fs = 1};
	b.fs[0] = (struct coll_node_fs){.fs = iop_hash_str(NFS), .kind = COLL_NODE_FS_NET,
	                                .wait_us = 4000};
	assert_int_equal(coll_nodeset_put(&d.nodes, &a), IOP_OK);
	assert_int_equal(coll_nodeset_put(&d.nodes, &b), IOP_OK);
	coll_state_init(s, SEC, NULL);
	assert_int_equal(coll_state_apply(s, &d), IOP_OK);
	coll_delta_free(&d);
}

static void line_of(const struct coll_alert_where *w, char *buf, size_t cap)
{
	buf[0] = 0;
	(void)coll_alert_where_line(w, buf, 0, cap);
}

static void where(void **state)
{
	(void)state;
	struct coll_state s;
	make_state(&s, 970000);
	struct coll_alert a = {.kind = COLL_ALERT_STRAGGLER, .rank = 3, .layer = IOP_LAYER_POSIX};
	struct coll_alert_where w;
	char line[256];
	assert_true(coll_alert_where(&a, &s, &w));
	line_of(&w, line, sizeof line);
	assert_string_equal(line, " on /var/tmp (ext4, vda 97% busy, io pressure 60%)");
	json_t *o = coll_alert_where_json(&w);
	char *text = json_dumps(o, COLL_ALERT_JSON_FLAGS | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"device\":\"vda\",\"device_util\":0.97,\"fs_type\":\"ext4\","
	                          "\"io_pressure_full\":0.6,\"mount\":\"/var/tmp\"}");
	free(text);
	json_decref(o);
	/* rank 5 on NFS: the round trip, and no pressure "full" known */
	a.rank = 5;
	assert_true(coll_alert_where(&a, &s, &w));
	line_of(&w, line, sizeof line);
	assert_string_equal(line, " on /home (nfs4, srv:/home rtt 4.0 ms)");
	/* a kind that does not say where; a rank without files */
	a.kind = COLL_ALERT_SMALL_IO;
	assert_false(coll_alert_where(&a, &s, &w));
	a.kind = COLL_ALERT_HUNG_IO;
	a.rank = 9;
	assert_false(coll_alert_where(&a, &s, &w));
	coll_state_free(&s);
	/* the disk idle: said so */
	make_state(&s, 4000);
	a.rank = 3;
	assert_true(coll_alert_where(&a, &s, &w));
	line_of(&w, line, sizeof line);
	assert_string_equal(line, " on /var/tmp (ext4, vda idle, io pressure 60%)");
	coll_state_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(where),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
