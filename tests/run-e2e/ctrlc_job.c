/* ctrlc_job DIR SECONDS: the job ctrlc_e2e.py interrupts. The last rank
 * writes DIR/io.RANK in 4 KiB transfers, one a millisecond; every other
 * rank has nothing to do and waits for it: in MPI_Finalize when built
 * with MPI (-DCTRLC_MPI, the MPICH build), asleep otherwise (the Open MPI
 * build, whose programs MPICH's mpiexec cannot start; the rank is then
 * hydra's PMI_RANK, the size PMI_SIZE). Each rank creates DIR/ready.RANK
 * once it is where the interrupt must find it. Nothing ends it but a
 * signal: after SECONDS the writer exits 3 and the others 0, so a job
 * that was not interrupted is seen as such. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef CTRLC_MPI
#include <mpi.h>
#endif

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void mark_ready(const char *dir, int rank)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/ready.%d", dir, rank);
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

static int write_until(const char *dir, int rank, double end)
{
	char path[4096], block[4096];
	memset(block, 'c', sizeof block);
	snprintf(path, sizeof path, "%s/io.%d", dir, rank);
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	for (unsigned long i = 0; now() < end; i++) {
		if (write(fd, block, sizeof block) != (ssize_t)sizeof block) {
			perror("write");
			return 1;
		}
		if (i == 0)
			mark_ready(dir, rank);
		nap_ms(1);
	}
	close(fd);
	return 3;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: ctrlc_job DIR SECONDS\n");
		return 2;
	}
	const char *dir = argv[1];
	double end = now() + atof(argv[2]);
	int rank = 0, size = 1;
#ifdef CTRLC_MPI
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
#else
	const char *r = getenv("PMI_RANK"), *s = getenv("PMI_SIZE");
	rank = r ? atoi(r) : 0;
	size = s ? atoi(s) : 1;
#endif
	int status = 0;
	if (rank == size - 1) {
		status = write_until(dir, rank, end);
	} else {
		mark_ready(dir, rank); /* with MPI, a moment before MPI_Finalize waits */
#ifndef CTRLC_MPI
		while (now() < end)
			nap_ms(10);
#endif
	}
#ifdef CTRLC_MPI
	MPI_Finalize();
#endif
	return status;
}
