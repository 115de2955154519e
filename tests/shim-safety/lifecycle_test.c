/* lifecycle_test: I/O at every stage of a process's life, where the shim
 * may not be up yet or may have shut down:
 *   preinit   .preinit_array: before any shared library's constructor,
 *             the shim's included (its wrappers run uninitialised)
 *   ctor      a constructor of the program (after the shim's)
 *   main      main itself
 *   atexit    a handler registered in main (runs before the shim's own
 *             exit handler, which was registered earlier)
 *   dtor      a destructor of the program (after the shim has finished)
 * Each stage writes STAGE_WRITES lines of 32 bytes to STAGE.dat through
 * POSIX and one fputs to STAGE.txt through STDIO, checking every return
 * value; a surprise ends the process with _exit(1). The driver checks the
 * files on disk and prints what the sink saw of each. */
#include <fcntl.h>

#include "check.h"

#define STAGE_WRITES 5
#define LINE         32

static void stage_io(const char *stage)
{
	char path[64];
	snprintf(path, sizeof path, "%s.dat", stage);
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "%s: open", stage);
	for (int i = 0; i < STAGE_WRITES; i++)
		WRITE_ALL(fd, safety_pattern(LINE), LINE);
	CHECK(fsync(fd) == 0, "%s: fsync", stage);
	CLOSE_OK(fd);
	snprintf(path, sizeof path, "%s.txt", stage);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL, "%s: fopen", stage);
	CHECK(fputs("0123456789abcdef0123456789abcde\n", f) >= 0, "%s: fputs", stage);
	CHECK(fprintf(f, "%s %d\n", stage, STAGE_WRITES) > 0, "%s: fprintf", stage);
	CHECK(fclose(f) == 0, "%s: fclose", stage);
}

static void preinit(int argc, char **argv, char **envp)
{
	stage_io("preinit");
}

__attribute__((section(".preinit_array"), used)) static void (*const preinit_fn)(int, char **,
                                                                                 char **) = preinit;

__attribute__((constructor)) static void ctor(void)
{
	stage_io("ctor");
}

__attribute__((destructor)) static void dtor(void)
{
	stage_io("dtor");
}

static void at_exit_io(void)
{
	stage_io("atexit");
}

int main(void)
{
	CHECK(atexit(at_exit_io) == 0, "atexit");
	stage_io("main");
	printf("stages preinit ctor main atexit dtor\nwrites %d\nline %d\n", STAGE_WRITES, LINE);
	CHECK(fflush(stdout) == 0, "fflush");
	return 0;
}
