/* The shim-cost loop: N one-byte pwrite calls to a file (on tmpfs in the
 * benchmark), timed as a whole. Prints "ns_per_call X cpu_ns_per_call Y"
 * on stdout: wall time, and the loop thread's CPU time (which leaves out
 * the time it waited for a core: steadier on a shared machine).
 * Usage: pwrite_loop FILE N [idle-thread] [size=BYTES] [others]
 *
 * size=BYTES: each call writes that many bytes (default 1), at offsets
 * going up by it over a window of 4096 calls. others: also prints the CPU
 * time of the process's other threads (the shim's sender) per call,
 * 50 ms after the loop (what it left to drain).
 *
 * With idle-thread, a second thread (blocked in pause()) exists during the
 * loop, as in every MPI rank (Open MPI's and MPICH's runtimes start
 * threads). A process with more than one thread shares its descriptor
 * table, so the kernel takes and drops a reference on the file in every
 * pwrite: that alone costs a single-threaded program some tens of ns per
 * call once any thread (such as the shim's sender) starts. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* CPU time (ns) of this process's threads other than the caller, from
 * /proc/self/task: the shim's sender, when it is preloaded. */
static double other_threads_cpu_ns(void)
{
	char path[300];
	double ticks = 0;
	pid_t self = (pid_t)syscall(SYS_gettid);
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == self)
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		char line[1024];
		if (!f)
			continue;
		if (fgets(line, sizeof line, f)) {
			char *p = strrchr(line, ')');
			unsigned long ut = 0, st = 0;
			/* after the name: state, then fields 4.. ; utime and stime are 14 and 15 */
			if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
			                &st) == 2)
				ticks += (double)(ut + st);
		}
		fclose(f);
	}
	closedir(d);
	return ticks * 1e9 / (double)sysconf(_SC_CLK_TCK);
}

int main(int argc, char **argv)
{
	bool idle_thread = false, others = false;
	long size = 1;
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "idle-thread") == 0)
			idle_thread = true;
		else if (strncmp(argv[i], "size=", 5) == 0)
			size = atol(argv[i] + 5);
		else if (strcmp(argv[i], "others") == 0)
			others = true;
		else
			size = 0;
	}
	long n = argc >= 3 ? atol(argv[2]) : 0;
	if (argc < 3 || size <= 0 || size > 65536) {
		fprintf(stderr, "usage: pwrite_loop FILE N [idle-thread] [size=BYTES] [others]\n");
		return 1;
	}
	int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0 || n <= 0) {
		perror(argv[1]);
		return 1;
	}
	pthread_t th;
	if (idle_thread && pthread_create(&th, NULL, idle, NULL) != 0) {
		fprintf(stderr, "pwrite_loop: cannot start the idle thread\n");
		return 1;
	}
	char *buf = calloc(1, (size_t)size);
	if (!buf)
		return 1;
	/* a sequential stream over a window of 4096 blocks, again and again */
	struct timespec t0, t1, c0, c1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	for (long i = 0; i < n; i++) {
		if (pwrite(fd, buf, (size_t)size, (off_t)((i & 4095) * size)) != size) {
			perror("pwrite");
			return 1;
		}
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(fd);
	double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	double cpu = (double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec);
	printf("ns_per_call %.2f cpu_ns_per_call %.2f", ns / (double)n, cpu / (double)n);
	if (others) {
		/* let the sender drain what the loop left in its ring */
		usleep(50000);
		printf(" others_cpu_ns_per_call %.2f", other_threads_cpu_ns() / (double)n);
	}
	printf("\n");
	free(buf);
	return 0;
}
