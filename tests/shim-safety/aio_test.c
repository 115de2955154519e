/* aio_test: POSIX aio under the shim, each transfer SIZE bytes to aio.dat:
 *   WRITES aio_write, posted and collected (aio_return) in batches of 16;
 *   LISTS lio_listio(LIO_WAIT) of 8 writes each, then collected;
 *   READS aio_read posted by the main thread, collected by another;
 *   BURST aio_write posted at once, more than the shim's table holds, then
 *   collected (the overflow is counted at once, never waited for);
 *   SPREAD more aio_write beyond the table, one to each of SPREAD other
 *   files (spread.dat.N): counted at once in more (file, layer, class)
 *   drop cells than a thread has, so some only in the layer's totals.
 * Every return value checked. Prints the counts the sink must show on
 * aio.dat, and the posix writes of all files: glibc's helper threads do
 * the transfers with its internal pread and pwrite, which must not be
 * counted a second time. */
#include <aio.h>
#include <fcntl.h>
#include <pthread.h>

#include "check.h"

#define SIZE   512
#define WRITES 2000
#define LISTS  100
#define READS  1000
#define BURST  5000
#define BATCH  16
#define SPREAD 100

static int fd;
static struct aiocb cbs[BURST];
static char data[SIZE], back[READS][SIZE];

static void prepare(struct aiocb *cb, long long off, void *buf, int opcode)
{
	memset(cb, 0, sizeof *cb);
	cb->aio_fildes = fd;
	cb->aio_offset = off;
	cb->aio_buf = buf;
	cb->aio_nbytes = SIZE;
	cb->aio_lio_opcode = opcode;
}

static void collect(struct aiocb *cb)
{
	const struct aiocb *list[1] = {cb};
	int e;
	while ((e = aio_error(cb)) == EINPROGRESS)
		aio_suspend(list, 1, NULL);
	CHECK(e == 0, "aio operation failed: %s", strerror(e));
	ssize_t r = aio_return(cb);
	CHECK(r == SIZE, "aio_return %zd", r);
}

__attribute__((noinline)) static void aio_writer(void)
{
	for (int i = 0; i < WRITES; i += BATCH) {
		for (int k = 0; k < BATCH; k++) {
			prepare(&cbs[k], (long long)(i + k) * SIZE, data, LIO_WRITE);
			CHECK(aio_write(&cbs[k]) == 0, "aio_write");
		}
		for (int k = 0; k < BATCH; k++)
			collect(&cbs[k]);
	}
}

__attribute__((noinline)) static void lio_writer(void)
{
	struct aiocb *list[8];
	for (int i = 0; i < LISTS; i++) {
		for (int k = 0; k < 8; k++) {
			prepare(&cbs[k], (long long)(i * 8 + k) * SIZE, data, LIO_WRITE);
			list[k] = &cbs[k];
		}
		CHECK(lio_listio(LIO_WAIT, list, 8, NULL) == 0, "lio_listio");
		for (int k = 0; k < 8; k++)
			collect(&cbs[k]);
	}
}

static void *reader_collect(void *arg)
{
	for (int i = 0; i < READS; i++)
		collect(&cbs[i]);
	return arg;
}

__attribute__((noinline)) static void aio_reader(void)
{
	for (int i = 0; i < READS; i++) {
		prepare(&cbs[i], (long long)i * SIZE, back[i], LIO_READ);
		CHECK(aio_read(&cbs[i]) == 0, "aio_read");
	}
	pthread_t th;
	CHECK(pthread_create(&th, NULL, reader_collect, NULL) == 0, "pthread_create");
	CHECK(pthread_join(th, NULL) == 0, "pthread_join");
	for (int i = 0; i < READS; i++)
		CHECK(memcmp(back[i], data, SIZE) == 0, "read back %d", i);
}

__attribute__((noinline)) static void aio_burst(void)
{
	for (int i = 0; i < BURST; i++) {
		prepare(&cbs[i], (long long)i * SIZE, data, LIO_WRITE);
		CHECK(aio_write(&cbs[i]) == 0, "aio_write %d", i);
	}
	for (int i = 0; i < BURST; i++)
		collect(&cbs[i]);
}

/* The shim's table full (BURST >= 4096 posted first), then the spread. */
__attribute__((noinline)) static void aio_spread(void)
{
	static struct aiocb spread[SPREAD];
	for (int i = 0; i < BURST; i++) {
		prepare(&cbs[i], (long long)i * SIZE, data, LIO_WRITE);
		CHECK(aio_write(&cbs[i]) == 0, "aio_write %d", i);
	}
	int main_fd = fd;
	for (int i = 0; i < SPREAD; i++) {
		char name[32];
		snprintf(name, sizeof name, "spread.dat.%d", i);
		fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
		CHECK(fd >= 0, "open %s", name);
		prepare(&spread[i], 0, data, LIO_WRITE);
		CHECK(aio_write(&spread[i]) == 0, "aio_write %s", name);
	}
	for (int i = 0; i < SPREAD; i++) {
		collect(&spread[i]);
		CLOSE_OK(spread[i].aio_fildes);
	}
	fd = main_fd;
	for (int i = 0; i < BURST; i++)
		collect(&cbs[i]);
}

int main(void)
{
	memcpy(data, safety_pattern(SIZE), SIZE);
	fd = open("aio.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
	CHECK(fd >= 0, "open aio.dat");
	aio_writer();
	lio_writer();
	aio_reader();
	aio_burst();
	aio_spread();
	CLOSE_OK(fd);
	printf("writes %d %d\nreads %d %d\naio_writer %d\nlio_writer %d\naio_reader %d\n"
	       "aio_burst %d\nall_writes %d %d\n",
	       WRITES + LISTS * 8 + 2 * BURST, SIZE, READS, SIZE, WRITES, LISTS * 8, READS, BURST,
	       WRITES + LISTS * 8 + 2 * BURST + SPREAD, SIZE);
	return 0;
}
