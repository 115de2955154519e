/* Recordings in real files: written and read back through the file backend
 * in a temporary directory, and a writer process killed with SIGKILL while
 * it writes: every frame it had flushed (and told the parent about) reads
 * back, the cut is reported as truncation, never as damage. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rec_test_util.h"
#include "test_util.h"

#define BIG (1u << 20)

static char dir[64], path[128];

static int setup(void **state)
{
	snprintf(dir, sizeof dir, "%s", "/tmp/rec_file_test.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof path, "%s/job.iop", dir);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return rmdir(dir);
}

static void io_backend(void **state)
{
	struct rec_io *io;
	assert_int_equal(rec_io_file_create(path, &io), IOP_OK);
	assert_int_equal(rec_io_append(io, "hello ", 6), IOP_OK);
	assert_int_equal(rec_io_append(io, "world", 5), IOP_OK);
	uint64_t size;
	assert_int_equal(rec_io_size(io, &size), IOP_OK);
	assert_int_equal(size, 11);
	char buf[32];
	size_t got;
	assert_int_equal(rec_io_pread(io, buf, sizeof buf, 6, &got), IOP_OK);
	assert_int_equal(got, 5);
	assert_memory_equal(buf, "world", 5);
	assert_int_equal(rec_io_pread(io, buf, sizeof buf, 100, &got), IOP_OK);
	assert_int_equal(got, 0);
	assert_int_equal(rec_io_flush(io), IOP_OK);
	assert_int_equal(rec_io_close(io), IOP_OK);
	/* read-only: appends refused */
	assert_int_equal(rec_io_file_open(path, &io), IOP_OK);
	assert_int_equal(rec_io_append(io, "x", 1), IOP_ERR_STATE);
	assert_int_equal(rec_io_flush(io), IOP_ERR_STATE);
	assert_int_equal(rec_io_close(io), IOP_OK);
	assert_int_equal(rec_io_file_open("/nonexistent/x.iop", &io), IOP_ERR_NOT_FOUND);
	assert_int_equal(rec_io_file_create("/nonexistent/x.iop", &io), IOP_ERR_NOT_FOUND);
	/* a file on a full device */
	if (rec_io_file_create("/dev/full", &io) == IOP_OK) {
		assert_int_equal(rec_io_append(io, "x", 1), IOP_ERR_IO);
		assert_int_equal(rec_io_errno(io), ENOSPC);
		rec_io_close(io);
	}
}

static void mem_backend(void **state)
{
	struct rec_io *io;
	assert_int_equal(rec_io_mem_new(&io), IOP_OK);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(rec_io_append(io, "0123456789", 10), IOP_OK);
	rec_io_mem_fail_after(io, 10005);
	assert_int_equal(rec_io_append(io, "abcdefghij", 10), IOP_ERR_IO);
	assert_int_equal(rec_io_errno(io), ENOSPC);
	assert_int_equal(rec_io_append(io, "abcdefghij", 10), IOP_ERR_IO);
	assert_int_equal(rec_io_flush(io), IOP_ERR_IO);
	const uint8_t *p;
	size_t len;
	rec_io_mem_data(io, &p, &len);
	assert_int_equal(len, 10005);
	assert_memory_equal(p + 9995, "56789abcde", 10);
	rec_io_close(io);
	assert_int_equal(rec_io_mem_view("abc", 3, &io), IOP_OK);
	assert_int_equal(rec_io_append(io, "x", 1), IOP_ERR_STATE);
	char b[4];
	size_t got;
	assert_int_equal(rec_io_pread(io, b, 4, 1, &got), IOP_OK);
	assert_int_equal(got, 2);
	rec_io_close(io);
}

static void write_then_read(void **state)
{
	struct spec specs[64];
	size_t n = test_sample(specs, 64);
	for (int close = 0; close < 2; close++) {
		struct rec_io *io;
		assert_int_equal(rec_io_file_create(path, &io), IOP_OK);
		test_write(io, NULL, specs, n, close, NULL);
		assert_int_equal(rec_io_close(io), IOP_OK);
		FILE *fp = fopen(path, "rb");
		assert_non_null(fp);
		uint8_t *data = malloc(1 << 20);
		size_t len = fread(data, 1, 1 << 20, fp);
		fclose(fp);
		int64_t last;
		struct rec_info info;
		assert_int_equal(test_read_all(data, len, specs, n, &last, &info), n);
		assert_int_equal(info.clean, close);
		assert_int_equal(info.tail_bytes, 0);
		free(data);
		/* and through the file backend itself */
		struct rec_reader *r;
		assert_int_equal(rec_io_file_open(path, &io), IOP_OK);
		assert_int_equal(rec_open(io, &r, NULL, 0), IOP_OK);
		assert_int_equal(rec_info(r, &info), IOP_OK);
		assert_int_equal(info.frames_total, n);
		assert_int_equal(info.truncated, !close);
		test_close(r, io);
	}
}

