/* fork_test IO_CHILD: the parent writes parent.dat, and while a thread of
 * its own keeps pwrite()ing thread.dat, it starts four children:
 *   fork   forks a grandchild that writes fork_grandchild.dat and
 *          _exit()s, writes fork_child.dat (POSIX and STDIO), waits for it
 *          and exit()s: each records as a process of its own, none of
 *          the parent's I/O (whose rings and counters it inherited)
 *   term   writes term_child.dat, says so on a pipe and waits to be
 *          ended by the parent's SIGTERM (as Python's Pool ends its
 *          workers): it still dies of SIGTERM, its last frame sent first
 *   exec   a fork that execs /bin/true: a fresh shim, its own FINAL frame
 *   vfork  a vfork that execs IO_CHILD vfork_child.dat VFORK_WRITES
 *   spawn  posix_spawn of IO_CHILD spawn_child.dat SPAWN_WRITES
 * then waits for all of them (each must exit 0), writes parent.dat again
 * and stops the thread. Prints the pids and the exact totals the sink must
 * show for the parent. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include "check.h"

#define PARENT_WRITES 100 /* before the children, and again after */
#define PARENT_BYTES  256
#define FORK_WRITES   50
#define GRAND_WRITES  20
#define TERM_WRITES   30
#define VFORK_WRITES  40
#define SPAWN_WRITES  30
#define THREAD_BYTES  64

extern char **environ;

static _Atomic int stop_thread;
static long thread_writes;

static void *writer(void *arg)
{
	int fd = open("thread.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open thread.dat");
	while (!stop_thread) {
		PWRITE_ALL(fd, safety_pattern(THREAD_BYTES), THREAD_BYTES,
		           (off_t)(thread_writes % 1000) * THREAD_BYTES);
		thread_writes++;
	}
	CLOSE_OK(fd);
	return arg;
}

static void write_parent(int fd)
{
	for (int i = 0; i < PARENT_WRITES; i++)
		WRITE_ALL(fd, safety_pattern(PARENT_BYTES), PARENT_BYTES);
}

/* The child the parent ends with SIGTERM: its writes, a byte on ready,
 * then it waits. */
static void term_child(int ready)
{
	int fd = open("term_child.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "term child: open");
	for (int i = 0; i < TERM_WRITES; i++)
		WRITE_ALL(fd, safety_pattern(32), 32);
	CLOSE_OK(fd);
	WRITE_ALL(ready, "r", 1);
	for (;;)
		pause();
}

static void wait_ok(pid_t pid, const char *what);

/* The forked child: a grandchild of its own, ordinary I/O, then exit()
 * with its atexit handlers. */
static void fork_child(void)
{
	pid_t grand = fork();
	CHECK(grand >= 0, "child: fork");
	if (grand == 0) {
		int g = open("fork_grandchild.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
		CHECK(g >= 0, "grandchild: open");
		for (int i = 0; i < GRAND_WRITES; i++)
			WRITE_ALL(g, safety_pattern(64), 64);
		CLOSE_OK(g);
		_exit(0); /* no atexit handlers: as Python's multiprocessing ends */
	}
	int fd = open("fork_child.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "child: open");
	for (int i = 0; i < FORK_WRITES; i++)
		WRITE_ALL(fd, safety_pattern(128), 128);
	CLOSE_OK(fd);
	FILE *f = fopen("fork_child.txt", "w");
	CHECK(f && fputs("child\n", f) >= 0 && fclose(f) == 0, "child: stdio");
	wait_ok(grand, "grandchild");
	printf("grandchild_pid %d\n", (int)grand);
	exit(0);
}

static void wait_ok(pid_t pid, const char *what)
{
	int st;
	pid_t r;
	while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	CHECK(r == pid, "waitpid %s", what);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s child ended with status %#x", what, st);
}

int main(int argc, char **argv)
{
	CHECK(argc == 2, "usage: fork_test IO_CHILD");
	int fd = open("parent.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open parent.dat");
	write_parent(fd);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, writer, NULL) == 0, "pthread_create");
	/* the children start while the writer thread is in full swing */
	usleep(20000);

	pid_t forked = fork();
	CHECK(forked >= 0, "fork");
	if (forked == 0)
		fork_child();

	int ready[2];
	CHECK(pipe(ready) == 0, "pipe");
	pid_t termed = fork();
	CHECK(termed >= 0, "fork for term");
	if (termed == 0)
		term_child(ready[1]);
	char r;
	CHECK(read(ready[0], &r, 1) == 1, "term child's ready byte");
	CHECK(kill(termed, SIGTERM) == 0, "kill");
	int st;
	CHECK(waitpid(termed, &st, 0) == termed, "waitpid term");
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "term child ended with status %#x", st);

	pid_t exec_true = fork();
	CHECK(exec_true >= 0, "fork for exec");
	if (exec_true == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}

	char vcount[16], scount[16];
	snprintf(vcount, sizeof vcount, "%d", VFORK_WRITES);
	snprintf(scount, sizeof scount, "%d", SPAWN_WRITES);
	char *vargv[] = {argv[1], "vfork_child.dat", vcount, NULL};
	pid_t vforked = vfork();
	CHECK(vforked >= 0, "vfork");
	if (vforked == 0) {
		execv(argv[1], vargv);
		_exit(127);
	}

	char *sargv[] = {argv[1], "spawn_child.dat", scount, NULL};
	pid_t spawned;
	int rc = posix_spawn(&spawned, argv[1], NULL, NULL, sargv, environ);
	CHECK(rc == 0, "posix_spawn: %s", strerror(rc));

	wait_ok(forked, "fork");
	wait_ok(exec_true, "exec");
	wait_ok(vforked, "vfork");
	wait_ok(spawned, "spawn");
	stop_thread = 1;
	CHECK(pthread_join(th, NULL) == 0, "pthread_join");
	write_parent(fd);
	CLOSE_OK(fd);
	printf("term_pid %d\nterm_writes %d\n", (int)termed, TERM_WRITES);
	printf("parent_pid %d\nfork_pid %d\nexec_pid %d\nvfork_pid %d\nspawn_pid %d\n"
	       "parent_writes %d %d\nthread_writes %ld %d\nfork_writes %d\nvfork_writes %d\n"
	       "spawn_writes %d\ngrand_writes %d\n",
	       (int)getpid(), (int)forked, (int)exec_true, (int)vforked, (int)spawned,
	       2 * PARENT_WRITES, PARENT_BYTES, thread_writes, THREAD_BYTES, FORK_WRITES,
	       VFORK_WRITES, SPAWN_WRITES, GRAND_WRITES);
	return 0;
}
