/* closed_fds_test loop|range|std|dup2: what daemons and some launchers do at start,
 * closing every descriptor above stderr (a close() loop, or close_range),
 * then ordinary I/O for 0.3 s and a normal exit. The shim's own descriptors
 * (nanomsg's sockets, eventfds, epoll, libunwind's pipe) are among those
 * closed: the program must not notice, its file gets the lowest number (3),
 * and nothing but its own bytes may land in it.
 *   std  closes stdin and stderr and runs itself again (std-child): a
 *        program started without them gets EBADF on them, and its first
 *        opens get 0 and 2, whatever the shim made at start-up. Reports on
 *        stdout (it has no stderr).
 *   dup2 puts a pipe's write end (dup2) on each descriptor it finds open
 *        above stderr at start (the shim's), and on 3 and 960, writes a
 *        byte through it and closes it: the reader must get the byte, then
 *        end of file (a close that kept the number open would leave a
 *        writer, and a reader waiting for the end would hang). */
#include <fcntl.h>
#include <sys/stat.h>

#include "check.h"

/* The exec'd half of std: stdin and stderr closed from the start. */
static int without_std(void)
{
	char c;
	errno = 0;
	ssize_t r = read(0, &c, 1);
	int read_errno = errno;
	ssize_t w = write(2, "x", 1);
	int write_errno = errno;
	int first = open("after.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	int second = open("after.dat", O_RDONLY);
	bool ok = r < 0 && read_errno == EBADF && w < 0 && write_errno == EBADF && first == 0 &&
	          second == 2;
	printf("%s std: read(0) %zd errno %d, write(2) %zd errno %d, opens gave %d and %d\n",
	       ok ? "ok" : "SURPRISE", r, read_errno, w, write_errno, first, second);
	return ok ? 0 : 1;
}

/* One dup2 target: a byte through it, then its close ends the pipe. */
static void dup2_target(int target)
{
	int p[2];
	CHECK(pipe2(p, O_NONBLOCK) == 0, "pipe2");
	for (int i = 0; i < 2; i++) { /* out of the targets' way */
		int high = fcntl(p[i], F_DUPFD, 2000);
		CHECK(high >= 2000, "F_DUPFD");
		CLOSE_OK(p[i]);
		p[i] = high;
	}
	CHECK(dup2(p[1], target) == target, "dup2 onto %d", target);
	CLOSE_OK(p[1]);
	WRITE_ALL(target, "x", 1);
	CLOSE_OK(target);
	char c;
	CHECK(read(p[0], &c, 1) == 1 && c == 'x', "read the byte written through %d", target);
	errno = 0;
	ssize_t r = read(p[0], &c, 1);
	CHECK(r == 0, "after close(%d): read %zd (%s), not end of file: %d is still open", target,
	      r, strerror(errno), target);
	CLOSE_OK(p[0]);
}

static int dup2_over(void)
{
	int targets[64], n = 0;
	for (int fd = 3; fd < 2000 && n < 62; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			targets[n++] = fd;
	targets[n++] = 3;
	targets[n++] = 960;
	for (int i = 0; i < n; i++)
		dup2_target(targets[i]);
	printf("ok dup2 onto %d descriptors (%d found open)\n", n, n - 2);
	return 0;
}

int main(int argc, char **argv)
{
	CHECK(argc == 2, "usage: closed_fds_test loop|range|std|dup2");
	if (strcmp(argv[1], "dup2") == 0)
		return dup2_over();
	if (strcmp(argv[1], "std-child") == 0)
		return without_std();
	if (strcmp(argv[1], "std") == 0)
		return safety_exec_without_std(argv[0], "std-child");
	if (strcmp(argv[1], "loop") == 0) {
		for (int fd = 3; fd < 4096; fd++)
			close(fd); /* most are not open: EBADF is expected */
	} else {
		CHECK(close_range(3, ~0U, 0) == 0, "close_range");
	}
	int fd = open("after.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd == 3, "open after.dat gave %d, not 3 (the lowest free)", fd);
	long n = 0;
	for (double end = safety_now() + 0.3; safety_now() < end; n++) {
		WRITE_ALL(fd, "0123456789", 10);
		usleep(200);
	}
	struct stat st;
	CHECK(fstat(fd, &st) == 0, "fstat");
	CHECK(st.st_size == n * 10, "after.dat holds %lld bytes, %ld written",
	      (long long)st.st_size, n * 10);
	CLOSE_OK(fd);
	printf("ok %ld\n", n);
	return 0;
}
