/* Helpers every benchmark binary needs: which of its figures were asked for
 * on the command line, and the median of repeated runs. */
#ifndef IOP_BENCH_UTIL_H
#define IOP_BENCH_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* True when no name was given (print everything) or name was. */
static inline bool bench_wanted(int argc, char **argv, const char *name)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return true;
	return false;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts v in place and returns its median. */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
	return v[n / 2];
}

/* CPU time of the calling thread: on the shared 2-core machine wall time
 * measures the neighbours too, while "on one core" means this. */
static inline uint64_t bench_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A process's CPU time (user + system, /proc/PID/stat) in seconds; -1
 * when it cannot be read. */
static inline double bench_proc_cpu_s(pid_t pid)
{
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	bool got = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	const char *p = got ? strrchr(line, ')') : NULL; /* after comm */
	unsigned long ut = 0, st = 0;
	/* fields after comm: state(3) ... utime(14) stime(15) */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* A /proc/PID/status field in kB ("VmRSS:", "VmHWM:"), as MiB; -1/1024
 * when it is not there. */
static inline double bench_status_mib(pid_t pid, const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	double kib = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, field, strlen(field)) == 0 &&
		    sscanf(line + strlen(field), "%lf", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib / 1024;
}

#endif
