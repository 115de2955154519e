/* The node's leaf, for ranks on the other nodes of a multi-node
 * `iopulse run` (docs/collector.md, "The tree"): when IOPULSE_PARENT and
 * IOPULSE_ROOT_HOST are set and this host is not the root's, the ranks of
 * this node send to a leaf of their own at ipc://$TMPDIR/iopulse-JOB-HOST/,
 * and the first of them to take the directory's lock starts it:
 *
 *   IOPULSE_EXE collector --role leaf --parent $IOPULSE_PARENT --dir DIR
 *               --exit-idle 3s [--tick $IOPULSE_TICK_MS]
 *
 * The leaf is started with raw clone() calls that raise no SIGCHLD and
 * run no fork handlers, twice (it is not this process's child), without
 * LD_PRELOAD, with no descriptor of the application's but the lock (held
 * for its life) and its log (DIR/leaf.log). The application sees nothing of
 * it; if it cannot be started, the ranks' frames are refused and counted as
 * dropped, and the application runs on. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "shim.h"

extern char **environ;

/* clone(flags = 0): a copy of this process whose end signals no one. */
static pid_t quiet_fork(void)
{
	return (pid_t)syscall(SYS_clone, 0UL, NULL, NULL, NULL, NULL);
}

static void start_leaf(const char *exe, char *const argv[], char *const envp[], int lock_fd,
                       const char *log)
{
	pid_t pid = quiet_fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		/* Only system calls from here: the other threads' locks came along. */
		syscall(SYS_setsid);
		if (quiet_fork() == 0) {
			int null = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR);
			int out = (int)syscall(SYS_openat, AT_FDCWD, log, O_WRONLY | O_CREAT | O_APPEND, 0600);
			syscall(SYS_dup2, null, 0);
			syscall(SYS_dup2, out >= 0 ? out : null, 1);
			syscall(SYS_dup2, out >= 0 ? out : null, 2);
			syscall(SYS_dup2, lock_fd, 3);
			/* dup2 onto itself (the lock was fd 3 already) keeps its
			 * close-on-exec flag: the leaf then ran without the lock,
			 * a second rank started a second leaf, and the two could
			 * each take one of the two sockets and both give up. */
			syscall(SYS_fcntl, 3, F_SETFD, 0);
			syscall(SYS_close_range, 4U, ~0U, 0U);
			syscall(SYS_execve, exe, argv, envp);
			syscall(SYS_exit, 127);
		}
		syscall(SYS_exit, 0);
	}
	int st;
	while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
		;
}

/* The environment without LD_PRELOAD (the leaf is not monitored). */
static char **leaf_env(void)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 1, sizeof(*env));
	if (!env)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11))
			env[k++] = environ[i];
	return env;
}

bool shim_node_leaf(const char *host, char *addr, size_t addr_len, char *final, size_t final_len)
{
	const char *parent = getenv("IOPULSE_PARENT"), *root = getenv("IOPULSE_ROOT_HOST");
	const char *exe = getenv("IOPULSE_EXE"), *job = getenv("IOPULSE_JOB");
	if (!parent || !*parent || !root || !strcmp(root, host) || !exe || !job)
		return false;
	const char *tmp = getenv("TMPDIR");
	char dir[200], lock[240], log[240];
	int n = snprintf(dir, sizeof dir, "%s/iopulse-%s-%s", tmp && *tmp ? tmp : "/tmp", job, host);
	if (n < 0 || (size_t)n >= sizeof dir)
		return false;
	snprintf(addr, addr_len, "ipc://%s/leaf.ipc", dir);
	snprintf(final, final_len, "ipc://%s/final.ipc", dir);
	snprintf(lock, sizeof lock, "%s/leaf.lock", dir);
	snprintf(log, sizeof log, "%s/leaf.log", dir);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return true; /* frames will be refused and counted */
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return true;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		/* The first rank here: start the leaf, which keeps the lock. */
		const char *tick = getenv("IOPULSE_TICK_MS");
		char *argv[] = {(char *)exe, "collector", "--role", "leaf", "--parent", (char *)parent,
		                "--dir", dir, "--exit-idle", "3s", tick ? "--tick" : NULL,
		                (char *)tick, NULL};
		char **env = leaf_env();
		if (env) {
			start_leaf(exe, argv, env, fd, log);
			free(env);
		}
		iop_debug("started the node's leaf in %s", dir);
	}
	close(fd);
	return true;
}
