/* The viewer protocol over real nanomsg sockets (ipc:// in a temporary
 * directory, tcp:// on 127.0.0.1): a viewer joining a running job ends
 * with the root's state byte for byte; queries answer what the root
 * holds; a wrong key is refused and counted; a restarted root is found
 * again; a viewer that never reads does not slow the root's publishing. */
#include "test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nanomsg/nn.h>

#include "clock.h"
#include "events.h"
#include "frame.h"
#include "keyframe.h"
#include "sim.h"
#include "viewer.h"
#include "viewproto.h"
#include "viewsrv.h"

#define SEC 1000000000ull
#define T0  (1700000000ull * SEC)

struct env {
	struct coll_sim sim;
	struct coll_viewsrv *srv;
	struct coll_viewer *v;
	char addr[256];
	char dir[64];
	uint64_t skew; /* added to the viewer's clock, to make time pass */
};

static uint64_t now(const struct env *e)
{
	return iop_mono_ns() + e->skew;
}

static void publish(void *arg, const struct coll_delta *d, const struct coll_state *s)
{
	struct env *e = arg;
	if (e->srv)
		coll_viewsrv_tick(e->srv, d, s);
}

/* Two free ports in a row on 127.0.0.1: the first is returned. */
static unsigned free_port_pair(void)
{
	for (int tries = 0; tries < 50; tries++) {
		int s = socket(AF_INET, SOCK_STREAM, 0), t = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t len = sizeof a;
		assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
		assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
		unsigned port = ntohs(a.sin_port);
		a.sin_port = htons((uint16_t)(port + 1));
		int ok = port < 65000 && bind(t, (struct sockaddr *)&a, sizeof a) == 0;
		close(s);
		close(t);
		if (ok)
			return port;
	}
	fail_msg("no free port pair");
	return 0;
}

static void env_new(struct env *e, bool tcp, const struct coll_history_cfg *h)
{
	memset(e, 0, sizeof(*e));
	if (tcp) {
		snprintf(e->addr, sizeof e->addr, "tcp://127.0.0.1:%u", free_port_pair());
	} else {
		strcpy(e->dir, "/tmp/iop-view-XXXXXX");
		assert_non_null(mkdtemp(e->dir));
		snprintf(e->addr, sizeof e->addr, "ipc://%s/root.ipc", e->dir);
	}
	assert_int_equal(coll_sim_new(&e->sim, 3, IOP_WL_MIXED, T0, h, publish, e), IOP_OK);
	const char *urls[] = {e->addr, NULL};
	assert_int_equal(coll_viewsrv_new(urls, e->sim.job_id, &e->sim.key, &e->srv), IOP_OK);
}

static void env_free(struct env *e)
{
	coll_viewer_free(e->v);
	coll_viewsrv_free(e->srv);
	coll_sim_free(&e->sim);
	if (e->dir[0]) {
		char p[128];
		snprintf(p, sizeof p, "%s/root.ipc", e->dir);
		unlink(p);
		snprintf(p, sizeof p, "%s/root.ipc.pub", e->dir);
		unlink(p);
		rmdir(e->dir);
	}
}

/* Pumps server and viewer (1 ms apart) until done or max_ms. */
static bool settle(struct env *e, bool (*done)(struct env *), int max_ms)
{
	for (int i = 0; i < max_ms; i++) {
		if (e->srv)
			coll_viewsrv_pump(e->srv, coll_root_state(e->sim.root), NULL);
		if (e->v)
			coll_viewer_pump(e->v, now(e));
		if (done(e))
			return true;
		usleep(1000);
	}
	return false;
}

static bool has_state(struct env *e)
{
	return coll_viewer_state(e->v) != NULL;
}

static bool caught_up(struct env *e)
{
	const struct coll_state *s = coll_viewer_state(e->v), *r = coll_root_state(e->sim.root);
	return s && s->ticks_applied == r->ticks_applied && s->last_t == r->last_t;
}

/* Runs the job for more seconds, the server and viewer pumped each round. */
static void run_for(struct env *e, unsigned seconds)
{
	uint64_t until = e->sim.slowest_ns + seconds * SEC;
	while (e->sim.slowest_ns < until) {
		assert_int_equal(coll_sim_round(&e->sim, 32), IOP_OK);
		if (e->srv)
			coll_viewsrv_pump(e->srv, coll_root_state(e->sim.root), NULL);
		if (e->v)
			coll_viewer_pump(e->v, now(e));
	}
}

