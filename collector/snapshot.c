/* A state encoded in a forked child. See snapshot.h. */
#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* The mapping's header, written by the child before its byte. */
struct head {
	uint64_t len;
	uint32_t err;
	uint32_t done; /* 1 once len and err are set */
};
#define HEAD 64 /* the bytes start here */

static enum iop_err map_for(struct coll_snapshot *s, size_t max)
{
	if (max > SIZE_MAX - HEAD)
		return IOP_ERR_INVAL;
	size_t want = max + HEAD;
	if (s->map_len >= want)
		return IOP_OK;
	if (s->map_len)
		munmap(s->map, s->map_len);
	s->map_len = 0;
	/* address space only: pages are taken as the child writes them */
	void *m = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE,
	               -1, 0);
	if (m == MAP_FAILED)
		return IOP_ERR_NOMEM;
	s->map = m;
	s->map_len = want;
	return IOP_OK;
}

/* In the child: nothing of the parent's loop runs here. */
static _Noreturn void child(struct coll_snapshot *s, int wfd, size_t max,
                            void (*fill)(const void *arg, struct iop_wcur *c), const void *arg)
{
	/* the parent's handlers write to its self-pipe: not ours to do */
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGCHLD, SIGPIPE};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1); /* the parent is already gone */
	struct head *h = (struct head *)s->map;
	struct iop_wcur c = iop_wcur_make(s->map + HEAD, max);
	fill(arg, &c);
	h->len = c.err ? 0 : (uint64_t)(c.p - (s->map + HEAD));
	h->err = c.err == IOP_ERR_FULL ? IOP_ERR_OVERSIZED : (uint32_t)c.err;
	__atomic_store_n(&h->done, 1, __ATOMIC_RELEASE);
	char b = 1;
	(void)!write(wfd, &b, 1);
	_exit(0);
}

enum iop_err coll_snapshot_start(struct coll_snapshot *s, size_t max,
                                 void (*fill)(const void *arg, struct iop_wcur *c),
                                 const void *arg)
{
	if (s->fd >= 0)
		return IOP_ERR_STATE;
	enum iop_err e = map_for(s, max);
	if (e)
		return e;
	memset(s->map, 0, HEAD);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return IOP_ERR_IO;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return IOP_ERR_IO;
	}
	if (pid == 0) {
		close(p[0]);
		child(s, p[1], max, fill, arg);
	}
	close(p[1]);
	s->fd = p[0];
	s->pid = pid;
	return IOP_OK;
}

int coll_snapshot_fd(const struct coll_snapshot *s)
{
	return s->fd;
}

/* The child is done (its byte or its end came): reaps it. Another part of
 * the process may reap every child (`iopulse run` does, on SIGCHLD): then
 * waitpid says ECHILD, which is as good. */
static void reap(struct coll_snapshot *s)
{
	close(s->fd);
	s->fd = -1;
	while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
		;
	s->pid = 0;
}

enum iop_err coll_snapshot_collect(struct coll_snapshot *s, bool wait, const uint8_t **out,
                                   size_t *len)
{
	if (s->fd < 0)
		return IOP_ERR_STATE;
	struct pollfd pf = {.fd = s->fd, .events = POLLIN};
	int n;
	while ((n = poll(&pf, 1, wait ? -1 : 0)) < 0 && errno == EINTR)
		;
	if (n == 0)
		return IOP_ERR_TIMEOUT;
	reap(s); /* readable: its byte, or its end without one */
	const struct head *h = (const struct head *)s->map;
	if (!__atomic_load_n(&h->done, __ATOMIC_ACQUIRE))
		return IOP_ERR_IO;
	if (h->err)
		return h->err < IOP_ERR__COUNT ? (enum iop_err)h->err : IOP_ERR_IO;
	*out = s->map + HEAD;
	*len = (size_t)h->len;
	return IOP_OK;
}

void coll_snapshot_free(struct coll_snapshot *s)
{
	if (s->fd >= 0) {
		kill(s->pid, SIGKILL);
		reap(s);
	}
	if (s->map_len)
		munmap(s->map, s->map_len);
	s->map = NULL;
	s->map_len = 0;
}
