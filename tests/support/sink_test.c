/* End-to-end tests of iop-sink: the real binary (its path is compiled in as
 * IOP_SINK_PATH) is started with a fresh job key, real PUSH senders are
 * forked (workload frames with the right key, one frame with another job's
 * key, one message of garbage), and the JSON it writes is read back with
 * jansson and checked: rejections by name, FINAL frames, counters equal to
 * event totals once drained, no seq gaps, ranks and files adding up to the
 * layer totals, every nested call linked. A sender that loses a frame shows
 * that the same checks do fail when the data is wrong.
 *
 * This process never calls nanomsg (its threads do not survive fork); only
 * the forked senders do, and they keep their sockets open on a pipe until
 * the sink has exited, because nanomsg drops queued messages at close.
 * Every wait is bounded: sink runs have --timeout-s, waits for files and
 * exits poll against a deadline, and each sender arms alarm(). */
#include <jansson.h>
#include <nanomsg/nn.h>
#include <nanomsg/pipeline.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "test_util.h"
#include "workload.h"

#define FRAME_CAP        (64 * 1024)
#define EVENTS_PER_FRAME 200
#define SENDER_ALARM_S   60
#define MAX_SENDERS      8

struct run {
	char dir[64], url[128], out[128], ready[128];
	struct iop_key key;
	char key_hex[IOP_KEY_HEX + 1];
	pid_t sink;
	int hold[2]; /* senders keep their socket open until this closes */
	pid_t senders[MAX_SENDERS];
	int n_senders;
};

/* ---------------------------------------------------------------- senders */

/* Senders (children) wait here before nn_close. */
static void hold_until_released(struct run *r)
{
	char c;
	close(r->hold[1]);
	while (read(r->hold[0], &c, 1) < 0)
		;
}

static int push_socket(const char *url)
{
	int s = nn_socket(AF_SP, NN_PUSH), timeo = 10000;
	if (s < 0 || nn_setsockopt(s, NN_SOL_SOCKET, NN_SNDTIMEO, &timeo, sizeof timeo) < 0 ||
	    nn_connect(s, url) < 0)
		return -1;
	return s;
}

struct sender {
	enum iop_wl_kind kind;
	uint32_t rank;
	bool key_ok, garbage;
	int frames;   /* then drained to a FINAL frame */
	int skip_seq; /* built but not sent: lost on the way (-1: none) */
	int dup_seq;  /* sent twice: a replay (-1: none) */
};

/* A sender with the job's key that loses and replays nothing. */
static struct sender honest(enum iop_wl_kind kind, uint32_t rank, int frames)
{
	return (struct sender){.kind = kind,
	                       .rank = rank,
	                       .key_ok = true,
	                       .frames = frames,
	                       .skip_seq = -1,
	                       .dup_seq = -1};
}

/* Sends sd's workload; key_ok false sends one frame signed with another key. */
static int send_workload(struct run *r, const struct sender *sd)
{
	static struct iop_wl w;
	static uint8_t buf[FRAME_CAP];
	struct iop_key other;
	int s = push_socket(r->url);
	if (s < 0 || !iop_wl_init(&w, sd->kind, sd->rank, 17, iop_real_ns()) ||
	    iop_key_generate(&other) != IOP_OK)
		return 1;
	for (int f = 0;; f++) {
		size_t len;
		unsigned n;
		w.draining = f >= sd->frames;
		enum iop_err err = iop_wl_frame(&w, buf, sizeof buf, EVENTS_PER_FRAME,
		                                sd->key_ok ? &r->key : &other, &len, &n);
		if (err == IOP_ERR_STATE)
			break; /* drained */
		if (err != IOP_OK)
			return 1;
		for (int copies = (f != sd->skip_seq) + (f == sd->dup_seq); copies > 0; copies--)
			if (nn_send(s, buf, len, 0) != (int)len)
				return 1;
		if (!sd->key_ok)
			break;
	}
	hold_until_released(r);
	nn_close(s);
	iop_wl_free(&w);
	return 0;
}

static int send_garbage(struct run *r)
{
	uint8_t buf[500];
	int s = push_socket(r->url);
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)(i * 7919); /* starts 00 ef: not "IOPF" */
	if (s < 0 || nn_send(s, buf, sizeof buf, 0) != (int)sizeof buf)
		return 1;
	hold_until_released(r);
	nn_close(s);
	return 0;
}