static void join_midway(bool tcp)
{
	struct env e;
	struct coll_history_cfg h = {.full_ticks = 8, .bin1_ticks = 4, .bin1_count = 3,
	                             .bin2_ticks = 8, .bin2_count = 3};
	env_new(&e, tcp, &h);
	run_for(&e, 15); /* ticks published to nobody */
	assert_int_equal(coll_viewer_new(e.addr, e.sim.job_id, &e.sim.key, NULL, now(&e), &e.v),
	                 IOP_OK);
	assert_int_equal(coll_viewer_status(e.v, now(&e)), COLL_VIEWER_CONNECTING);
	assert_true(settle(&e, has_state, 5000));
	run_for(&e, 40);
	assert_int_equal(coll_sim_finish(&e.sim), IOP_OK);
	assert_true(settle(&e, caught_up, 5000));
	assert_true(coll_sim_same_state(coll_viewer_state(e.v), coll_root_state(e.sim.root)));
	struct coll_viewer_stats st;
	coll_viewer_stats(e.v, &st);
	assert_true(st.ticks_applied >= 30);
	assert_int_equal(st.bad_messages, 0);
	assert_int_equal(coll_viewer_status(e.v, now(&e)), COLL_VIEWER_LIVE);
	env_free(&e);
}

static void join_midway_ipc(void **state)
{
	(void)state;
	join_midway(false);
}

static void join_midway_tcp(void **state)
{
	(void)state;
	join_midway(true);
}

/* The server answering in a thread of its own while the test waits on
 * its queries (the job does not move meanwhile). */
struct pumper {
	struct env *e;
	const struct coll_alerts *alerts;
	volatile int stop;
	pthread_t thread;
};

static void *pump_thread(void *arg)
{
	struct pumper *p = arg;
	int fd;
	assert_int_equal(coll_viewsrv_fds(p->e->srv, &fd, 1), 1);
	while (!p->stop) {
		coll_viewsrv_pump(p->e->srv, coll_root_state(p->e->sim.root), p->alerts);
		usleep(500);
	}
	return NULL;
}

static void pumper_start(struct pumper *p, struct env *e, const struct coll_alerts *alerts)
{
	*p = (struct pumper){.e = e, .alerts = alerts};
	assert_int_equal(pthread_create(&p->thread, NULL, pump_thread, p), 0);
}

static void pumper_stop(struct pumper *p)
{
	p->stop = 1;
	pthread_join(p->thread, NULL);
}

static void check_history(struct env *e, const struct coll_key *key)
{
	const struct coll_state *root = coll_root_state(e->sim.root);
	struct coll_view_point *pts;
	size_t n;
	assert_int_equal(coll_viewer_history(e->v, key, root->first_t - 5, root->last_t + 5, &pts, &n),
	                 IOP_OK);
	assert_true(n > 5);
	int64_t prev = INT64_MIN;
	unsigned with_row = 0;
	for (size_t i = 0; i < n; i++) {
		assert_true(pts[i].t > prev);
		prev = pts[i].t;
		const struct coll_tick *k = coll_state_tick(root, pts[i].t);
		assert_non_null(k);
		assert_int_equal(k->t, pts[i].t);
		const struct coll_cell *c = coll_tick_find(k, key);
		assert_int_equal(c != NULL, pts[i].has_row);
		if (c) {
			with_row++;
			assert_int_equal(c->ops, pts[i].cell.ops);
			assert_int_equal(c->bytes, pts[i].cell.bytes);
			assert_int_equal(c->time_ns, pts[i].cell.time_ns);
			assert_int_equal(c->hist.count, pts[i].cell.hist.count);
			assert_int_equal(iop_hist_quantile(&c->hist, 0.99),
			                 iop_hist_quantile(&pts[i].cell.hist, 0.99));
		}
	}
	assert_true(with_row > 0);
	/* every tick from first to last is answered by one of the points */
	for (int64_t t = root->first_t; t <= root->last_t; t++) {
		const struct coll_tick *k = coll_state_tick(root, t);
		if (!k)
			continue;
		bool found = false;
		for (size_t i = 0; i < n && !found; i++)
			found = pts[i].t == k->t;
		assert_true(found);
	}
	coll_view_points_free(pts, n);
}

