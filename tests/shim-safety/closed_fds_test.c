/* closed_fds_test loop|range|std: what daemons and some launchers do at start,
 * closing every descriptor above stderr (a close() loop, or close_range),
 * then ordinary I/O for 0.3 s and a normal exit. The shim's own descriptors
 * (nanomsg's sockets, eventfds, epoll, libunwind's pipe) are among those
 * closed: the program must not notice, its file gets the lowest number (3),
 * and nothing but its own bytes may land in it.
 *   std  closes stdin and stderr and runs itself again (std-child): a
 *        program started without them gets EBADF on them, and its first
 *        opens get 0 and 2, whatever the shim made at start-up. Reports on
 *        stdout (it has no stderr). */
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

int main(int argc, char **argv)
{
	CHECK(argc == 2, "usage: closed_fds_test loop|range|std");
	if (strcmp(argv[1], "std-child") == 0)
		return without_std();
	if (strcmp(argv[1], "std") == 0) {
		fflush(stdout);
		close(0);
		close(2);
		execl("/proc/self/exe", argv[0], "std-child", (char *)NULL);
		printf("SURPRISE exec: %s\n", strerror(errno));
		return 1;
	}
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
