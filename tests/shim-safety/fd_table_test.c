/* fd_table_test table|shared|burst N: the shim's sender thread has a
 * descriptor table of its own, so that the application's threads alone use
 * theirs (docs/shim.md, "The kernel's share").
 *   table  opens probe.dat, then reads every thread's table through
 *          /proc/self/task/TID/fd: the shim's threads (named
 *          iopulse-sender: the sender and nanomsg's workers) must not hold
 *          probe.dat and must hold nanomsg's socket; the main thread must
 *          hold no socket, eventfd or epoll (this program makes none).
 *          Prints "senders N" (threads named iopulse-sender), "nanomsg N"
 *          (sockets, eventfds and epolls in their table), "fd2 LINK"
 *          (what their descriptor 2 is) and "ok".
 *   nostd  closes stdin and stderr and runs itself again as table: the
 *          sender's 2 must be /dev/null and its table must hold as many of
 *          nanomsg's as with them (a program started so had nanomsg's
 *          first eventfd on 2 until the sender put /dev/null there, and
 *          then aborted).
 *   shared the opposite, where unshare is refused (no_unshare): the shim's
 *          threads hold probe.dat, and nanomsg's socket is in the main
 *          thread's table too.
 *   burst  N one-byte pwrites to burst.dat as fast as it can, then returns
 *          from main at once: the sender is in the middle of draining the
 *          ring when exit asks it for the last frame, which must still
 *          carry exact totals. Prints "writes N". */
#include <dirent.h>
#include <fcntl.h>

#include "check.h"

/* Descriptors in thread tid's table whose link is one of texts (whole) or
 * starts with one. */
static int count_links(const char *tid, const char *const *texts, size_t n_texts, bool whole)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/self/task/%s/fd", tid);
	DIR *d = opendir(dir);
	CHECK(d != NULL, "opendir %s", dir);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char fd[128], link[4096];
		snprintf(fd, sizeof fd, "%s/%s", dir, e->d_name);
		ssize_t len = readlink(fd, link, sizeof link - 1);
		if (len < 0)
			continue; /* the opendir's own descriptor, closed meanwhile */
		link[len] = 0;
		for (size_t k = 0; k < n_texts; k++)
			n += whole ? strcmp(link, texts[k]) == 0
			           : strncmp(link, texts[k], strlen(texts[k])) == 0;
	}
	closedir(d);
	return n;
}

/* Whether thread tid's table holds a descriptor whose link is text (whole)
 * or starts with it. */
static bool holds(const char *tid, const char *text, bool whole)
{
	return count_links(tid, &text, 1, whole) > 0;
}

static void comm_of(const char *tid, char *comm, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%s/comm", tid);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL, "fopen %s", path);
	CHECK(fgets(comm, (int)len, f) != NULL, "read %s", path);
	comm[strcspn(comm, "\n")] = 0;
	fclose(f);
}

static int table(bool own)
{
	int fd = open("probe.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open probe.dat");
	WRITE_ALL(fd, "probe\n", 6);
	char probe[4096];
	CHECK(getcwd(probe, sizeof probe - 16) != NULL, "getcwd");
	strcat(probe, "/probe.dat");
	char self[32];
	snprintf(self, sizeof self, "%d", (int)getpid());
	static const char *const shim_kinds[] = {"socket:", "anon_inode:[eventfd]",
	                                         "anon_inode:[eventpoll]"};
	for (size_t i = 0; own && i < sizeof shim_kinds / sizeof *shim_kinds; i++)
		CHECK(!holds(self, shim_kinds[i], false), "the main thread's table holds a %s",
		      shim_kinds[i]);
	CHECK(own || holds(self, "socket:", false), "the main thread's table holds no socket");
	CHECK(holds(self, probe, true), "the main thread's table lacks %s", probe);
	DIR *d = opendir("/proc/self/task");
	CHECK(d != NULL, "opendir /proc/self/task");
	int senders = 0, nanomsg = -1;
	char fd2[256] = "none";
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, self) == 0)
			continue;
		char comm[64];
		comm_of(e->d_name, comm, sizeof comm);
		if (strcmp(comm, "iopulse-sender") != 0)
			continue;
		senders++;
		CHECK(holds(e->d_name, probe, true) == !own, "thread %s (%s) %s %s", e->d_name,
		      comm, own ? "shares the table: it holds" : "has a table of its own: it lacks",
		      probe);
		/* nanomsg connects in the background: its socket within 5 s */
		bool socket = false;
		for (double end = safety_now() + 5; !socket && safety_now() < end; usleep(10000))
			socket = holds(e->d_name, "socket:", false);
		CHECK(socket, "thread %s (%s) holds no socket", e->d_name, comm);
		if (nanomsg < 0) {
			nanomsg = count_links(e->d_name, shim_kinds,
			                      sizeof shim_kinds / sizeof *shim_kinds, false);
			char path[64];
			snprintf(path, sizeof path, "/proc/self/task/%s/fd/2", e->d_name);
			ssize_t n = readlink(path, fd2, sizeof fd2 - 1);
			fd2[n > 0 ? n : 0] = 0;
		}
	}
	closedir(d);
	CLOSE_OK(fd);
	printf("senders %d\nnanomsg %d\nfd2 %s\nok\n", senders, nanomsg, fd2[0] ? fd2 : "closed");
	return 0;
}

static int burst(long n)
{
	int fd = open("burst.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open burst.dat");
	for (long i = 0; i < n; i++)
		PWRITE_ALL(fd, "x", 1, i % 4096);
	printf("writes %ld\n", n);
	return 0; /* fd left open: exit closes it, unrecorded */
}

int main(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "table") == 0 || strcmp(argv[1], "shared") == 0))
		return table(strcmp(argv[1], "table") == 0);
	if (argc == 2 && strcmp(argv[1], "nostd") == 0)
		return safety_exec_without_std(argv[0], "table");
	CHECK(argc == 3 && strcmp(argv[1], "burst") == 0,
	      "usage: fd_table_test table|shared|nostd|burst N");
	return burst(atol(argv[2]));
}