static void queries(void **state)
{
	(void)state;
	struct env e;
	struct coll_history_cfg h = {.full_ticks = 10, .bin1_ticks = 5, .bin1_count = 4,
	                             .bin2_ticks = 20, .bin2_count = 3};
	env_new(&e, true, &h);
	run_for(&e, 60);
	assert_int_equal(coll_viewer_new(e.addr, e.sim.job_id, &e.sim.key, NULL, now(&e), &e.v),
	                 IOP_OK);
	assert_true(settle(&e, has_state, 5000));
	struct coll_rules rules;
	coll_rules_default(&rules);
	struct coll_alerts *alerts;
	assert_int_equal(coll_alerts_new(&rules, &alerts), IOP_OK);
	struct pumper p;
	pumper_start(&p, &e, alerts);
	const struct coll_state *root = coll_root_state(e.sim.root);

	struct coll_key layer = coll_key_layer(IOP_LAYER_POSIX, IOP_CLASS_WRITE);
	check_history(&e, &layer);
	struct coll_key rank1 = coll_key_rank(1, IOP_LAYER_POSIX, IOP_CLASS_READ);
	check_history(&e, &rank1);

	/* a rank: its file rows are the root's totals of that rank */
	struct coll_view_rank vr;
	assert_int_equal(coll_viewer_rank(e.v, 1, &vr), IOP_OK);
	assert_int_equal(vr.rank.state, root->ranks[1].state);
	assert_int_equal(vr.rank.excl_ns, root->ranks[1].excl_ns);
	uint64_t ops = 0, layer_ops = 0;
	struct coll_tick want; /* the root's totals of rank 1, one row a key */
	coll_tick_init(&want, 0, SEC);
	for (struct coll_totals_it it = {.s = root}; coll_totals_next(&it);) {
		if (it.key.rank != 1)
			continue;
		struct coll_cell *w;
		assert_int_equal(coll_tick_row(&want, &it.key, &w), IOP_OK);
		assert_int_equal(coll_cell_merge(w, &it.cell), IOP_OK);
		ops += it.cell.ops;
	}
	uint32_t rows = want.n;
	for (uint32_t i = 0; i < want.n; i++) {
		const struct coll_cell *c = coll_tick_find(&vr.files, &want.key[i]);
		assert_non_null(c);
		assert_int_equal(c->bytes, want.cell[i].bytes);
	}
	coll_tick_free(&want);
	for (uint32_t i = 0; i < vr.layers.n; i++)
		layer_ops += vr.layers.cell[i].ops;
	assert_true(rows > 0);
	assert_int_equal(vr.files.n, rows);
	assert_int_equal(layer_ops, ops);
	coll_view_rank_free(&vr);
	assert_int_equal(coll_viewer_rank(e.v, 999, &vr), IOP_ERR_NOT_FOUND);
	coll_view_rank_free(&vr);

	/* a file: its rows are the root's totals of that file */
	uint64_t file = 0;
	for (struct coll_totals_it it = {.s = root}; !file && coll_totals_next(&it);)
		if (it.key.id && coll_names_text(&root->names, it.key.id))
			file = it.key.id;
	assert_true(file != 0);
	struct coll_view_file vf;
	assert_int_equal(coll_viewer_file(e.v, file, &vf), IOP_OK);
	assert_string_equal(vf.name, coll_names_text(&root->names, file));
	struct coll_tick frows; /* (rank, layer, class) rows of that file */
	coll_tick_init(&frows, 0, SEC);
	for (struct coll_totals_it it = {.s = root}; coll_totals_next(&it);) {
		struct coll_cell *w;
		if (it.key.id == file)
			assert_int_equal(coll_tick_row(&frows, &it.key, &w), IOP_OK);
	}
	assert_int_equal(vf.rows.n, frows.n);
	coll_tick_free(&frows);
	coll_view_file_free(&vf);

	json_t *j;
	assert_int_equal(coll_viewer_alerts(e.v, &j), IOP_OK);
	assert_true(json_is_array(json_object_get(j, "active")));
	assert_true(json_is_array(json_object_get(j, "log")));
	json_decref(j);
	pumper_stop(&p);

	struct coll_viewsrv_stats st;
	coll_viewsrv_stats(e.srv, &st);
	assert_true(st.requests >= 7);
	assert_int_equal(st.refused, 0);
	assert_int_equal(st.bad_requests, 0);
	coll_alerts_free(alerts);
	env_free(&e);
}

