/* The leaf's spool (spool_in.h): files taken whole, in the order of their
 * names, each removed; files being written ('.' names) and others left; a
 * file cut short gives its whole frames and is counted bad; a file not
 * ready is held back for hold_ns from the first look, then taken; the
 * directory made for an ipc:// final address only, and removed at close. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#include "auth.h"
#include "frame.h"
#include "hash.h"
#include "spool.h"
#include "spool_in.h"

#define MS 1000000ull

struct fixture {
	char dir[64], url[128];
	struct coll_spool s;
};

/* A frame of process pid with sequence seq: its header and MAC are all a
 * spool reader looks at (the leaf checks the rest). */
static size_t frame(uint8_t *buf, size_t cap, uint32_t pid, uint64_t seq, unsigned pad)
{
	struct iop_key key = {{0}};
	struct iop_frame_hdr h = {.job_id = 1, .seq = seq, .base_ns = 1, .node_id = 7, .pid = pid};
	struct iop_stats st = {0};
	struct iop_frame_enc e;
	assert_int_equal(iop_enc_begin(&e, buf, cap, &h, &st), IOP_OK);
	for (unsigned i = 0; i < pad; i++) {
		struct iop_name n = {.kind = IOP_NAME_FILE, .id = i + 1, .hash = iop_hash64("/x", 2),
		                     .text = "/x", .len = 2};
		assert_int_equal(iop_enc_name(&e, &n), IOP_OK);
	}
	size_t len;
	assert_int_equal(iop_enc_finish(&e, &key, &len), IOP_OK);
	return len;
}

/* A spool file: its header (the image began at image_ns; 0: none at
 * all), then len bytes of frames. */
