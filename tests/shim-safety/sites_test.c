/* sites_test N: call sites through a skipped library. The main thread
 * calls pwrite() N times directly (from direct_writes) and N times through
 * libsafety_site_lib (from library_writes); a second thread does the same
 * through the library (from thread_writes); a SIGALRM handler, firing every
 * 200 us meanwhile and for 0.1 s after (no other I/O then), writes through
 * the library too (from on_alarm), which unwinds inside a signal handler. Prints the counts and the
 * ns per call of each loop (the cost of an unwind per call shows in the library's). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include "check.h"

void site_lib_write(int fd, int n, size_t size);

#define SIZE 64

static int fd_main, fd_thread, fd_handler;
static volatile sig_atomic_t handler_calls;

__attribute__((noinline)) static double direct_writes(int n)
{
	double t0 = safety_now();
	for (int i = 0; i < n; i++)
		PWRITE_ALL(fd_main, safety_pattern(SIZE), SIZE, (off_t)i * SIZE);
	return safety_now() - t0;
}

__attribute__((noinline)) static double library_writes(int n)
{
	double t0 = safety_now();
	site_lib_write(fd_main, n, SIZE);
	return safety_now() - t0;
}

__attribute__((noinline)) static void *thread_writes(void *arg)
{
	sigset_t block; /* the handler runs in the main thread only */
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	CHECK(pthread_sigmask(SIG_BLOCK, &block, NULL) == 0, "pthread_sigmask");
	site_lib_write(fd_thread, *(int *)arg, SIZE);
	return NULL;
}

/* No I/O for a while: the handler's calls are then the outermost ones. */
static void spin(double seconds)
{
	double until = safety_now() + seconds;
	while (safety_now() < until)
		;
}

__attribute__((noinline)) static void on_alarm(int sig)
{
	int e = errno;
	site_lib_write(fd_handler, 1, SIZE);
	handler_calls++;
	errno = e;
	(void)sig;
}

static int open_file(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open %s", path);
	return fd;
}

int main(int argc, char **argv)
{
	CHECK(argc == 2, "usage: sites_test N");
	int n = atoi(argv[1]);
	fd_main = open_file("main.dat");
	fd_thread = open_file("thread.dat");
	fd_handler = open_file("handler.dat");
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction");
	struct itimerval it = {{0, 200}, {0, 200}};
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0, "setitimer");
	pthread_t th;
	CHECK(pthread_create(&th, NULL, thread_writes, &n) == 0, "pthread_create");
	double direct = direct_writes(n);
	double library = library_writes(n);
	CHECK(pthread_join(th, NULL) == 0, "pthread_join");
	spin(0.1);
	struct itimerval off = {{0, 0}, {0, 0}};
	CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0, "setitimer off");
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	CHECK(sigprocmask(SIG_BLOCK, &block, NULL) == 0, "sigprocmask");
	CLOSE_OK(fd_main);
	CLOSE_OK(fd_thread);
	CLOSE_OK(fd_handler);
	printf("writes %d %d\nhandler_writes %d\ndirect_ns %.1f\nlibrary_ns %.1f\n", n, SIZE,
	       (int)handler_calls, direct * 1e9 / n, library * 1e9 / n);
	return 0;
}
