/* closed_fds_test loop|range: what daemons and some launchers do at start,
 * closing every descriptor above stderr (a close() loop, or close_range),
 * then ordinary I/O for 0.3 s and a normal exit. The shim's own descriptors
 * (nanomsg's sockets, eventfds, epoll) are among those closed: the program
 * must not notice, and nothing but its own bytes may land in its file
 * (which likely gets a number the shim's library was using). */
#include <fcntl.h>
#include <sys/stat.h>

#include "check.h"

int main(int argc, char **argv)
{
	CHECK(argc == 2, "usage: closed_fds_test loop|range");
	if (strcmp(argv[1], "loop") == 0) {
		for (int fd = 3; fd < 4096; fd++)
			close(fd); /* most are not open: EBADF is expected */
	} else {
		CHECK(close_range(3, ~0U, 0) == 0, "close_range");
	}
	int fd = open("after.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open after.dat");
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
