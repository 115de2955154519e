/* threads_test N SIZE: 16 threads start together (a barrier), each opens
 * its own file tNN.dat, pwrite()s SIZE bytes N times (offsets cycling over
 * 64 slots) and closes it. Every return value is checked; the driver wants
 * the sink's counters for each file to be exactly N writes of N * SIZE
 * bytes, whatever the shim's rings dropped. */
#include <fcntl.h>
#include <pthread.h>

#include "check.h"

#define THREADS 16

static long n_writes;
static size_t size;
static pthread_barrier_t start;

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	char name[32];
	snprintf(name, sizeof name, "t%02d.dat", id);
	int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open %s", name);
	const char *data = safety_pattern(size);
	int b = pthread_barrier_wait(&start);
	CHECK(b == 0 || b == PTHREAD_BARRIER_SERIAL_THREAD, "barrier");
	for (long i = 0; i < n_writes; i++)
		PWRITE_ALL(fd, data, size, (off_t)(i % 64) * (off_t)size);
	CLOSE_OK(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	CHECK(argc == 3, "usage: threads_test N SIZE");
	n_writes = atol(argv[1]);
	size = (size_t)atol(argv[2]);
	CHECK(n_writes > 0 && size > 0 && size <= 65536, "bad N or SIZE");
	CHECK(pthread_barrier_init(&start, NULL, THREADS) == 0, "barrier init");
	pthread_t th[THREADS];
	double t0 = safety_now();
	for (int i = 0; i < THREADS; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i) == 0, "create");
	for (int i = 0; i < THREADS; i++)
		CHECK(pthread_join(th[i], NULL) == 0, "join");
	printf("threads %d\nwrites %ld\nsize %zu\nseconds %.3f\n", THREADS, n_writes, size,
	       safety_now() - t0);
	return 0;
}
