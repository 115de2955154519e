/* dlopen_test LIB N: loads LIB (libsafety_dl_io.so) with dlopen, calls its
 * safety_dl_io(N), unloads it, and again with RTLD_LAZY: 2N writes in all
 * (see dl_io.c for what one call does). */
#include <dlfcn.h>

#include "check.h"

static void load_and_call(const char *lib, int mode, int n)
{
	void *h = dlopen(lib, mode);
	CHECK(h != NULL, "dlopen %s: %s", lib, dlerror());
	int (*io)(int) = (int (*)(int))dlsym(h, "safety_dl_io");
	CHECK(io != NULL, "dlsym: %s", dlerror());
	int line = io(n);
	CHECK(line == 0, "safety_dl_io failed at dl_io.c:%d", line);
	CHECK(dlclose(h) == 0, "dlclose: %s", dlerror());
}

int main(int argc, char **argv)
{
	CHECK(argc == 3, "usage: dlopen_test LIB N");
	int n = atoi(argv[2]);
	load_and_call(argv[1], RTLD_NOW | RTLD_LOCAL, n);
	load_and_call(argv[1], RTLD_LAZY | RTLD_GLOBAL, n);
	printf("calls 2\nwrites_per_call %d\n", n);
	return 0;
}
