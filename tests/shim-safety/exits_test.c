/* exits_test _exit|_Exit|quick_exit|sigpipe N: N writes of 100 bytes to
 * out.dat, then the process ends through a call that runs no atexit
 * handler (quick_exit runs at_quick_exit's only), or by the SIGPIPE of a
 * write to a pipe nobody reads, at once: the shim must still send the
 * writes it holds and a FINAL frame, as at exit, and the status must be
 * the one asked for (7), or death by SIGPIPE. A vfork child that fails to
 * exec and _exits, before that, must change nothing of the parent's. */
#include <fcntl.h>
#include <sys/wait.h>

#include "check.h"

int main(int argc, char **argv)
{
	CHECK(argc == 3, "usage: exits_test _exit|_Exit|quick_exit|sigpipe N");
	long n = atol(argv[2]);
	pid_t child = vfork();
	if (child == 0) {
		execl("/nonexistent/exits_test", "x", (char *)NULL);
		_exit(42);
	}
	int st;
	CHECK(child > 0 && waitpid(child, &st, 0) == child, "vfork child");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 42, "vfork child's status %#x", st);
	int fd = open("out.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open out.dat");
	for (long i = 0; i < n; i++)
		WRITE_ALL(fd, safety_pattern(100), 100);
	CLOSE_OK(fd);
	printf("ok %ld\n", n);
	fflush(stdout);
	if (strcmp(argv[1], "_exit") == 0)
		_exit(7);
	if (strcmp(argv[1], "_Exit") == 0)
		_Exit(7);
	if (strcmp(argv[1], "sigpipe") == 0) {
		int p[2];
		CHECK(pipe(p) == 0, "pipe");
		CLOSE_OK(p[0]);
		ssize_t w = write(p[1], "x", 1);
		CHECK(0, "write to a pipe without a reader returned %zd, no SIGPIPE", w);
	}
	CHECK(strcmp(argv[1], "quick_exit") == 0, "unknown way out %s", argv[1]);
	quick_exit(7);
}