static bool refused(struct env *e)
{
	return coll_viewer_status(e->v, now(e)) == COLL_VIEWER_REFUSED;
}

static void wrong_key_refused(void **state)
{
	(void)state;
	struct env e;
	env_new(&e, false, NULL);
	run_for(&e, 5);
	struct iop_key wrong = e.sim.key;
	wrong.b[0] ^= 1;
	assert_int_equal(coll_viewer_new(e.addr, e.sim.job_id, &wrong, NULL, now(&e), &e.v), IOP_OK);
	assert_true(settle(&e, refused, 5000));
	assert_null(coll_viewer_state(e.v));
	run_for(&e, 5); /* ticks it cannot check are not applied */
	assert_null(coll_viewer_state(e.v));
	struct pumper p;
	pumper_start(&p, &e, NULL);
	json_t *j;
	assert_int_equal(coll_viewer_alerts(e.v, &j), IOP_ERR_BAD_MAC);
	pumper_stop(&p);
	struct coll_viewsrv_stats st;
	coll_viewsrv_stats(e.srv, &st);
	assert_true(st.refused >= 2);
	assert_int_equal(st.requests, 0);
	struct coll_viewer_stats vs;
	coll_viewer_stats(e.v, &vs);
	assert_true(vs.bad_messages > 0); /* the ticks, MAC'd with the right key */
	assert_string_equal(coll_viewer_status_text(COLL_VIEWER_REFUSED), "refused: wrong job key");
	env_free(&e);
}

static bool stale_or_unreachable(struct env *e)
{
	enum coll_viewer_status s = coll_viewer_status(e->v, now(e));
	return s == COLL_VIEWER_STALE || s == COLL_VIEWER_UNREACHABLE;
}

static void server_restart_recovers(void **state)
{
	(void)state;
	struct env e;
	env_new(&e, true, NULL);
	run_for(&e, 5);
	struct coll_viewer_opts o = {.timeout_ns = SEC / 2};
	assert_int_equal(coll_viewer_new(e.addr, e.sim.job_id, &e.sim.key, &o, now(&e), &e.v),
	                 IOP_OK);
	assert_true(settle(&e, has_state, 5000));
	run_for(&e, 5);
	assert_true(settle(&e, caught_up, 5000));
	/* the root goes away: no ticks, then no answer */
	coll_viewsrv_free(e.srv);
	e.srv = NULL;
	run_for(&e, 5);
	e.skew += 5 * SEC; /* more than 3 ticks pass */
	assert_true(settle(&e, stale_or_unreachable, 3000));
	e.skew += SEC;
	coll_viewer_pump(e.v, now(&e));
	usleep(10000);
	e.skew += SEC;
	coll_viewer_pump(e.v, now(&e));
	assert_int_equal(coll_viewer_status(e.v, now(&e)), COLL_VIEWER_UNREACHABLE);
	/* it comes back at the same address, a new instance */
	const char *urls[] = {e.addr, NULL};
	assert_int_equal(coll_viewsrv_new(urls, e.sim.job_id, &e.sim.key, &e.srv), IOP_OK);
	run_for(&e, 3);
	assert_true(settle(&e, caught_up, 8000));
	run_for(&e, 3);
	assert_true(settle(&e, caught_up, 5000));
	assert_true(coll_sim_same_state(coll_viewer_state(e.v), coll_root_state(e.sim.root)));
	assert_int_equal(coll_viewer_status(e.v, now(&e)), COLL_VIEWER_LIVE);
	struct coll_viewer_stats st;
	coll_viewer_stats(e.v, &st);
	assert_true(st.keyframes >= 2);
	env_free(&e);
}

