/* The tree link over real nanomsg sockets (ipc:// in a temporary
 * directory): deltas acknowledged in order, kept while the parent is
 * away, a restarted parent made whole by the resync, a wrong key refused,
 * the queue bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock.h"
#include "link.h"
#include "state.h"

#define JOB 0x1234abcdull
#define SEC 1000000000ull
#define T0  (1700000000ull * SEC)

static char dir[64], url[128];

static struct iop_key key_of(uint8_t b)
{
	struct iop_key k;
	memset(k.b, b, sizeof k.b);
	return k;
}

/* Applies what a downlink receives to a window state, as a root does. */
struct parent {
	struct coll_downlink *dl;
	struct coll_state s;
	unsigned deltas;
};

static void on_delta(void *arg, uint64_t sender, struct coll_delta *d)
{
	struct parent *p = arg;
	assert_true(sender != 0); /* the uplink's id, random when not given */
	assert_int_equal(coll_state_apply(&p->s, d), IOP_OK);
	p->deltas++;
}

static void parent_up(struct parent *p, uint8_t key)
{
	memset(p, 0, sizeof(*p));
	struct iop_key k = key_of(key);
	const char *urls[] = {url};
	assert_int_equal(coll_downlink_new(urls, 1, JOB, &k, &p->dl, NULL), IOP_OK);
	struct coll_history_cfg h;
	coll_history_cfg_default(&h, SEC);
	coll_state_init(&p->s, SEC, &h);
}

static void parent_down(struct parent *p)
{
	coll_downlink_free(p->dl);
	coll_state_free(&p->s);
}

static struct coll_uplink *child(uint8_t key, uint32_t max_queue)
{
	struct coll_uplink_cfg c = {.url = url, .job_id = JOB, .key = key_of(key),
	                            .max_queue = max_queue};
	struct coll_uplink *u;
	assert_int_equal(coll_uplink_new(&c, &u), IOP_OK);
	return u;
}

/* Tick t of one rank of one process: 1 write of t+1 KiB, and the process's
 * cumulative counter after it. */
static void send_tick(struct coll_uplink *u, int64_t t, uint64_t *cum)
{
	struct coll_delta d;
	coll_delta_init(&d, t, SEC);
	struct coll_key k = coll_key_rank(3, 0, 1);
	struct coll_cell *c;
	assert_int_equal(coll_tick_row(&d.tick, &k, &c), IOP_OK);
	coll_cell_add_call(c, 1000, (uint64_t)(t + 1) * 1024, true, false);
	*cum += (uint64_t)(t + 1) * 1024;
	struct coll_counter ctr = {.file = 77, .ops = (uint64_t)t + 1, .bytes = *cum, .rank = 3,
	                           .node = 9, .pid = 100, .layer = 0, .cls = 1};
	assert_int_equal(coll_delta_add_counter(&d, &ctr), IOP_OK);
	if (t == 0)
		assert_int_equal(coll_delta_add_name(&d, 77, 1, "/data/out.dat", 13), IOP_OK);
	assert_int_equal(coll_uplink_send(u, &d), IOP_OK);
	coll_delta_free(&d);
}

/* Pumps both ends until the uplink is idle or 5 s pass. */
static bool settle(struct coll_uplink *u, struct parent *p)
{
	for (int i = 0; i < 5000; i++) {
		coll_uplink_pump(u, iop_real_ns());
		if (p && p->dl)
			coll_downlink_pump(p->dl, 64, on_delta, p);
		if (coll_uplink_idle(u))
			return true;
		usleep(1000);
	}
	return false;
}

static uint64_t total_bytes(const struct coll_state *s)
{
	uint64_t n = 0;
	for (struct coll_totals_it it = {.s = s}; coll_totals_next(&it);)
		n += it.cell.bytes;
	return n;
}

static void in_order_and_acked(void **state)
{
	(void)state;
	struct parent p;
	parent_up(&p, 1);
	struct coll_uplink *u = child(1, 0);
	uint64_t cum = 0;
	for (int64_t t = 0; t < 5; t++)
		send_tick(u, t, &cum);
	assert_true(settle(u, &p));
	struct coll_uplink_stats st;
	coll_uplink_stats(u, &st);
	assert_int_equal(st.acked, 5);
	assert_int_equal(p.deltas, 5);
	assert_int_equal(total_bytes(&p.s), cum);
	assert_string_equal(coll_names_text(&p.s.names, 77), "/data/out.dat");
	coll_uplink_free(u);
	parent_down(&p);
}

static void parent_late_then_restarted(void **state)
{
	(void)state;
	struct coll_uplink *u = child(1, 0);
	uint64_t cum = 0;
	for (int64_t t = 0; t < 3; t++)
		send_tick(u, t, &cum);
	for (int i = 0; i < 50; i++) {
		coll_uplink_pump(u, iop_real_ns());
		usleep(1000);
	}
	assert_false(coll_uplink_idle(u)); /* nobody to take them */
	struct parent p;
	parent_up(&p, 1);
	assert_true(settle(u, &p));
	assert_int_equal(p.deltas, 3);
	assert_int_equal(total_bytes(&p.s), cum);
	/* the parent restarts: the new one learns everything from the resync */
	parent_down(&p);
	parent_up(&p, 1);
	send_tick(u, 3, &cum);
	assert_true(settle(u, &p));
	struct coll_uplink_stats st;
	coll_uplink_stats(u, &st);
	assert_int_equal(st.resyncs, 1);
	assert_int_equal(total_bytes(&p.s), cum);
	assert_string_equal(coll_names_text(&p.s.names, 77), "/data/out.dat");
	coll_uplink_free(u);
	parent_down(&p);
}

static void wrong_key_refused(void **state)
{
	(void)state;
	struct parent p;
	parent_up(&p, 1);
	struct coll_uplink *u = child(2, 0);
	uint64_t cum = 0;
	send_tick(u, 0, &cum);
	struct coll_downlink_stats ds = {0};
	for (int i = 0; i < 3000 && !ds.rejected; i++) {
		coll_uplink_pump(u, iop_real_ns());
		coll_downlink_pump(p.dl, 64, on_delta, &p);
		coll_downlink_stats(p.dl, &ds);
		usleep(1000);
	}
	assert_true(ds.rejected >= 1);
	assert_int_equal(p.deltas, 0);
	struct coll_uplink_stats st;
	coll_uplink_stats(u, &st);
	assert_int_equal(st.acked, 0); /* an ack it cannot check is not taken */
	coll_uplink_free(u);
	parent_down(&p);
}

static void queue_bounded(void **state)
{
	(void)state;
	struct coll_uplink *u = child(1, 4);
	uint64_t cum = 0;
	for (int64_t t = 0; t < 20; t++) {
		send_tick(u, t, &cum);
		coll_uplink_pump(u, iop_real_ns());
	}
	struct coll_uplink_stats st;
	coll_uplink_stats(u, &st);
	assert_true(st.waiting <= 6);
	assert_true(st.dropped >= 14);
	/* what was dropped comes back as counters in the resync */
	struct parent p;
	parent_up(&p, 1);
	assert_true(settle(u, &p));
	assert_int_equal(total_bytes(&p.s), cum);
	coll_uplink_free(u);
	parent_down(&p);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/iop-link-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(url, sizeof url, "ipc://%s/up.ipc", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof path, "%s/up.ipc", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(in_order_and_acked, setup, teardown),
		cmocka_unit_test_setup_teardown(parent_late_then_restarted, setup, teardown),
		cmocka_unit_test_setup_teardown(wrong_key_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(queue_bounded, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
