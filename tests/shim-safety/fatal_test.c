/* fatal_test term|heap: a process that dies of a signal must still die of
 * it, and promptly, under the shim (which catches SIGABRT and the other
 * fatal signals a process brings on itself, left at their default, to send
 * a last frame; SIGTERM it leaves at its default).
 *   term  allocates and frees blocks of 2 KiB .. 200 KiB (arena locks,
 *         brk) with a write() now and then, until the driver's SIGTERM;
 *         gives up after 20 s and exits 3
 *   heap  overruns a malloc'd block into the top chunk's header, then
 *         allocates: glibc detects it inside malloc and abort()s (SIGABRT) */
#include <fcntl.h>

#include "check.h"

static void term_loop(void)
{
	int fd = open("term.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open term.dat");
	void *keep[64] = {0};
	double end = safety_now() + 20;
	for (unsigned long i = 0; safety_now() < end; i++) {
		size_t size = 2000 + (i * 7919) % 200000;
		free(keep[i % 64]);
		keep[i % 64] = malloc(size);
		CHECK(keep[i % 64] != NULL, "malloc(%zu)", size);
		if (i % 16 == 0)
			WRITE_ALL(fd, "z", 1);
	}
	exit(3);
}

static void heap_overrun(void)
{
	static volatile size_t overrun = 16;
	int fd = open("heap.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open heap.dat");
	WRITE_ALL(fd, "x", 1);
	char *p = malloc(100);
	CHECK(p != NULL, "malloc");
	memset(p, 0xff, 100 + overrun); /* the top chunk's size becomes nonsense */
	void *q = malloc(100000);       /* "malloc(): corrupted top size" */
	printf("not detected: %p\n", q);
	exit(4);
}

int main(int argc, char **argv)
{
	CHECK(argc == 2, "usage: fatal_test term|heap");
	if (strcmp(argv[1], "term") == 0)
		term_loop();
	if (strcmp(argv[1], "heap") == 0)
		heap_overrun();
	return 2;
}