/* A big tick (1024 ranks' rows): many of them fill any buffer. */
static void big_tick(struct coll_delta *d, int64_t t)
{
	coll_delta_reset(d, t);
	for (uint32_t r = 0; r < 1024; r++) {
		struct coll_key k = coll_key_rank(r, IOP_LAYER_POSIX, IOP_CLASS_WRITE);
		struct coll_cell *c;
		assert_int_equal(coll_tick_row(&d->tick, &k, &c), IOP_OK);
		for (unsigned i = 0; i < 4; i++)
			coll_cell_add_call(c, 1000 + 977 * i * (r + 1) + (uint64_t)t % 1000, 1 << 20, true,
			                   false);
	}
}

static void slow_viewer_does_not_block(void **state)
{
	(void)state;
	char dir[] = "/tmp/iop-view-XXXXXX", addr[128];
	assert_non_null(mkdtemp(dir));
	snprintf(addr, sizeof addr, "tcp://127.0.0.1:%u", free_port_pair());
	struct iop_key key;
	memset(key.b, 3, sizeof key.b);
	const char *urls[] = {addr, NULL};
	struct coll_viewsrv *srv;
	assert_int_equal(coll_viewsrv_new(urls, 77, &key, &srv), IOP_OK);
	struct coll_viewer *v;
	assert_int_equal(coll_viewer_new(addr, 77, &key, NULL, iop_mono_ns(), &v), IOP_OK);
	struct coll_state s;
	struct coll_history_cfg h = {.full_ticks = 16, .bin1_ticks = 8, .bin1_count = 4,
	                             .bin2_ticks = 32, .bin2_count = 4};
	coll_state_init(&s, SEC, &h);
	struct coll_delta d;
	coll_delta_init(&d, 0, SEC);
	/* the viewer joins, then stops reading */
	for (int i = 0; i < 1000 && !coll_viewer_state(v); i++) {
		coll_viewsrv_pump(srv, &s, NULL);
		coll_viewer_pump(v, iop_mono_ns());
		usleep(1000);
	}
	assert_non_null(coll_viewer_state(v));
	usleep(50000); /* its subscription is connected */
	enum { TICKS = 600 };
	uint64_t worst = 0, total = 0;
	for (int i = 0; i < TICKS; i++) {
		big_tick(&d, 1700000000 + i);
		assert_int_equal(coll_state_apply(&s, &d), IOP_OK);
		uint64_t t0 = iop_mono_ns();
		coll_viewsrv_tick(srv, &d, &s);
		uint64_t dt = iop_mono_ns() - t0;
		total += dt;
		worst = dt > worst ? dt : worst;
	}
	struct coll_viewsrv_stats st;
	coll_viewsrv_stats(srv, &st);
	assert_int_equal(st.published + st.pub_failed + st.unwatched, TICKS);
	assert_true(st.published > 0);
	/* ~35 MB to a viewer that reads nothing: a send that waited for it
	 * would wait for ever; each publish stays short (the bounds leave room
	 * for a sanitizer build on a loaded machine: ~0.5 ms a publish in a
	 * normal build) */
	print_message("publish: %.2f ms mean, %.2f ms worst\n", total / 1e6 / TICKS, worst / 1e6);
	assert_true(worst < SEC);
	assert_true(total < 30 * SEC);
	/* when it reads again it catches up */
	struct coll_viewer_stats vs = {0};
	for (int i = 0; i < 5000; i++) {
		coll_viewsrv_pump(srv, &s, NULL);
		coll_viewer_pump(v, iop_mono_ns());
		const struct coll_state *vs_state = coll_viewer_state(v);
		if (vs_state && vs_state->ticks_applied == s.ticks_applied)
			break;
		usleep(1000);
	}
	coll_viewer_stats(v, &vs);
	print_message("published %llu, viewer: %llu ticks, %llu keyframes, %llu gaps\n",
	              (unsigned long long)st.published, (unsigned long long)vs.ticks_applied,
	              (unsigned long long)vs.keyframes, (unsigned long long)vs.gaps);
	/* PUB dropped what it could not send (the viewer did not get them
	 * all), and the viewer caught up with a new keyframe (after a gap, or
	 * asking because its ticks had stopped) */
	assert_true(vs.ticks_applied < TICKS);
	assert_true(vs.keyframes >= 2);
	assert_true(coll_sim_same_state(coll_viewer_state(v), &s));
	coll_viewer_free(v);
	coll_viewsrv_free(srv);
	coll_delta_free(&d);
	coll_state_free(&s);
	rmdir(dir);
}

