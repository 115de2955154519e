/* End-to-end test of iop-loadgen against the real receiver, iop-sink (both
 * binaries' paths are compiled in): what the generator says it sent must be
 * exactly what the sink decoded, rank by rank (cumulative counters, event
 * sums, frames, process stats, FINAL frames, nesting), and it must keep the
 * requested rate within 10 %.
 *
 *   exact_totals_two_urls  4 ranks, 2 threads, 2 nodes, the mixed workload,
 *                          2 s, spread over two sinks (two URLs), blocking
 *                          sends so that nothing is refused
 *   slow_rank              a straggler's calls take --slow-factor times longer
 *   refused_without_peer   NN_DONTWAIT into nobody: refusals and drops counted
 *   collectives            --coll-per-s: every rank's collective calls reach
 *                          the sink, the same number on every rank
 *
 * Every wait is bounded: the sinks have --timeout-s, and the children are
 * killed at a deadline. */
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "clock.h"
#include "test_util.h"

#define WAIT_S 30

struct run {
	char dir[64], key[IOP_KEY_HEX + 1];
};

static double now_s(void)
{
	return (double)iop_mono_ns() / 1e9;
}

/* Starts argv with stdout to out (when given). */
static pid_t spawn(char *const argv[], const char *out)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
		if (fd >= 0)
			dup2(fd, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Exit status, or -1 when it had to be killed at the deadline. */
static int wait_exit(pid_t pid, double timeout_s)
{
	double end = now_s() + timeout_s;
	int st;
	assert_true(pid > 0); /* never kill(0) or kill(-1) */
	while (now_s() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static void path(const struct run *r, const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s", r->dir, name);
}

/* Starts a sink on ipc://DIR/NAME.ipc writing DIR/NAME.json; waits until it
 * is bound. */
static pid_t start_sink(const struct run *r, const char *name, unsigned expect_final)
{
	char url[128], out[128], ready[128], n[16], base[32];
	snprintf(base, sizeof base, "%s.ipc", name);
	snprintf(url, sizeof url, "ipc://%s/%s", r->dir, base);
	snprintf(base, sizeof base, "%s.json", name);
	path(r, base, out, sizeof out);
	snprintf(base, sizeof base, "%s.ready", name);
	path(r, base, ready, sizeof ready);
	snprintf(n, sizeof n, "%u", expect_final);
	char *argv[] = {
	    IOP_SINK_PATH, "--url",          url,   "--key",     (char *)r->key, "--out",
	    out,           "--expect-final", n,     "--idle-ms", "15000",        "--timeout-s",
	    "30",          "--ready",        ready, NULL};
	pid_t pid = spawn(argv, NULL);
	double end = now_s() + 10;
	while (access(ready, F_OK) != 0 && now_s() < end)
		usleep(10000);
	assert_int_equal(access(ready, F_OK), 0);
	return pid;
}

static json_t *load(const struct run *r, const char *name)
{
	char p[128];
	json_error_t e;
	path(r, name, p, sizeof p);
	json_t *doc = json_load_file(p, 0, &e);
	if (!doc)
		fail_msg("%s: %s", p, e.text);
	return doc;
}

/* Runs iop-loadgen with the key and extra options; its report. */
static json_t *loadgen(const struct run *r, const char *const *opts)
{
	char *argv[48] = {IOP_LOADGEN_PATH, "--key", (char *)r->key};
	size_t n = 3;
	for (; *opts && n < 47; opts++)
		argv[n++] = (char *)*opts;
	argv[n] = NULL;
	char out[128];
	path(r, "loadgen.json", out, sizeof out);
	assert_int_equal(wait_exit(spawn(argv, out), WAIT_S), 0);
	return load(r, "loadgen.json");
}

static json_int_t geti(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v))
		fail_msg("no integer '%s'", key);
	return json_integer_value(v);
}

static json_t *find_rank(json_t *arr, json_int_t rank)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v) if (geti(v, "rank") == rank) return v;
	fail_msg("rank %lld not found", (long long)rank);
	return NULL;
}

/* One loadgen rank against the sink that received it. */
static void check_rank(json_t *lg_rank, json_t *sink)
{
	json_int_t rank = geti(lg_rank, "rank");
	json_t *got = find_rank(json_object_get(sink, "ranks"), rank);
	json_t *proc = find_rank(json_object_get(sink, "processes"), rank);
	if (!json_equal(json_object_get(got, "counters"), json_object_get(lg_rank, "counters")))
		fail_msg("rank %lld: the sink's counters differ from loadgen's", (long long)rank);
	if (!json_equal(json_object_get(got, "events"),
	                json_object_get(lg_rank, "events_by_layer")))
		fail_msg("rank %lld: the sink's event sums differ from loadgen's", (long long)rank);
	assert_int_equal(geti(proc, "frames"), geti(lg_rank, "frames"));
	assert_int_equal(geti(proc, "missing_seqs"), 0);
	assert_true(json_is_true(json_object_get(proc, "final")));
	assert_true(json_is_true(json_object_get(lg_rank, "final")));
	json_t *st = json_object_get(proc, "stats");
	assert_int_equal(geti(st, "events"), geti(lg_rank, "events"));
	assert_int_equal(geti(st, "dropped"), 0);
	assert_int_equal(geti(proc, "pid"), geti(lg_rank, "pid"));
	assert_int_equal(geti(proc, "node_id"), geti(lg_rank, "node_id"));
}

