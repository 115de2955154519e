/* threads: POSIX writes from many threads of each rank. Each rank opens one
 * file DIR/threads.<rank> and starts T threads; thread t pwrites N blocks
 * of S bytes at offsets (t * N + i) * S, its own region of the file. The
 * main thread joins them, checks the file size with fstat and closes it.
 * Exercises the shim's per-thread rings and its thread-safe counters.
 *
 * Truth: one posix entry; write_ops = T * N, write_bytes = T * N * S (no
 * reads). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#include "truth.h"

struct options {
	const char *dir;
	uint64_t threads;
	uint64_t blocks; /* per thread */
	uint64_t size;
};

struct worker {
	pthread_t tid;
	int fd;
	uint64_t index;
	const struct options *o;
	const char *error; /* first failure, or NULL */
	int err;
	struct ex_io io;
};

static void usage(void)
{
	fprintf(stderr, "usage: threads [-d DIR] [-t THREADS] [-n BLOCKS] [-s BYTES]\n");
}

static struct options parse_options(int argc, char **argv)
{
	struct options o = {.dir = ".", .threads = 4, .blocks = 1000, .size = 4096};
	int c;

	while ((c = getopt(argc, argv, "d:t:n:s:")) != -1) {
		switch (c) {
		case 'd':
			o.dir = optarg;
			break;
		case 't':
			o.threads = ex_parse_count(optarg, 't', 1, 1024);
			break;
		case 'n':
			o.blocks = ex_parse_count(optarg, 'n', 1, UINT32_MAX);
			break;
		case 's':
			o.size = ex_parse_count(optarg, 's', 1, 1u << 30);
			break;
		default:
			usage();
			ex_die("bad option");
		}
	}
	if (optind != argc) {
		usage();
		ex_die("unexpected argument '%s'", argv[optind]);
	}
	return o;
}

/* Errors are handed back to the main thread, which reports them: MPI_Abort
 * from a thread the MPI library was not told about is not allowed. */
static void *run_worker(void *arg)
{
	struct worker *w = arg;
	const struct options *o = w->o;
	unsigned char *buf = malloc(o->size);

	if (!buf) {
		w->error = "out of memory";
		return NULL;
	}
	memset(buf, (int)('A' + w->index % 26), o->size);
	for (uint64_t i = 0; i < o->blocks; i++) {
		off_t off = (off_t)((w->index * o->blocks + i) * o->size);
		ssize_t n = pwrite(w->fd, buf, o->size, off);
		if (n < 0 || (uint64_t)n != o->size) {
			w->err = n < 0 ? errno : 0;
			w->error = n < 0 ? "pwrite failed" : "short pwrite";
			break;
		}
		w->io.write_ops++;
		w->io.write_bytes += (uint64_t)n;
	}
	free(buf);
	return NULL;
}

static void run_workers(int fd, const struct options *o, struct ex_io *io)
{
	struct worker *w = calloc(o->threads, sizeof *w);

	if (!w)
		ex_die("out of memory");
	for (uint64_t t = 0; t < o->threads; t++) {
		w[t] = (struct worker){.fd = fd, .index = t, .o = o};
		int rc = pthread_create(&w[t].tid, NULL, run_worker, &w[t]);
		if (rc != 0)
			ex_die("pthread_create: %s", strerror(rc));
	}
	for (uint64_t t = 0; t < o->threads; t++) {
		pthread_join(w[t].tid, NULL);
		if (w[t].error)
			ex_die("thread %llu: %s%s%s", (unsigned long long)t, w[t].error,
			       w[t].err ? ": " : "", w[t].err ? strerror(w[t].err) : "");
		io->write_ops += w[t].io.write_ops;
		io->write_bytes += w[t].io.write_bytes;
	}
	free(w);
}

int main(int argc, char **argv)
{
	char name[64], path[PATH_MAX];
	struct ex_io io = {0};
	struct stat st;
	int rank, provided, fd;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	ex_init("threads", rank);
	struct options o = parse_options(argc, argv);

	ex_mkdir_p(o.dir);
	snprintf(name, sizeof name, "threads.%d", rank);
	ex_join(path, o.dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		ex_die("open %s: %s", path, strerror(errno));
	run_workers(fd, &o, &io);
	if (fstat(fd, &st) != 0)
		ex_die("fstat %s: %s", path, strerror(errno));
	if ((uint64_t)st.st_size != o.threads * o.blocks * o.size)
		ex_die("%s: size %lld, wanted %llu", path, (long long)st.st_size,
		       (unsigned long long)(o.threads * o.blocks * o.size));
	if (close(fd) != 0)
		ex_die("close %s: %s", path, strerror(errno));

	json_t *truth = ex_truth_new();
	ex_truth_add(truth, path, "posix", &io);
	ex_truth_print(truth);
	MPI_Finalize();
	return 0;
}