/* A keyframe is encoded by a child (snapshot.h): the pump that reads the
 * request returns without it, the state moves on meanwhile, and the
 * viewer's state built from it and the ticks after it equals the root's. */
static void keyframe_beside_the_loop(void **state)
{
	(void)state;
	char dir[] = "/tmp/iop-view-XXXXXX", addr[160];
	assert_non_null(mkdtemp(dir));
	snprintf(addr, sizeof addr, "ipc://%s/root.ipc", dir);
	struct iop_key key;
	memset(key.b, 5, sizeof key.b);
	const char *urls[] = {addr, NULL};
	struct coll_viewsrv *srv;
	assert_int_equal(coll_viewsrv_new(urls, 78, &key, &srv), IOP_OK);
	struct coll_state s;
	struct coll_history_cfg h = {.full_ticks = 64, .bin1_ticks = 8, .bin1_count = 4,
	                             .bin2_ticks = 32, .bin2_count = 4};
	coll_state_init(&s, SEC, &h);
	struct coll_delta d;
	coll_delta_init(&d, 0, SEC);
	int64_t t = 1700000000;
	for (int i = 0; i < 64; i++, t++) { /* 64 ticks of 1024 ranks: a large keyframe */
		big_tick(&d, t);
		assert_int_equal(coll_state_apply(&s, &d), IOP_OK);
	}
	int rep_fd, fd;
	assert_int_equal(coll_viewsrv_fds(srv, &rep_fd, 1), 1);
	struct coll_viewer *v;
	assert_int_equal(coll_viewer_new(addr, 78, &key, NULL, iop_mono_ns(), &v), IOP_OK);
	/* the request read: held, a child encodes, the server waits on its fd */
	uint64_t longest = 0;
	for (int i = 0; i < 5000; i++) {
		uint64_t t0 = iop_mono_ns();
		coll_viewsrv_pump(srv, &s, NULL);
		uint64_t dt = iop_mono_ns() - t0;
		longest = dt > longest ? dt : longest;
		assert_int_equal(coll_viewsrv_fds(srv, &fd, 1), 1);
		if (fd != rep_fd)
			break;
		usleep(1000);
	}
	assert_int_not_equal(fd, rep_fd);
	struct coll_viewsrv_stats st;
	coll_viewsrv_stats(srv, &st);
	assert_int_equal(st.keyframes_encoded, 0);
	/* the job goes on: ticks applied and published while the child works */
	for (int i = 0; i < 5; i++, t++) {
		big_tick(&d, t);
		assert_int_equal(coll_state_apply(&s, &d), IOP_OK);
		coll_viewsrv_tick(srv, &d, &s);
	}
	for (int i = 0; i < 10000; i++) {
		coll_viewsrv_pump(srv, &s, NULL);
		coll_viewer_pump(v, iop_mono_ns());
		const struct coll_state *vs = coll_viewer_state(v);
		if (vs && vs->ticks_applied == s.ticks_applied)
			break;
		usleep(1000);
	}
	coll_viewsrv_stats(srv, &st);
	struct coll_viewer_stats vs;
	coll_viewer_stats(v, &vs);
	print_message("longest pump %.2f ms; viewer: %llu keyframes, %llu ticks, %llu gaps\n",
	              longest / 1e6, (unsigned long long)vs.keyframes,
	              (unsigned long long)vs.ticks_applied, (unsigned long long)vs.gaps);
	assert_int_equal(st.keyframes_encoded, 1);
	assert_int_equal(vs.keyframes, 1);
	assert_int_equal(vs.gaps, 0);
	/* the keyframe was taken before the 5 ticks: the viewer applied them */
	assert_int_equal(vs.ticks_applied, 5);
	assert_true(coll_sim_same_state(coll_viewer_state(v), &s));
	assert_int_equal(coll_viewsrv_fds(srv, &fd, 1), 1);
	assert_int_equal(fd, rep_fd);
	coll_viewer_free(v);
	coll_viewsrv_free(srv);
	coll_delta_free(&d);
	coll_state_free(&s);
	char p2[200];
	snprintf(p2, sizeof p2, "%s/root.ipc", dir);
	unlink(p2);
	snprintf(p2, sizeof p2, "%s/root.ipc.pub", dir);
	unlink(p2);
	rmdir(dir);
}

