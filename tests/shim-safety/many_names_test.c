/* many_names_test: more file names than one frame holds. Creates N files
 * (argv[1]) with long names in the current directory, writes LEN bytes to
 * each and closes it, then exits. The shim names each file once and, at
 * exit, sends every name again before its last frame: names alone fill
 * frames then, and a frame with no room left for counters must still be
 * accounted right (it once was not, and the process crashed in exit). */
#include <fcntl.h>

#include "check.h"

#define LEN 3

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4000;
	CHECK(n > 0, "bad count %s", argv[1]);
	for (int i = 0; i < n; i++) {
		char path[160];
		snprintf(path, sizeof path,
		         "file-with-a-long-name-so-that-names-fill-frames-quickly-%06d.dat", i);
		int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
		CHECK(fd >= 0, "open %s", path);
		WRITE_ALL(fd, "abc", LEN);
		CLOSE_OK(fd);
	}
	return 0;
}