static void big_payload(uint64_t seq, uint8_t *p)
{
	uint64_t x = seq * 0x9e3779b97f4a7c15ull + 1;
	for (size_t i = 0; i < BIG; i += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t v = i % 64 < 32 ? x : seq; /* half compressible */
		memcpy(p + i, &v, 8);
	}
}

/* The child: writes frames for ever, telling the parent each seq it flushed. */
static void writer_child(int ack)
{
	struct rec_io *io;
	struct rec_writer *w;
	struct rec_writer_opts o = {.start_ns = T0};
	uint8_t *p = malloc(BIG);
	if (!p || rec_io_file_create(path, &io) != IOP_OK ||
	    rec_writer_open(io, &o, "{\"job\":1}", 9, &w) != IOP_OK)
		_exit(2);
	for (uint64_t seq = 1;; seq++) {
		big_payload(seq, p);
		if (rec_write(w, seq % 10 ? REC_DELTA : REC_KEYFRAME, T0 + seq, p, BIG) != IOP_OK ||
		    rec_flush(w) != IOP_OK)
			_exit(3);
		if (write(ack, &seq, sizeof seq) != sizeof seq)
			_exit(4);
	}
}

static void killed_writer(void **state)
{
	uint8_t *want = malloc(BIG);
	assert_non_null(want);
	/* kill after so many acks, then so many microseconds: some kills land in
	 * the middle of a write(2), which then leaves a cut frame */
	static const int kill_after[] = {1, 7, 30, 61, 2, 3, 4, 5, 6, 8, 9, 10};
	static const int delay_us[] = {0, 0, 0, 0, 100, 200, 300, 400, 500, 700, 900, 1100};
	unsigned cut_frames = 0;
	for (size_t round = 0; round < sizeof kill_after / sizeof *kill_after; round++) {
		int fds[2];
		assert_int_equal(pipe(fds), 0);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			writer_child(fds[1]);
		}
		close(fds[1]);
		uint64_t acked = 0, seq;
		while (acked < (uint64_t)kill_after[round] &&
		       read(fds[0], &seq, sizeof seq) == sizeof seq)
			acked = seq;
		usleep((useconds_t)delay_us[round]);
		assert_int_equal(kill(pid, SIGKILL), 0);
		while (read(fds[0], &seq, sizeof seq) == sizeof seq) /* acks sent before it died */
			acked = seq;
		close(fds[0]);
		int status;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

		struct rec_io *io;
		struct rec_reader *r;
		assert_int_equal(rec_io_file_open(path, &io), IOP_OK);
		assert_int_equal(rec_open(io, &r, NULL, 0), IOP_OK);
		struct rec_frame f;
		uint64_t next = 0;
		enum iop_err err;
		while ((err = rec_next(r, &f, NULL, 0)) == IOP_OK) {
			assert_int_equal(f.seq, next);
			assert_int_equal(f.skipped, 0);
			if (f.seq > 0) {
				big_payload(f.seq, want);
				assert_int_equal(f.len, BIG);
				assert_memory_equal(f.payload, want, BIG);
			}
			next++;
		}
		assert_int_equal(err, IOP_ERR_NOT_FOUND);
		assert_true(next >= acked + 1); /* META and every flushed frame */
		struct rec_info info;
		assert_int_equal(rec_info(r, &info), IOP_OK);
		assert_true(info.truncated && !info.clean);
		assert_int_equal(info.corrupt, 0);
		assert_int_equal(info.frames_total, next);
		assert_true(info.last_ns == T0 + next - 1 || next == 1);
		cut_frames += info.tail_bytes > 0;
		print_message(
		    "killed after %llu acks: %llu frames read, %llu bytes of a cut frame\n",
		    (unsigned long long)acked, (unsigned long long)next,
		    (unsigned long long)info.tail_bytes);
		assert_int_equal(rec_seek_fraction(r, 0.5), IOP_OK);
		assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK);
		test_close(r, io);
	}
	print_message("%u of the kills cut a frame\n", cut_frames);
	/* the kernel finished every write(2) here; a cut frame made by hand */
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size - BIG / 3), 0);
	struct rec_io *io;
	struct rec_reader *r;
	assert_int_equal(rec_io_file_open(path, &io), IOP_OK);
	assert_int_equal(rec_open(io, &r, NULL, 0), IOP_OK);
	struct rec_info info;
	assert_int_equal(rec_info(r, &info), IOP_OK);
	assert_true(info.truncated && info.tail_bytes > 0 && info.corrupt == 0);
	assert_true(info.last_ns == T0 + info.frames_total - 1);
	test_close(r, io);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(io_backend, setup, teardown),
	    cmocka_unit_test(mem_backend),
	    cmocka_unit_test_setup_teardown(write_then_read, setup, teardown),
	    cmocka_unit_test_setup_teardown(killed_writer, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
