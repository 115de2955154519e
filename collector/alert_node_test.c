/* The node_pressure rule on ticks with node samples (node/nodes.h): it
 * starts after its minimum duration when a node's device is busy while the
 * job does I/O on it, names the node (by its host) and the device, and
 * says whose bytes keep it busy; it stays quiet when the job does no I/O
 * there, or the device is not busy. */
#include "test_util.h"

#include <string.h>

#include "alerts.h"
#include "hash.h"
#include "nodes.h"

#define SEC 1000000000ull
#define FS  "/var/tmp\text4\tvda"

struct seen {
	int starts;
	struct coll_alert first;
	char msg[512];
};

static void collect(void *arg, const struct coll_alert *a)
{
	struct seen *s = arg;
	if (a->state != COLL_ALERT_START || a->kind != COLL_ALERT_NODE_PRESSURE)
		return;
	if (!s->starts++) {
		s->first = *a;
		snprintf(s->msg, sizeof s->msg, "%s", a->message);
	}
}

static const char *name(void *arg, uint64_t hash)
{
	(void)arg;
	return hash == iop_hash_str(FS) ? FS : NULL;
}

static const char *host(void *arg, uint32_t node)
{
	(void)arg;
	return node == 77 ? "node077" : NULL;
}

/* 6 ticks of a node sample with the device util and the job's calls and
 * bytes a second there, the device moving dev_Bps. */
static struct seen run(uint32_t util_ppm, uint64_t job_ops, uint64_t job_Bps, uint64_t dev_Bps)
{
	struct coll_rules rules;
	coll_rules_default(&rules);
	struct coll_alerts *a;
	assert_int_equal(coll_alerts_new(&rules, &a), IOP_OK);
	struct coll_nodeset ns = {0};
	struct coll_node_sample x = {.node = 77, .flags = COLL_NODE_PSI | COLL_NODE_FULL,
	                             .psi_some_ppm = 400000, .psi_full_ppm = 300000, .n_fs = 1};
	x.fs[0] = (struct coll_node_fs){.fs = iop_hash_str(FS), .util_ppm = util_ppm,
	                                .write_Bps = dev_Bps, .job_ops = job_ops, .job_Bps = job_Bps};
	struct seen s = {0};
	for (int64_t t = 100; t < 106; t++) {
		x.t = t;
		assert_int_equal(coll_nodeset_put(&ns, &x), IOP_OK);
		struct coll_tick k;
		coll_tick_init(&k, t, SEC);
		struct coll_alert_ctx ctx = {.ranks = 4, .name = name, .nodes = &ns, .host = host};
		assert_int_equal(coll_alerts_tick(a, &k, &ctx, collect, &s), IOP_OK);
		coll_tick_free(&k);
	}
	coll_nodeset_free(&ns);
	coll_alerts_free(a);
	return s;
}

static void noisy_neighbour(void **state)
{
	(void)state;
	/* vda 97% busy, the job 12% of its bytes */
	struct seen s = run(970000, 500, 12 << 20, 100 << 20);
	assert_int_equal(s.starts, 1);
	assert_int_equal(s.first.node, 77);
	assert_int_equal(s.first.rank, COLL_RANK_NONE);
	assert_int_equal(s.first.severity, COLL_SEV_CRIT);
	assert_true(s.first.value > 0.969 && s.first.value < 0.971);
	assert_true(s.first.baseline > 0.119 && s.first.baseline < 0.121);
	/* the condition held 3 ticks (min_duration_s 3) before it started */
	assert_int_equal(s.first.t_ns, 103 * SEC);
	if (!strstr(s.msg, "node node077 vda (/var/tmp) 97% busy, io pressure 30% while the job "
	                   "does I/O there: the job's share of its bytes 12% (another job or "
	                   "process loads it)"))
		fail_msg("message: %s", s.msg);
}

static void own_io(void **state)
{
	(void)state;
	/* busy with the job's own bytes, and pressure (30%) below the device's */
	struct seen s = run(600000, 500, 90 << 20, 100 << 20);
	assert_int_equal(s.starts, 1);
	assert_int_equal(s.first.severity, COLL_SEV_WARN);
	if (!strstr(s.msg, "the job's share of its bytes 90% (mostly the job's own I/O)"))
		fail_msg("message: %s", s.msg);
}

static void quiet(void **state)
{
	(void)state;
	/* the job does no I/O on the node's devices: not the job's concern */
	assert_int_equal(run(970000, 0, 0, 100 << 20).starts, 0);
	/* a device 40% busy, pressure 30%: under the 50% warning */
	assert_int_equal(run(400000, 500, 1 << 20, 100 << 20).starts, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(noisy_neighbour),
		cmocka_unit_test(own_io),
		cmocka_unit_test(quiet),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
