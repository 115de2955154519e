/* lock_wait: two ranks contend for a lock on a shared file, three times:
 * an fcntl F_SETLKW record lock, a flock and an F_OFD_SETLKW lock, each on
 * a file of its own (DIR/lock-fcntl.dat, lock-flock.dat, lock-ofd.dat).
 * Rank 0 takes the lock, says so (MPI_Barrier), holds it for the hold
 * time and releases it; rank 1 meanwhile blocks in the same lock call and
 * times it itself with CLOCK_MONOTONIC. Rank 1 also asks statfs and
 * fstatfs about the first file. Each rank prints one line:
 *
 *	lock-wait {"rank":R,"waits":[{"kind":"fcntl","path":P,"blocked_s":S},...]}
 *
 * (rank 0's waits are its uncontended takes). lock_wait.py checks what
 * iopulse recorded against it.
 *
 * Usage: lock_wait -d DIR [-t HOLD_MS] (the flock and OFD holds are half
 * of it). Exit status 0, or 1 when a call fails. */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

enum kind { K_FCNTL, K_FLOCK, K_OFD, K_COUNT };
static const char *const kind_names[K_COUNT] = {"fcntl", "flock", "ofd"};

static void die(const char *what)
{
	fprintf(stderr, "lock_wait: %s: %s\n", what, strerror(errno));
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* Takes (lock) or releases the kind's exclusive lock on the whole file. */
static int set_lock(int fd, enum kind k, bool lock)
{
	if (k == K_FLOCK)
		return flock(fd, lock ? LOCK_EX : LOCK_UN);
	struct flock lk = {.l_type = lock ? F_WRLCK : F_UNLCK, .l_whence = SEEK_SET};
	if (k == K_OFD)
		return fcntl(fd, lock ? F_OFD_SETLKW : F_OFD_SETLK, &lk);
	return fcntl(fd, lock ? F_SETLKW : F_SETLK, &lk);
}

/* One round: rank 0 holds the lock for hold_ms while rank 1 waits for it.
 * The blocked time of this rank's lock call, in seconds. */
static double round_of(enum kind k, const char *path, int rank, long hold_ms)
{
	if (rank == 0) {
		int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
		if (fd < 0)
			die(path);
		if (write(fd, "lock", 4) != 4)
			die("write");
		double t0 = now_s();
		if (set_lock(fd, k, true) != 0)
			die("lock (rank 0)");
		double took = now_s() - t0;
		MPI_Barrier(MPI_COMM_WORLD); /* rank 1: the lock is held */
		sleep_ms(hold_ms);
		if (set_lock(fd, k, false) != 0)
			die("unlock (rank 0)");
		MPI_Barrier(MPI_COMM_WORLD);
		close(fd);
		return took;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	int fd = open(path, O_RDWR);
	if (fd < 0)
		die(path);
	if (k == K_FCNTL) {
		struct statfs sf;
		if (statfs(path, &sf) != 0 || fstatfs(fd, &sf) != 0)
			die("statfs");
	}
	double t0 = now_s();
	if (set_lock(fd, k, true) != 0)
		die("lock (rank 1)");
	double blocked = now_s() - t0;
	if (set_lock(fd, k, false) != 0)
		die("unlock (rank 1)");
	MPI_Barrier(MPI_COMM_WORLD);
	close(fd);
	return blocked;
}

int main(int argc, char **argv)
{
	const char *dir = NULL;
	long hold_ms = 2000;
	int opt;
	MPI_Init(&argc, &argv);
	while ((opt = getopt(argc, argv, "d:t:")) != -1) {
		if (opt == 'd')
			dir = optarg;
		else if (opt == 't')
			hold_ms = strtol(optarg, NULL, 10);
	}
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!dir || hold_ms < 40 || size != 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -n 2 lock_wait -d DIR [-t HOLD_MS >= 40]\n");
		MPI_Finalize();
		return 1;
	}
	if (rank == 0 && mkdir(dir, 0755) != 0 && errno != EEXIST)
		die(dir);
	char paths[K_COUNT][4096];
	double blocked[K_COUNT];
	for (int k = 0; k < K_COUNT; k++) {
		snprintf(paths[k], sizeof paths[k], "%s/lock-%s.dat", dir, kind_names[k]);
		MPI_Barrier(MPI_COMM_WORLD);
		blocked[k] =
		    round_of((enum kind)k, paths[k], rank, k == K_FCNTL ? hold_ms : hold_ms / 2);
	}
	/* one write of the whole line: MPICH makes stdout unbuffered, so a
	 * line printed in pieces can be cut by the other rank's */
	static char line[K_COUNT * 4200 + 128];
	size_t off = (size_t)snprintf(
	    line, sizeof line, "lock-wait {\"rank\":%d,\"hold_ms\":%ld,\"waits\":[", rank, hold_ms);
	for (int k = 0; k < K_COUNT; k++)
		off += (size_t)snprintf(line + off, sizeof line - off,
		                        "%s{\"kind\":\"%s\",\"path\":\"%s\",\"blocked_s\":%.9f}",
		                        k ? "," : "", kind_names[k], paths[k], blocked[k]);
	snprintf(line + off, sizeof line - off, "]}\n");
	fputs(line, stdout);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
