/* io_child PATH N: N writes of IO_CHILD_BYTES to PATH, then close; every
 * return value checked. What fork_test execs (after vfork) and spawns
 * (posix_spawn), so that a program started that way does its own I/O under
 * its own shim and shows in the sink as its own process. */
#include <fcntl.h>

#include "check.h"

#define IO_CHILD_BYTES 200

int main(int argc, char **argv)
{
	CHECK(argc == 3, "usage: io_child PATH N");
	int n = atoi(argv[2]);
	int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open %s", argv[1]);
	for (int i = 0; i < n; i++)
		WRITE_ALL(fd, safety_pattern(IO_CHILD_BYTES), IO_CHILD_BYTES);
	CLOSE_OK(fd);
	return 0;
}