static void spawn(struct run *r, const struct sender *sd)
{
	assert_true(r->n_senders < MAX_SENDERS);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(SENDER_ALARM_S);
		_exit(sd->garbage ? send_garbage(r) : send_workload(r, sd));
	}
	r->senders[r->n_senders++] = pid;
}

/* ------------------------------------------------------------- processes */

static double now_s(void)
{
	return (double)iop_mono_ns() / 1e9;
}

/* Exit status of pid, or -1 when it had to be killed after timeout_s. */
static int wait_exit(pid_t pid, double timeout_s)
{
	double end = now_s() + timeout_s;
	int st;
	if (pid <= 0)
		return -1; /* never kill(0) or kill(-1) */
	while (now_s() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static bool wait_file(const char *path, double timeout_s)
{
	double end = now_s() + timeout_s;
	while (access(path, F_OK) != 0) {
		if (now_s() >= end)
			return false;
		usleep(10000);
	}
	return true;
}

/* A fresh directory (socket, report, ready file) and job key per test. */
static int run_setup(void **state)
{
	struct run *r = calloc(1, sizeof *r);
	if (!r)
		return -1;
	*state = r;
	r->hold[0] = r->hold[1] = -1;
	snprintf(r->dir, sizeof r->dir, "/tmp/iop-sink-test-XXXXXX");
	if (!mkdtemp(r->dir) || iop_key_generate(&r->key) != IOP_OK)
		return -1;
	snprintf(r->url, sizeof r->url, "ipc://%s/sink.ipc", r->dir);
	snprintf(r->out, sizeof r->out, "%s/out.json", r->dir);
	snprintf(r->ready, sizeof r->ready, "%s/ready", r->dir);
	iop_key_to_hex(&r->key, r->key_hex);
	return 0;
}

/* Starts iop-sink with the run's url, key, out and ready file, plus extra
 * (NULL-terminated), and waits until its socket is bound. */
static void start_sink(struct run *r, const char *const *extra)
{
	const char *argv[24] = {IOP_SINK_PATH, "--url", r->url,    "--key", r->key_hex,
	                        "--out",       r->out,  "--ready", r->ready};
	int n = 9;
	while (*extra && n < 23)
		argv[n++] = *extra++;
	r->sink = fork();
	assert_true(r->sink >= 0);
	if (r->sink == 0) {
		execv(IOP_SINK_PATH, (char *const *)argv);
		_exit(127);
	}
	assert_true(wait_file(r->ready, 10));
	assert_int_equal(pipe(r->hold), 0);
}

static void release_senders(struct run *r)
{
	for (int i = 0; i < 2; i++)
		if (r->hold[i] >= 0)
			close(r->hold[i]);
	r->hold[0] = r->hold[1] = -1;
}

/* Waits for the sink (bounded), lets the senders close and reaps them.
 * Returns the sink's exit status; *senders_ok tells whether all senders
 * exited 0. */
static int finish(struct run *r, double timeout_s, bool *senders_ok)
{
	int st = r->sink > 0 ? wait_exit(r->sink, timeout_s) : -1;
	r->sink = 0;
	release_senders(r);
	*senders_ok = true;
	for (int i = 0; i < r->n_senders; i++)
		*senders_ok &= wait_exit(r->senders[i], 20) == 0;
	r->n_senders = 0;
	return st;
}

/* Also after a failed assertion: no process or file is left behind. */
static int run_teardown(void **state)
{
	struct run *r = *state;
	bool ignored;
	if (r->sink > 0)
		kill(r->sink, SIGKILL);
	finish(r, 10, &ignored);
	char path[200];
	const char *names[] = {"sink.ipc", "out.json", "out.json.tmp", "ready"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		snprintf(path, sizeof path, "%s/%s", r->dir, names[i]);
		unlink(path);
	}
	rmdir(r->dir);
	free(r);
	return 0;
}

static json_t *load(const char *path)
{
	json_error_t e;
	json_t *doc = json_load_file(path, 0, &e);
	if (!doc)
		fprintf(stderr, "sink_test: %s: %s (line %d)\n", path, e.text, e.line);
	return doc;
}

/* ------------------------------------------------------------ JSON checks */

static long long num(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* ops/bytes of counters and events, per layer and class. */
struct sums {
	long long c_ops[IOP_LAYER__COUNT][IOP_CLASS__COUNT],
	    c_bytes[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
	long long e_ops[IOP_LAYER__COUNT][IOP_CLASS__COUNT],
	    e_bytes[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
};

static int class_of(const char *name)
{
	for (int c = 0; c < IOP_CLASS__COUNT; c++)
		if (strcmp(iop_class_name(c), name) == 0)
			return c;
	return -1;
}

/* Adds a {layer: {class: {ops, bytes, ...}}} tree; names it does not know
 * count as bad. */
static int add_tree(const json_t *tree, long long ops[][IOP_CLASS__COUNT],
                    long long bytes[][IOP_CLASS__COUNT])
{
	const char *ln, *cn;
	json_t *lo, *co;
	int bad = 0;
	json_object_foreach((json_t *)tree, ln, lo)
	{
		enum iop_layer l;
		if (!iop_layer_from_name(ln, &l)) {
			bad++;
			continue;
		}
		json_object_foreach(lo, cn, co)
		{
			int c = class_of(cn);
			if (c < 0) {
				bad++;
				continue;
			}
			ops[l][c] += num(co, "ops");
			bytes[l][c] += num(co, "bytes");
		}
	}
	return bad;
}

/* Sums the counters and events trees of every element of an array. */
static int add_items(const json_t *arr, struct sums *s)
{
	size_t i;
	json_t *it;
	int bad = 0;
	json_array_foreach((json_t *)arr, i, it)
	{
		bad += add_tree(json_object_get(it, "counters"), s->c_ops, s->c_bytes);
		bad += add_tree(json_object_get(it, "events"), s->e_ops, s->e_bytes);
	}
	return bad;
}

static void layer_sums(const json_t *doc, struct sums *s)
{
	memset(s, 0, sizeof *s);
	const char *ln, *cn;
	json_t *lo, *co;
	json_object_foreach(json_object_get(doc, "layers"), ln, lo)
	{
		enum iop_layer l;
		if (!iop_layer_from_name(ln, &l))
			continue;
		json_object_foreach(lo, cn, co)
		{
			int c = class_of(cn);
			if (c < 0)
				continue;
			s->c_ops[l][c] = num(co, "counter_ops");
			s->c_bytes[l][c] = num(co, "counter_bytes");
			s->e_ops[l][c] = num(co, "event_ops");
			s->e_bytes[l][c] = num(co, "event_bytes");
		}
	}
}

/* Layer/classes whose counter totals differ from their event totals. */
static int counter_event_mismatches(const json_t *doc)
{
	struct sums s;
	int bad = 0;
	layer_sums(doc, &s);
	for (int l = 0; l < IOP_LAYER__COUNT; l++)
		for (int c = 0; c < IOP_CLASS__COUNT; c++)
			bad += s.c_ops[l][c] != s.e_ops[l][c] || s.c_bytes[l][c] != s.e_bytes[l][c];
	return bad;
}

/* Layer/classes where the elements of doc[key] ("ranks", "files") do not
 * add up to the layer totals. */
static int sum_mismatches(const json_t *doc, const char *key)
{
	struct sums layers, items = {0};
	int bad = add_items(json_object_get(doc, key), &items);
	layer_sums(doc, &layers);
	for (int l = 0; l < IOP_LAYER__COUNT; l++)
		for (int c = 0; c < IOP_CLASS__COUNT; c++)
			bad += items.c_ops[l][c] != layers.c_ops[l][c] ||
			       items.c_bytes[l][c] != layers.c_bytes[l][c] ||
			       items.e_ops[l][c] != layers.e_ops[l][c] ||
			       items.e_bytes[l][c] != layers.e_bytes[l][c];
	return bad;
}

static long long sum_over(const json_t *arr, const char *key)
{
	size_t i;
	json_t *it;
	long long total = 0;
	json_array_foreach((json_t *)arr, i, it)
	{
		total += num(it, key);
	}
	return total;
}

static const json_t *find_file(const json_t *doc, const char *path)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(doc, "files"), i, f)
	{
		if (strcmp(json_string_value(json_object_get(f, "path")), path) == 0)
			return f;
	}
	return NULL;
}

/* ------------------------------------------------------------------ tests */

/* Three ranks of different workloads, one frame of another job, one message
 * of garbage: everything adds up, exactly the two intruders are rejected. */
static void three_ranks_add_up_and_intruders_are_rejected(void **state)
{
	struct run *r = *state;
	const char *const extra[] = {"--idle-ms", "1500", "--timeout-s", "60", NULL};
	start_sink(r, extra);
	static const enum iop_wl_kind kinds[] = {IOP_WL_IOR_WRITE, IOP_WL_MIXED, IOP_WL_METADATA};
	for (uint32_t rank = 0; rank < 3; rank++) {
		struct sender honest_rank = honest(kinds[rank], rank, 20);
		spawn(r, &honest_rank);
	}
	struct sender stranger = honest(IOP_WL_MIXED, 9, 1), garbage = {.garbage = true};
	stranger.key_ok = false; /* one frame with another job's key */
	spawn(r, &stranger);
	spawn(r, &garbage);
	bool senders_ok;
	assert_int_equal(finish(r, 90, &senders_ok), 0);
	assert_true(senders_ok);
	json_t *doc = load(r->out);
	assert_non_null(doc);

	assert_string_equal(json_string_value(json_object_get(doc, "stop_reason")), "idle");
	assert_int_equal(num(doc, "final_frames"), 3);
	json_t *rej = json_object_get(doc, "rejected");
	assert_int_equal(num(rej, "BAD_MAC"), 1);
	assert_int_equal(num(rej, "BAD_MAGIC"), 1);
	assert_int_equal(json_object_size(rej), 2);

	json_t *procs = json_object_get(doc, "processes");
	assert_int_equal(json_array_size(procs), 3);
	assert_int_equal(sum_over(procs, "missing_seqs"), 0);
	assert_int_equal(sum_over(procs, "unknown_ids"), 0);
	assert_int_equal(sum_over(procs, "frames"), num(doc, "frames"));
	size_t i;
	json_t *p;
	long long made = 0;
	json_array_foreach(procs, i, p)
	{
		assert_int_equal(num(p, "rank"), (long long)i); /* sorted by rank */
		assert_true(json_is_true(json_object_get(p, "final")));
		made += num(json_object_get(p, "stats"), "events");
	}
	assert_int_equal(made, num(doc, "events")); /* drained: every event made arrived */

	/* The workloads' counters equal the sum of their events once drained. */
	json_t *layers = json_object_get(doc, "layers");
	assert_non_null(json_object_get(layers, "posix"));
	assert_non_null(json_object_get(layers, "mpiio"));
	assert_non_null(json_object_get(layers, "stdio"));
	assert_int_equal(counter_event_mismatches(doc), 0);
	assert_int_equal(sum_mismatches(doc, "ranks"), 0);
	assert_int_equal(sum_mismatches(doc, "files"), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "ranks")), 3);

	struct sums s;
	long long ev = 0;
	layer_sums(doc, &s);
	for (int l = 0; l < IOP_LAYER__COUNT; l++)
		for (int c = 0; c < IOP_CLASS__COUNT; c++)
			ev += s.e_ops[l][c];
	assert_true(ev > 0);
	assert_int_equal(ev, num(doc, "events"));

	/* IOR: each MPI-IO write_at_all has two linked POSIX children. */
	json_t *nest = json_object_get(doc, "nesting");
	assert_true(num(nest, "parents") > 0);
	assert_int_equal(num(nest, "children"), 2 * num(nest, "parents"));
	assert_int_equal(num(nest, "linked"), num(nest, "children"));
	assert_int_equal(num(nest, "orphans"), 0);
	assert_int_equal(num(nest, "child_ops_mismatch"), 0);
	assert_int_equal(num(nest, "child_bytes_mismatch"), 0);

	const json_t *ior = find_file(doc, "/scratch/ior/testFile");
	assert_non_null(ior);
	assert_string_equal(json_string_value(json_object_get(ior, "kind")), "file");
	assert_int_equal(json_integer_value(json_array_get(json_object_get(ior, "ranks"), 0)), 0);

	json_t *lat = json_object_get(json_object_get(doc, "latency"), "posix");
	assert_true(num(lat, "p50_ns") > 0);
	assert_true(num(lat, "p50_ns") <= num(lat, "p99_ns"));
	assert_true(num(lat, "p99_ns") <= num(lat, "max_ns"));

	json_decref(doc);
}

/* One frame lost on the way: the gap is seen, and the counters (cumulative,
 * so still complete) no longer equal the events that arrived. One frame
 * replayed: counted, not used. The sink stops at the FINAL frame, long
 * before its idle timeout. */
static void a_lost_frame_shows_as_a_gap_and_a_mismatch(void **state)
{
	struct run *r = *state;
	const char *const extra[] = {"--expect-final", "1",  "--idle-ms", "60000",
	                             "--timeout-s",    "60", NULL};
	double t0 = now_s();
	start_sink(r, extra);
	struct sender lossy = honest(IOP_WL_IOR_WRITE, 3, 10);
	lossy.skip_seq = 4;
	lossy.dup_seq = 2;
	spawn(r, &lossy);
	bool senders_ok;
	assert_int_equal(finish(r, 90, &senders_ok), 0);
	assert_true(senders_ok);
	assert_true(now_s() - t0 < 30);
	json_t *doc = load(r->out);
	assert_non_null(doc);

	assert_string_equal(json_string_value(json_object_get(doc, "stop_reason")), "expect_final");
	assert_int_equal(num(doc, "final_frames"), 1);
	json_t *p = json_array_get(json_object_get(doc, "processes"), 0);
	assert_int_equal(num(p, "missing_seqs"), 1);
	assert_int_equal(num(p, "duplicate_frames"), 1);
	assert_int_equal(num(doc, "duplicate_frames"), 1);
	assert_int_equal(num(p, "first_seq"), 0);
	assert_int_equal(num(p, "frames"), num(p, "last_seq"));
	assert_true(counter_event_mismatches(doc) > 0);
	assert_true(num(json_object_get(p, "stats"), "events") > num(doc, "events"));
	/* per-rank and per-file sums still match the (equally short) layers */
	assert_int_equal(sum_mismatches(doc, "ranks"), 0);
	json_t *nest = json_object_get(doc, "nesting");
	assert_int_equal(num(nest, "linked") + num(nest, "orphans"), num(nest, "children"));

	json_decref(doc);
}

/* With nothing to receive the sink ends at --timeout-s and still writes a
 * (empty) report. */
static void the_sink_stops_on_timeout(void **state)
{
	struct run *r = *state;
	bool senders_ok;
	const char *const extra[] = {"--timeout-s", "1", NULL};
	double t0 = now_s();
	start_sink(r, extra);
	assert_int_equal(finish(r, 10, &senders_ok), 0);
	assert_true(now_s() - t0 < 5);
	json_t *doc = load(r->out);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "stop_reason")), "timeout");
	assert_int_equal(num(doc, "frames"), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "processes")), 0);
	json_decref(doc);
}

