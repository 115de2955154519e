/* exec_test IO_CHILD N1 N2 M: a monitored program that execs.
 *   N1 writes of EXEC_BYTES to a.dat;
 *   execvp of a program that does not exist: -1 with ENOENT, and the
 *   program carries on (the shim sent a last frame and goes on recording);
 *   N2 more writes to a.dat, closed;
 *   execl of IO_CHILD b.dat M: the same process, now io_child, writes M
 *   writes of 200 bytes to b.dat under a shim of its own.
 * Prints "pid P" first (flushed: nothing is printed after the exec). */
#include <fcntl.h>

#include "check.h"

#define EXEC_BYTES 100

static void write_n(int fd, int n)
{
	for (int i = 0; i < n; i++)
		WRITE_ALL(fd, safety_pattern(EXEC_BYTES), EXEC_BYTES);
}

int main(int argc, char **argv)
{
	CHECK(argc == 5, "usage: exec_test IO_CHILD N1 N2 M");
	printf("pid %d\n", (int)getpid());
	CHECK(fflush(stdout) == 0, "fflush");
	int fd = open("a.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open a.dat");
	write_n(fd, atoi(argv[2]));
	char *missing[] = {"iopulse-no-such-program-here", NULL};
	errno = 0;
	int r = execvp(missing[0], missing);
	CHECK(r == -1 && errno == ENOENT, "execvp of a missing program returned %d", r);
	write_n(fd, atoi(argv[3]));
	CLOSE_OK(fd);
	execl(argv[1], "io_child", "b.dat", argv[4], (char *)NULL);
	CHECK(0, "execl %s", argv[1]);
}
