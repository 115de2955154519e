/* stream_prog: a stream of like calls that times each one itself, for
 * coalesce_e2e.py. It opens PATH and makes N pwrite calls of SIZE bytes
 * at offset i * STRIDE (STRIDE 0: the same block again and again), each
 * timed with CLOCK_MONOTONIC around the call, then writes the durations
 * (nanoseconds, one a line, in call order) to DURS. Prints on stdout the
 * page faults its thread took in the loop ("faults N"): each is time its
 * timing holds (a first touch, by the shim, of a page of its ring: after
 * the shim's clock read) beside the calls' own.
 *
 *   stream_prog PATH N SIZE STRIDE DURS
 *
 * Exit status 0, or 1 with a message when a call fails. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: stream_prog PATH N SIZE STRIDE DURS\n");
		return 2;
	}
	unsigned long n = strtoul(argv[2], NULL, 10), size = strtoul(argv[3], NULL, 10);
	unsigned long stride = strtoul(argv[4], NULL, 10);
	uint64_t *dur = calloc(n ? n : 1, sizeof *dur);
	char *buf = malloc(size ? size : 1);
	if (!dur || !buf)
		return 1;
	memset(buf, 'x', size);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "stream_prog: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	memset(dur, 0, n * sizeof *dur); /* its pages touched before the loop */
	struct rusage r0, r1;
	getrusage(RUSAGE_THREAD, &r0);
	for (unsigned long i = 0; i < n; i++) {
		uint64_t t0 = now_ns();
		ssize_t w = pwrite(fd, buf, size, (off_t)(i * stride));
		dur[i] = now_ns() - t0;
		if (w != (ssize_t)size) {
			fprintf(stderr, "stream_prog: pwrite %lu: %s\n", i, w < 0 ? strerror(errno) : "short");
			return 1;
		}
	}
	getrusage(RUSAGE_THREAD, &r1);
	printf("faults %ld\n", (r1.ru_minflt - r0.ru_minflt) + (r1.ru_majflt - r0.ru_majflt));
	close(fd);
	FILE *f = fopen(argv[5], "w");
	if (!f)
		return 1;
	for (unsigned long i = 0; i < n; i++)
		fprintf(f, "%llu\n", (unsigned long long)dur[i]);
	fclose(f);
	free(dur);
	free(buf);
	return 0;
}
