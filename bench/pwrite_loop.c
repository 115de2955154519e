/* The shim-cost loop: N one-byte pwrite calls to a file (on tmpfs in the
 * benchmark), timed as a whole. Prints "ns_per_call X cpu_ns_per_call Y"
 * on stdout: wall time, and the loop thread's CPU time (which leaves out
 * the time it waited for a core: steadier on a shared machine).
 * Usage: pwrite_loop FILE N [idle-thread]
 *
 * With idle-thread, a second thread (blocked in pause()) exists during the
 * loop, as in every MPI rank (Open MPI's and MPICH's runtimes start
 * threads). A process with more than one thread shares its descriptor
 * table, so the kernel takes and drops a reference on the file in every
 * pwrite: that alone costs a single-threaded program some tens of ns per
 * call once any thread (such as the shim's sender) starts. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 && !(argc == 4 && strcmp(argv[3], "idle-thread") == 0)) {
		fprintf(stderr, "usage: pwrite_loop FILE N [idle-thread]\n");
		return 1;
	}
	long n = atol(argv[2]);
	int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0 || n <= 0) {
		perror(argv[1]);
		return 1;
	}
	pthread_t th;
	if (argc == 4 && pthread_create(&th, NULL, idle, NULL) != 0) {
		fprintf(stderr, "pwrite_loop: cannot start the idle thread\n");
		return 1;
	}
	struct timespec t0, t1, c0, c1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	for (long i = 0; i < n; i++) {
		if (pwrite(fd, "x", 1, i & 4095) != 1) {
			perror("pwrite");
			return 1;
		}
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(fd);
	double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	double cpu = (double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec);
	printf("ns_per_call %.2f cpu_ns_per_call %.2f\n", ns / (double)n, cpu / (double)n);
	return 0;
}
