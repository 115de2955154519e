/* sig_test: I/O from a signal handler while the main thread is inside
 * wrapped calls. An ITIMER_REAL fires every 100 us; its SIGALRM handler
 * write()s 16 bytes to handler_posix.dat and fprintf()s 16 bytes to
 * handler_stdio.dat, counting the calls that succeeded. Meanwhile the main
 * thread pwrite()s to main.dat and fwrite()s to main_stdio.dat for about a
 * second. Every return value is checked (a handler surprise is reported
 * after the loop: no stdio from the handler but its own stream).
 *
 * The first write() and vfprintf() calls of the process are the handler's:
 * the shim resolves their real functions inside the handler.
 *
 * Prints: handler_writes N, handler_fprintfs N, main_pwrites N, main_fwrites N,
 * ticks N, handler_failures N. */
#include <fcntl.h>
#include <signal.h>
#include <sys/time.h>

#include "check.h"

#define RECORD  16
#define MAIN_IO 512
#define RUN_S   1.0

static int h_fd;
static FILE *h_stream;
static volatile sig_atomic_t h_writes, h_fprintfs, h_failures, ticks;

static void on_alarm(int sig)
{
	int saved = errno;
	ticks++;
	if (write(h_fd, "0123456789abcde\n", RECORD) == RECORD)
		h_writes++;
	else
		h_failures++;
	if (fprintf(h_stream, "tick %10d\n", (int)ticks % 1000000000) == RECORD)
		h_fprintfs++;
	else
		h_failures++;
	errno = saved;
}

int main(void)
{
	static char stream_buf[1 << 16];
	h_fd = open("handler_posix.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(h_fd >= 0, "open handler_posix.dat");
	h_stream = fopen("handler_stdio.dat", "w");
	CHECK(h_stream != NULL, "fopen handler_stdio.dat");
	/* the handler's stream never allocates: a buffer of its own */
	CHECK(setvbuf(h_stream, stream_buf, _IOFBF, sizeof stream_buf) == 0, "setvbuf");
	int fd = open("main.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
	FILE *ms = fopen("main_stdio.dat", "w");
	CHECK(fd >= 0 && ms != NULL, "open main files");
	const char *data = safety_pattern(MAIN_IO);

	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction");
	struct itimerval it = {.it_interval = {0, 100}, .it_value = {0, 100}};
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0, "setitimer");

	long pwrites = 0, fwrites = 0;
	double end = safety_now() + RUN_S;
	while (safety_now() < end) {
		for (int i = 0; i < 64; i++) {
			PWRITE_ALL(fd, data, MAIN_IO, (off_t)(pwrites % 256) * MAIN_IO);
			pwrites++;
			size_t n = fwrite(data, 1, 64, ms);
			CHECK(n == 64, "fwrite returned %zu", n);
			fwrites++;
		}
		if (fwrites % 8192 == 0)
			CHECK(fseek(ms, 0, SEEK_SET) == 0, "fseek");
	}

	struct itimerval off = {0};
	CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0, "setitimer off");
	sa.sa_handler = SIG_IGN;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction ignore");
	CHECK(h_failures == 0, "%d handler calls failed", (int)h_failures);
	CHECK(fclose(h_stream) == 0 && fclose(ms) == 0, "fclose");
	CLOSE_OK(h_fd);
	CLOSE_OK(fd);
	CHECK(ticks > 100, "only %d ticks in %.1f s", (int)ticks, RUN_S);
	printf("handler_writes %d\nhandler_fprintfs %d\nmain_pwrites %ld\nmain_fwrites %ld\n"
	       "ticks %d\nhandler_failures %d\n",
	       (int)h_writes, (int)h_fprintfs, pwrites, fwrites, (int)ticks, (int)h_failures);
	return 0;
}