static void check_sink_clean(json_t *sink)
{
	assert_int_equal(json_object_size(json_object_get(sink, "rejected")), 0);
	json_t *nest = json_object_get(sink, "nesting");
	assert_int_equal(geti(nest, "orphans"), 0);
	assert_int_equal(geti(nest, "child_ops_mismatch"), 0);
	assert_int_equal(geti(nest, "child_bytes_mismatch"), 0);
	assert_string_equal(json_string_value(json_object_get(sink, "stop_reason")),
	                    "expect_final");
}

static double getr(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static void exact_totals_two_urls(void **state)
{
	struct run *r = *state;
	char url_a[128], url_b[128];
	snprintf(url_a, sizeof url_a, "ipc://%s/a.ipc", r->dir);
	snprintf(url_b, sizeof url_b, "ipc://%s/b.ipc", r->dir);
	pid_t a = start_sink(r, "a", 2), b = start_sink(r, "b", 2);
	const char *opts[] = {"--url",
	                      url_a,
	                      "--url",
	                      url_b,
	                      "--ranks",
	                      "4",
	                      "--threads",
	                      "2",
	                      "--nodes",
	                      "2",
	                      "--events-per-s",
	                      "2000",
	                      "--duration-s",
	                      "2",
	                      "--workload",
	                      "mixed",
	                      "--send-timeout-ms",
	                      "5000",
	                      NULL};
	json_t *lg = loadgen(r, opts);
	assert_int_equal(wait_exit(a, WAIT_S), 0);
	assert_int_equal(wait_exit(b, WAIT_S), 0);
	json_t *sa = load(r, "a.json"), *sb = load(r, "b.json");
	check_sink_clean(sa);
	check_sink_clean(sb);
	json_t *ranks = json_object_get(lg, "ranks"), *v;
	size_t i;
	assert_int_equal(json_array_size(ranks), 4);
	json_array_foreach(ranks, i, v)
	{
		/* round-robin: ranks 0 and 2 to the first URL */
		assert_string_equal(json_string_value(json_object_get(v, "url")),
		                    i % 2 ? url_b : url_a);
		check_rank(v, i % 2 ? sb : sa);
	}
	json_t *t = json_object_get(lg, "totals");
	assert_int_equal(geti(t, "refused_sends"), 0);
	assert_int_equal(geti(t, "dropped"), 0);
	assert_int_equal(geti(t, "final_frames"), 4);
	assert_int_equal(geti(sa, "events") + geti(sb, "events"), geti(t, "events_sent"));
	assert_int_equal(geti(sa, "frames") + geti(sb, "frames"), geti(t, "frames"));
	assert_int_equal(geti(json_object_get(sa, "inflight"), "reports") +
	                     geti(json_object_get(sb, "inflight"), "reports"),
	                 geti(t, "inflight_records"));
	double ratio = getr(t, "event_rate_per_s") / getr(t, "requested_rate_per_s");
	printf("loadgen: %lld events, %lld frames, %.1f bytes/event, rate %.0f/s of %.0f/s "
	       "requested (%.3f)\n",
	       (long long)geti(t, "events"), (long long)geti(t, "frames"),
	       getr(t, "bytes_per_event"), getr(t, "event_rate_per_s"),
	       getr(t, "requested_rate_per_s"), ratio);
	/* The rate is what the schedule allowed: never more than requested,
	 * and any shortfall is slots the report says it skipped (a loaded
	 * machine), not events lost on the way. */
	assert_true(ratio <= 1.01);
	uint64_t slots = (uint64_t)geti(t, "events") + (uint64_t)geti(t, "skipped");
	uint64_t planned = 4 * 2000 * 2;
	printf("loadgen: %llu slots of %llu planned, %lld skipped\n", (unsigned long long)slots,
	       (unsigned long long)planned, (long long)geti(t, "skipped"));
	assert_true(slots >= planned && slots <= planned + 4 * 8);
	if (geti(t, "skipped") == 0)
		assert_true(ratio >= 0.99);
	json_decref(lg);
	json_decref(sa);
	json_decref(sb);
}

static double time_per_op(json_t *rank)
{
	json_t *read =
	    json_object_get(json_object_get(json_object_get(rank, "counters"), "posix"), "read");
	return (double)geti(read, "time_ns") / (double)geti(read, "ops");
}

static void slow_rank(void **state)
{
	struct run *r = *state;
	char url[128];
	snprintf(url, sizeof url, "ipc://%s/s.ipc", r->dir);
	pid_t s = start_sink(r, "s", 2);
	const char *opts[] = {"--url",
	                      url,
	                      "--ranks",
	                      "2",
	                      "--events-per-s",
	                      "20000",
	                      "--max-events",
	                      "3000",
	                      "--workload",
	                      "random",
	                      "--slow-rank",
	                      "1",
	                      "--slow-factor",
	                      "4",
	                      "--send-timeout-ms",
	                      "5000",
	                      NULL};
	json_t *lg = loadgen(r, opts);
	assert_int_equal(wait_exit(s, WAIT_S), 0);
	json_t *sink = load(r, "s.json"), *ranks = json_object_get(lg, "ranks");
	check_sink_clean(sink);
	check_rank(json_array_get(ranks, 0), sink);
	check_rank(json_array_get(ranks, 1), sink);
	assert_int_equal(geti(json_array_get(ranks, 0), "events"), 3000);
	double ratio =
	    time_per_op(json_array_get(ranks, 1)) / time_per_op(json_array_get(ranks, 0));
	printf("slow rank: time per read %.2f x rank 0's (factor 4)\n", ratio);
	assert_true(ratio > 3.4 && ratio < 4.6);
	json_decref(lg);
	json_decref(sink);
}

static void refused_without_peer(void **state)
{
	struct run *r = *state;
	char url[128];
	snprintf(url, sizeof url, "ipc://%s/nobody.ipc", r->dir);
	const char *opts[] = {"--url", url,           "--ranks", "1", "--duration-s",
	                      "0.3",   "--linger-ms", "0",       NULL};
	double t0 = now_s();
	json_t *lg = loadgen(r, opts);
	json_t *t = json_object_get(lg, "totals");
	assert_int_equal(geti(t, "frames"), 0);
	assert_true(geti(t, "refused_sends") > 0);
	assert_true(geti(t, "events") > 0);
	assert_int_equal(geti(t, "dropped"), geti(t, "events"));
	assert_int_equal(geti(t, "final_frames"), 0);
	assert_true(now_s() - t0 < 5); /* one bounded wait for the last frame */
	json_decref(lg);
}

/* mpiio.write.ops of a counters or events tree (0 when absent). */
static json_int_t mpiio_writes(json_t *tree)
{
	json_t *w = json_object_get(json_object_get(tree, "mpiio"), "write");
	return w ? geti(w, "ops") : 0;
}

static void collectives(void **state)
{
	struct run *r = *state;
	char url[128];
	snprintf(url, sizeof url, "ipc://%s/c.ipc", r->dir);
	pid_t s = start_sink(r, "c", 4);
	/* the random workload has no MPI-IO calls: its MPI-IO writes are the
	 * collective calls alone */
	const char *opts[] = {"--url",
	                      url,
	                      "--ranks",
	                      "4",
	                      "--events-per-s",
	                      "2000",
	                      "--duration-s",
	                      "1",
	                      "--workload",
	                      "random",
	                      "--coll-per-s",
	                      "50",
	                      "--coll-group",
	                      "2",
	                      "--send-timeout-ms",
	                      "5000",
	                      NULL};
	json_t *lg = loadgen(r, opts);
	assert_int_equal(wait_exit(s, WAIT_S), 0);
	json_t *sink = load(r, "c.json"), *ranks = json_object_get(lg, "ranks"), *v;
	check_sink_clean(sink);
	size_t i;
	json_int_t made = -1;
	json_array_foreach(ranks, i, v)
	{
		check_rank(v, sink);
		json_int_t n = geti(v, "collectives") + geti(v, "collectives_skipped");
		if (made < 0)
			made = n;
		assert_int_equal(n, made); /* every rank the same calls */
		assert_int_equal(mpiio_writes(json_object_get(v, "events_by_layer")),
		                 geti(v, "collectives"));
		json_t *got = find_rank(json_object_get(sink, "ranks"), geti(v, "rank"));
		assert_int_equal(mpiio_writes(json_object_get(got, "events")),
		                 geti(v, "collectives"));
	}
	printf("collectives: %lld a rank in 1 s at 50/s\n", (long long)made);
	assert_true(made >= 45 && made <= 50);
	json_decref(lg);
	json_decref(sink);
}

static int setup(void **state)
{
	struct run *r = calloc(1, sizeof *r);
	struct iop_key key;
	snprintf(r->dir, sizeof r->dir, "/tmp/iop-loadgen-XXXXXX");
	if (!mkdtemp(r->dir) || iop_key_generate(&key) != IOP_OK)
		return -1;
	iop_key_to_hex(&key, r->key);
	*state = r;
	return 0;
}

static int remove_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static int teardown(void **state)
{
	struct run *r = *state;
	nftw(r->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	free(r);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(exact_totals_two_urls, setup, teardown),
	    cmocka_unit_test_setup_teardown(slow_rank, setup, teardown),
	    cmocka_unit_test_setup_teardown(refused_without_peer, setup, teardown),
	    cmocka_unit_test_setup_teardown(collectives, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
