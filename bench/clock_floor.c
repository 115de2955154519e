/* clock_floor.so: the least any monitor that times every call can add, for
 * bench/shim_bench.py's fpp_overhead_ratio_clock_floor. Preloaded into
 * examples/fpp, it wraps write() and read() and does only what timing a
 * call needs: a TSC read before and after the real call, the difference
 * added to a per-thread total. No record, no ring, no sender, no
 * collector. Not a test double: a benchmark's yardstick, never linked
 * into iopulse. */

#include <dlfcn.h>
#include <stdint.h>
#include <unistd.h>
#include <x86intrin.h>

typedef ssize_t (*io_fn)(int, void *, size_t);

static io_fn real_write, real_read;
/* Kept so the compiler cannot drop the clock reads. */
static __thread uint64_t busy_ticks;

__attribute__((constructor)) static void init(void)
{
	real_write = (io_fn)dlsym(RTLD_NEXT, "write");
	real_read = (io_fn)dlsym(RTLD_NEXT, "read");
}

static ssize_t timed(io_fn fn, int fd, void *buf, size_t n)
{
	uint64_t t0 = __rdtsc();
	ssize_t r = fn(fd, buf, n);
	busy_ticks += __rdtsc() - t0;
	return r;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	return timed(real_write, fd, (void *)buf, n);
}

ssize_t read(int fd, void *buf, size_t n)
{
	return timed(real_read, fd, buf, n);
}