static void put_at(const struct fixture *f, const char *name, uint64_t image_ns, const uint8_t *buf,
                   size_t len)
{
	char path[256];
	snprintf(path, sizeof path, "%s/spool/%s", f->dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	uint8_t head[IOP_SPOOL_HEADER_LEN];
	iop_spool_header(head, image_ns);
	if (image_ns)
		assert_int_equal(write(fd, head, sizeof head), (ssize_t)sizeof head);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static void put(const struct fixture *f, const char *name, const uint8_t *buf, size_t len)
{
	put_at(f, name, 1000, buf, len);
}

static bool exists(const struct fixture *f, const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "%s/spool/%s", f->dir, name);
	return access(path, F_OK) == 0;
}

/* What fn was handed: (pid, seq, image) of each frame. */
struct seen {
	unsigned n;
	uint32_t pid[16];
	uint64_t seq[16], image[16];
	uint32_t not_ready; /* pid whose files are not ready */
};

static void take(void *arg, const uint8_t *buf, size_t len, uint64_t image_ns)
{
	struct seen *s = arg;
	struct iop_frame_hdr h;
	assert_int_equal(iop_frame_peek(buf, len, &h), IOP_OK);
	assert_true(s->n < 16);
	s->pid[s->n] = h.pid;
	s->image[s->n] = image_ns;
	s->seq[s->n++] = h.seq;
}

static bool ready(void *arg, const uint8_t *buf, size_t len, uint64_t image_ns)
{
	(void)image_ns;
	const struct seen *s = arg;
	struct iop_frame_hdr h;
	assert_int_equal(iop_frame_peek(buf, len, &h), IOP_OK);
	return h.pid != s->not_ready;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "/tmp/spool_in_test-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->url, sizeof f->url, "ipc://%s/final.ipc", f->dir);
	char why[256];
	assert_int_equal(coll_spool_open(&f->s, f->url, why, sizeof why), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	coll_spool_close(&f->s);
	assert_int_equal(rmdir(f->dir), 0); /* the spool went with close */
	free(f);
	return 0;
}

static void spool_made_private(void **state)
{
	struct fixture *f = *state;
	char path[256];
	struct stat st;
	snprintf(path, sizeof path, "%s/spool", f->dir);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	struct coll_spool other;
	char why[256] = "";
	assert_int_equal(coll_spool_open(&other, "tcp://127.0.0.1:5555", why, sizeof why), -1);
	assert_non_null(strstr(why, "no spool"));
	assert_int_equal(coll_spool_take(&other, 0, 0, NULL, take, NULL), 0);
	/* opened again (a leaf restarted in the same directory): the same one */
	assert_int_equal(coll_spool_open(&other, f->url, why, sizeof why), 0);
	assert_string_equal(other.dir, path);
}

static void spool_files_in_order(void **state)
{
	struct fixture *f = *state;
	static uint8_t a[4096], b[4096], c[4096];
	size_t la = frame(a, sizeof a, 1, 5, 0);
	size_t lb = frame(b, sizeof b, 2, 0, 3);
	lb += frame(b + lb, sizeof b - lb, 2, 1, 0); /* two frames back to back */
	size_t lc = frame(c, sizeof c, 3, 9, 1);
	/* written out of order: the names' times decide */
	put_at(f, "0000000000000003-00000007-00000003.frames", 777, c, lc);
	put(f, "0000000000000001-00000007-00000001.frames", a, la);
	put(f, "0000000000000002-00000007-00000002.frames", b, lb);
	put(f, ".0000000000000004-00000007-00000004.frames", a, la); /* being written */
	put(f, "notes.txt", a, la);
	struct seen s = {0};
	assert_int_equal(coll_spool_take(&f->s, 0, 0, NULL, take, &s), 4);
	assert_int_equal(s.n, 4);
	uint32_t pid[] = {1, 2, 2, 3};
	uint64_t seq[] = {5, 0, 1, 9};
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(s.pid[i], pid[i]);
		assert_int_equal(s.seq[i], seq[i]);
		assert_int_equal(s.image[i], i == 3 ? 777 : 1000); /* each file's header's */
	}
	assert_false(exists(f, "0000000000000001-00000007-00000001.frames"));
	assert_false(exists(f, "0000000000000002-00000007-00000002.frames"));
	assert_true(exists(f, ".0000000000000004-00000007-00000004.frames"));
	assert_true(exists(f, "notes.txt"));
	assert_int_equal(f->s.files, 3);
	assert_int_equal(f->s.frames, 4);
	assert_int_equal(f->s.bad_files, 0);
	/* nothing new: nothing handed */
	assert_int_equal(coll_spool_take(&f->s, 0, 0, NULL, take, &s), 0);
}

static void spool_cut_short(void **state)
{
	struct fixture *f = *state;
	static uint8_t b[4096];
	size_t one = frame(b, sizeof b, 4, 0, 0);
	size_t two = one + frame(b + one, sizeof b - one, 4, 1, 2);
	struct seen s = {0};
	/* the second frame cut short: the first is handed, the file is bad */
	put(f, "0000000000000001-00000007-00000004.frames", b, two - 5);
	assert_int_equal(coll_spool_take(&f->s, 0, 0, NULL, take, &s), 1);
	assert_int_equal(s.seq[0], 0);
	assert_int_equal(f->s.bad_files, 1);
	assert_false(exists(f, "0000000000000001-00000007-00000004.frames"));
	/* a header claiming a payload above the limit: nothing handed */
	b[28] = 0xff, b[29] = 0xff, b[30] = 0xff, b[31] = 0x7f;
	put(f, "0000000000000002-00000007-00000004.frames", b, two);
	assert_int_equal(coll_spool_take(&f->s, 0, 0, NULL, take, &s), 0);
	assert_int_equal(f->s.bad_files, 2);
	/* less than a frame's header */
	put(f, "0000000000000003-00000007-00000004.frames", b, 10);
	assert_int_equal(coll_spool_take(&f->s, 0, 0, NULL, take, &s), 0);
	assert_int_equal(f->s.bad_files, 3);
	/* whole frames without the file's header: none handed */
	size_t whole = frame(b, sizeof b, 4, 0, 0);
	put_at(f, "0000000000000004-00000007-00000004.frames", 0, b, whole);
	assert_int_equal(coll_spool_take(&f->s, 0, 0, NULL, take, &s), 0);
	assert_int_equal(f->s.bad_files, 4);
	assert_false(exists(f, "0000000000000004-00000007-00000004.frames"));
	assert_int_equal(s.n, 1);
}

static void spool_held_back(void **state)
{
	struct fixture *f = *state;
	static uint8_t a[4096], b[4096];
	size_t la = frame(a, sizeof a, 1, 3, 0), lb = frame(b, sizeof b, 2, 7, 0);
	put(f, "0000000000000001-00000007-00000001.frames", a, la);
	put(f, "0000000000000002-00000007-00000002.frames", b, lb);
	struct seen s = {.not_ready = 2};
	/* pid 2's file waits 500 ms from the first look; pid 1's goes at once */
	assert_int_equal(coll_spool_take(&f->s, 1000 * MS, 500 * MS, ready, take, &s), 1);
	assert_int_equal(s.pid[0], 1);
	assert_true(exists(f, "0000000000000002-00000007-00000002.frames"));
	assert_int_equal(coll_spool_take(&f->s, 1499 * MS, 500 * MS, ready, take, &s), 0);
	assert_int_equal(coll_spool_take(&f->s, 1500 * MS, 500 * MS, ready, take, &s), 1);
	assert_int_equal(s.pid[1], 2);
	assert_int_equal(f->s.n_held, 0);
	/* held, then ready: taken at the next look */
	put(f, "0000000000000003-00000007-00000002.frames", b, lb);
	assert_int_equal(coll_spool_take(&f->s, 2000 * MS, 500 * MS, ready, take, &s), 0);
	s.not_ready = 0;
	assert_int_equal(coll_spool_take(&f->s, 2001 * MS, 500 * MS, ready, take, &s), 1);
	/* no hold (the job's command has exited): at once */
	s.not_ready = 2;
	put(f, "0000000000000004-00000007-00000002.frames", b, lb);
	assert_int_equal(coll_spool_take(&f->s, 3000 * MS, 0, ready, take, &s), 1);
	assert_int_equal(f->s.n_held, 0);
	/* a file left at close goes with the directory (teardown checks) */
	put(f, "0000000000000005-00000007-00000002.frames", b, lb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(spool_made_private, setup, teardown),
	    cmocka_unit_test_setup_teardown(spool_files_in_order, setup, teardown),
	    cmocka_unit_test_setup_teardown(spool_cut_short, setup, teardown),
	    cmocka_unit_test_setup_teardown(spool_held_back, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