/* A keyframe's child that overruns its time (0 here) is killed, the
 * request is answered with a keyframe encoded in the loop, and later ones
 * are encoded there too (the server's fd stays the query socket's). */
static void keyframe_child_overrun(void **state)
{
	(void)state;
	struct env e;
	struct coll_history_cfg h = {.full_ticks = 8, .bin1_ticks = 4, .bin1_count = 3,
	                             .bin2_ticks = 8, .bin2_count = 3};
	env_new(&e, false, &h);
	coll_viewsrv_set_child_max_ns(e.srv, 0);
	int rep_fd, fd;
	assert_int_equal(coll_viewsrv_fds(e.srv, &rep_fd, 1), 1);
	run_for(&e, 5);
	assert_int_equal(coll_viewer_new(e.addr, e.sim.job_id, &e.sim.key, NULL, now(&e), &e.v),
	                 IOP_OK);
	assert_true(settle(&e, has_state, 5000));
	struct coll_viewsrv_stats st;
	coll_viewsrv_stats(e.srv, &st);
	assert_int_equal(st.keyframes_encoded, 1);
	assert_int_equal(st.reply_failed, 0);
	run_for(&e, 5);
	assert_int_equal(coll_sim_finish(&e.sim), IOP_OK);
	assert_true(settle(&e, caught_up, 5000));
	assert_true(coll_sim_same_state(coll_viewer_state(e.v), coll_root_state(e.sim.root)));
	/* a second viewer: its keyframe in the loop, no child */
	struct coll_viewer *v2;
	assert_int_equal(coll_viewer_new(e.addr, e.sim.job_id, &e.sim.key, NULL, now(&e), &v2),
	                 IOP_OK);
	for (int i = 0; i < 5000 && !coll_viewer_state(v2); i++) {
		coll_viewsrv_pump(e.srv, coll_root_state(e.sim.root), NULL);
		assert_int_equal(coll_viewsrv_fds(e.srv, &fd, 1), 1);
		assert_int_equal(fd, rep_fd);
		coll_viewer_pump(v2, now(&e));
		usleep(1000);
	}
	assert_non_null(coll_viewer_state(v2));
	assert_true(coll_sim_same_state(coll_viewer_state(v2), coll_root_state(e.sim.root)));
	coll_viewer_free(v2);
	env_free(&e);
}

static void pub_addresses(void **state)
{
	(void)state;
	char out[64];
	assert_int_equal(coll_view_pub_addr("tcp://127.0.0.1:5000", out, sizeof out), IOP_OK);
	assert_string_equal(out, "tcp://127.0.0.1:5001");
	assert_int_equal(coll_view_pub_addr("tcp://*:7", out, sizeof out), IOP_OK);
	assert_string_equal(out, "tcp://*:8");
	assert_int_equal(coll_view_pub_addr("ipc:///tmp/x/root", out, sizeof out), IOP_OK);
	assert_string_equal(out, "ipc:///tmp/x/root.pub");
	assert_int_equal(coll_view_pub_addr("tcp://host", out, sizeof out), IOP_ERR_INVAL);
	assert_int_equal(coll_view_pub_addr("tcp://host:65535", out, sizeof out), IOP_ERR_INVAL);
	assert_int_equal(coll_view_pub_addr("ws://host:1", out, sizeof out), IOP_ERR_INVAL);
	assert_int_equal(coll_view_pub_addr("ipc:///a/very/long/path/indeed", out, 8),
	                 IOP_ERR_OVERSIZED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pub_addresses),
		cmocka_unit_test(join_midway_ipc),
		cmocka_unit_test(join_midway_tcp),
		cmocka_unit_test(queries),
		cmocka_unit_test(wrong_key_refused),
		cmocka_unit_test(server_restart_recovers),
		cmocka_unit_test(slow_viewer_does_not_block),
		cmocka_unit_test(keyframe_beside_the_loop),
		cmocka_unit_test(keyframe_child_overrun),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
