/* Signals into a poll loop. See sigpipe.h. */
#include "sigpipe.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

static int fds[2] = {-1, -1};

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;
	(void)!write(fds[1], &c, 1);
	errno = saved;
}

int coll_sigpipe_open(const int *sigs, size_t n)
{
	if (fds[0] < 0 && pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < n; i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return fds[0];
}

ssize_t coll_sigpipe_read(unsigned char *sig, size_t max)
{
	return read(fds[0], sig, max);
}