static void the_sink_stops_on_sigterm(void **state)
{
	struct run *r = *state;
	bool senders_ok;
	const char *const extra[] = {"--timeout-s", "60", NULL};
	start_sink(r, extra);
	assert_int_equal(kill(r->sink, SIGTERM), 0);
	assert_int_equal(finish(r, 10, &senders_ok), 0);
	json_t *doc = load(r->out);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "stop_reason")), "signal");
	json_decref(doc);
}

static int run_sink_args(const char *const *argv)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execv(IOP_SINK_PATH, (char *const *)argv);
		_exit(127);
	}
	return wait_exit(pid, 10);
}

static void bad_usage_is_refused(void **state)
{
	const char *const bad_key[] = {IOP_SINK_PATH, "--url", "ipc:///tmp/x.ipc",
	                               "--key",       "0011",  NULL};
	const char *const no_url[] = {IOP_SINK_PATH, "--key", "00112233445566778899aabbccddeeff",
	                              NULL};
	const char *const bad_idle[] = {IOP_SINK_PATH,
	                                "--url",
	                                "ipc:///tmp/x.ipc",
	                                "--key",
	                                "00112233445566778899aabbccddeeff",
	                                "--idle-ms",
	                                "soon",
	                                NULL};
	assert_int_equal(run_sink_args(bad_key), 2);
	assert_int_equal(run_sink_args(no_url), 2);
	assert_int_equal(run_sink_args(bad_idle), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(three_ranks_add_up_and_intruders_are_rejected,
	                                    run_setup, run_teardown),
	    cmocka_unit_test_setup_teardown(a_lost_frame_shows_as_a_gap_and_a_mismatch, run_setup,
	                                    run_teardown),
	    cmocka_unit_test_setup_teardown(the_sink_stops_on_timeout, run_setup, run_teardown),
	    cmocka_unit_test_setup_teardown(the_sink_stops_on_sigterm, run_setup, run_teardown),
	    cmocka_unit_test(bad_usage_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
