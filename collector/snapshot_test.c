/* snapshot.h: a child encodes what the memory held when it was started,
 * while the parent changes it; its errors come back; one at a time; a
 * child that dies says so. */
#include "test_util.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "snapshot.h"

struct data {
	uint64_t v[4096];
	int hold_fd; /* >= 0: the child waits for a byte here first */
};

static void fill(const void *arg, struct iop_wcur *c)
{
	const struct data *d = arg;
	if (d->hold_fd >= 0) {
		char b;
		(void)!read(d->hold_fd, &b, 1);
	}
	for (size_t i = 0; i < 4096; i++)
		iop_put_u64le(c, d->v[i]);
}

static void taken_when_started(void **state)
{
	(void)state;
	static struct data d;
	int hold[2];
	assert_int_equal(pipe(hold), 0);
	d.hold_fd = hold[0];
	for (size_t i = 0; i < 4096; i++)
		d.v[i] = i * 3;
	struct coll_snapshot s = COLL_SNAPSHOT_INIT;
	assert_int_equal(coll_snapshot_start(&s, 1 << 20, fill, &d), IOP_OK);
	assert_true(coll_snapshot_fd(&s) >= 0);
	/* one at a time */
	assert_int_equal(coll_snapshot_start(&s, 1 << 20, fill, &d), IOP_ERR_STATE);
	const uint8_t *out;
	size_t len;
	/* not done: the child waits for its byte */
	assert_int_equal(coll_snapshot_collect(&s, false, &out, &len), IOP_ERR_TIMEOUT);
	for (size_t i = 0; i < 4096; i++) /* the parent goes on changing it */
		d.v[i] = 7;
	assert_int_equal(write(hold[1], "x", 1), 1);
	assert_int_equal(coll_snapshot_collect(&s, true, &out, &len), IOP_OK);
	assert_int_equal(len, 4096 * 8);
	for (size_t i = 0; i < 4096; i++)
		assert_int_equal(iop_load_u64le(out + 8 * i), i * 3);
	assert_int_equal(coll_snapshot_fd(&s), -1);
	assert_int_equal(coll_snapshot_collect(&s, false, &out, &len), IOP_ERR_STATE);
	/* again, now without waiting: the new values */
	d.hold_fd = -1;
	assert_int_equal(coll_snapshot_start(&s, 1 << 20, fill, &d), IOP_OK);
	assert_int_equal(coll_snapshot_collect(&s, true, &out, &len), IOP_OK);
	assert_int_equal(iop_load_u64le(out + 8 * 4095), 7);
	coll_snapshot_free(&s);
	close(hold[0]);
	close(hold[1]);
}

static void too_large(void **state)
{
	(void)state;
	static struct data d = {.hold_fd = -1};
	struct coll_snapshot s = COLL_SNAPSHOT_INIT;
	assert_int_equal(coll_snapshot_start(&s, 4096 * 8 - 1, fill, &d), IOP_OK);
	const uint8_t *out;
	size_t len;
	assert_int_equal(coll_snapshot_collect(&s, true, &out, &len), IOP_ERR_OVERSIZED);
	/* a larger mapping for a larger bound */
	assert_int_equal(coll_snapshot_start(&s, 4096 * 8, fill, &d), IOP_OK);
	assert_int_equal(coll_snapshot_collect(&s, true, &out, &len), IOP_OK);
	assert_int_equal(len, 4096 * 8);
	coll_snapshot_free(&s);
}

static void child_killed(void **state)
{
	(void)state;
	static struct data d;
	int hold[2];
	assert_int_equal(pipe(hold), 0);
	d.hold_fd = hold[0];
	struct coll_snapshot s = COLL_SNAPSHOT_INIT;
	assert_int_equal(coll_snapshot_start(&s, 1 << 20, fill, &d), IOP_OK);
	assert_int_equal(kill(s.pid, SIGKILL), 0);
	const uint8_t *out;
	size_t len;
	assert_int_equal(coll_snapshot_collect(&s, true, &out, &len), IOP_ERR_IO);
	/* a running child goes with free() */
	assert_int_equal(coll_snapshot_start(&s, 1 << 20, fill, &d), IOP_OK);
	pid_t pid = s.pid;
	coll_snapshot_free(&s);
	assert_int_equal(kill(pid, 0), -1); /* killed and reaped */
	close(hold[0]);
	close(hold[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(taken_when_started),
		cmocka_unit_test(too_large),
		cmocka_unit_test(child_killed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
