/* errno_table: every POSIX and STDIO call libiopulse.so wraps, on a success
 * path and on failure paths, one output line per call:
 *
 *	name ret errno
 *
 * ret is normalised so that runs compare (descriptors print as "fd",
 * pointers as 1/0), errno prints as its name (ENOENT) or as the sentinel
 * number 12345 when the call left it alone. Each case also checks itself
 * (success, or failure with the errno it should give): a surprise prints
 * a SURPRISE line on stderr and the exit status is 1.
 *
 * Run it in a fresh empty directory. After the table comes the probe:
 * PROBE_WRITES writes of PROBE_BYTES to probe.dat, which the driver finds
 * exactly in the sink's counters when the shim is active, and the copy
 * probe: COPY_BYTES written to copy.src, two thirds of it copied to
 * copy.dst by copy_file_range, sendfile and splice through a pipe (the
 * driver checks both files' counters), and the lock probe: 13 metadata
 * calls on lock.dat (locks, statfs, open, close), one of them failed, and
 * fcntl commands that are not recorded. Last come paths
 * that are invalid pointers (EFAULT from the kernel): a wrapper that reads
 * the path itself crashes there, so they go after everything else, and
 * stdout is line-buffered so that the lines before a crash are kept.
 * "errno_table no-bad-paths" leaves them out. */
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "errno_table.h"

#define PROBE_WRITES 7
#define PROBE_BYTES  100
#define COPY_BYTES   3000

void *volatile null_ptr = NULL;
void *volatile bad_ptr = (void *)1;
int pipe_r = -1, pipe_w = -1;

static unsigned n_rows, n_surprises;

static const char *err_name(int err)
{
	static char num[16];
	if (err == SENTINEL)
		return "12345";
	const char *s = strerrorname_np(err);
	if (s)
		return s;
	snprintf(num, sizeof num, "%d", err);
	return num;
}

static bool failed_value(enum ret_kind kind, intptr_t r)
{
	switch (kind) {
	case K_NUM:
	case K_FD:
		return r == -1;
	case K_PTR:
	case K_COUNT:
		return r == 0;
	case K_MAP:
		return (void *)r == MAP_FAILED;
	case K_VOID:
		return false;
	}
	return false;
}

static void print_ret(enum ret_kind kind, intptr_t r)
{
	switch (kind) {
	case K_FD:
		if (r >= 0) {
			fputs("fd", stdout);
			return;
		}
		break;
	case K_PTR:
		r = r != 0;
		break;
	case K_MAP:
		r = (void *)r != MAP_FAILED;
		break;
	case K_VOID:
		r = 0;
		break;
	default:
		break;
	}
	printf("%ld", (long)r);
}

void row(const char *name, enum ret_kind kind, int want, intptr_t ret, int err)
{
	printf("%s ", name);
	print_ret(kind, ret);
	printf(" %s\n", err_name(err));
	n_rows++;
	bool ok;
	if (kind == K_VOID)
		ok = err == (want > 0 ? want : SENTINEL);
	else if (want == W_OK_)
		ok = kind == K_COUNT || !failed_value(kind, ret);
	else if (want == W_EOF_ || want == W_EOFANY_)
		ok = failed_value(kind, ret) && (want == W_EOFANY_ || err == SENTINEL);
	else
		ok = failed_value(kind, ret) && err == want;
	if (!ok) {
		n_surprises++;
		fprintf(stderr, "SURPRISE %s: ret %ld errno %s, wanted %s\n", name, (long)ret,
		        err_name(err),
		        want == W_OK_ ? "success"
		        : want < 0    ? "EOF"
		                      : err_name(want));
	}
}

void row_value(const char *name, long got, long want)
{
	printf("%s %ld value\n", name, got);
	n_rows++;
	if (got != want) {
		n_surprises++;
		fprintf(stderr, "SURPRISE %s: value %ld, wanted %ld\n", name, got, want);
	}
}

static void make_fixtures(void)
{
	int fd = open("data.bin", O_CREAT | O_RDWR | O_TRUNC, 0644);
	CHECK(fd >= 0, "open data.bin");
	WRITE_ALL(fd, safety_pattern(4096), 4096);
	CLOSE_OK(fd);
	fd = open("ro.txt", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open ro.txt");
	WRITE_ALL(fd, "hello 42\n", 9);
	CLOSE_OK(fd);
	CHECK(mkdir("dir", 0755) == 0, "mkdir dir");
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pipe_r = p[0];
	pipe_w = p[1];
	CHECK(fcntl(CLOSED_FD, F_GETFD) == -1 && errno == EBADF, "fd %d is open", CLOSED_FD);
	CHECK(signal(SIGPIPE, SIG_IGN) != SIG_ERR, "SIGPIPE");
	CHECK(signal(SIGXFSZ, SIG_IGN) != SIG_ERR, "SIGXFSZ");
}

static void probe(void)
{
	int fd = open("probe.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0, "open probe.dat");
	for (int i = 0; i < PROBE_WRITES; i++)
		WRITE_ALL(fd, safety_pattern(PROBE_BYTES), PROBE_BYTES);
	CLOSE_OK(fd);
}

static void copy_probe(void)
{
	int src = open("copy.src", O_CREAT | O_RDWR | O_TRUNC, 0644);
	int dst = open("copy.dst", O_CREAT | O_WRONLY | O_TRUNC, 0644), p[2];
	CHECK(src >= 0 && dst >= 0 && pipe(p) == 0, "open the copy probe's files");
	WRITE_ALL(src, safety_pattern(COPY_BYTES), COPY_BYTES);
	off64_t at = 0, si = 1700;
	off_t so = 1000;
	CHECK(copy_file_range(src, &at, dst, NULL, 1000, 0) == 1000, "copy_file_range");
	CHECK(sendfile(dst, src, &so, 700) == 700, "sendfile");
	CHECK(splice(src, &si, p[1], NULL, 300, 0) == 300, "splice from copy.src");
	CHECK(splice(p[0], NULL, dst, NULL, 300, 0) == 300, "splice to copy.dst");
	CHECK(lseek(dst, 0, SEEK_END) == 2000, "copy.dst holds 2000 bytes");
	CLOSE_OK(p[0]);
	CLOSE_OK(p[1]);
	CLOSE_OK(src);
	CLOSE_OK(dst);
}

/* Lock and statfs calls are metadata calls on their file; other fcntl
 * commands (but dup) are not recorded. */
static void lock_probe(void)
{
	struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	struct flock bad = lk;
	bad.l_type = 99;
	struct statfs sf;
	int fd = open("lock.dat", O_CREAT | O_RDWR | O_TRUNC, 0644); /* 1 */
	CHECK(fd >= 0, "open lock.dat");
	CHECK(fcntl(fd, F_GETFL) >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) == 0, "F_GETFL, F_SETFD");
	CHECK(fcntl(fd, F_SETLK, &lk) == 0 && fcntl(fd, F_SETLKW, &lk) == 0, "F_SETLK[W]"); /* 3 */
	CHECK(fcntl(fd, F_GETLK, &lk) == 0 && lk.l_type == F_UNLCK, "F_GETLK"); /* 4 */
	CHECK(fcntl(fd, F_SETLK, &bad) == -1 && errno == EINVAL, "F_SETLK bad type"); /* 5 */
	struct flock ofd = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	lk = (struct flock){.l_type = F_UNLCK, .l_whence = SEEK_SET};
	CHECK(fcntl(fd, F_SETLK, &lk) == 0, "unlock"); /* 6 */
	CHECK(fcntl64(fd, F_OFD_SETLKW, &ofd) == 0 && fcntl(fd, F_OFD_GETLK, &ofd) == 0,
	      "F_OFD_SETLKW, F_OFD_GETLK"); /* 8 */
	CHECK(flock(fd, LOCK_EX) == 0 && flock(fd, LOCK_UN) == 0, "flock"); /* 10 */
	CHECK(fstatfs(fd, &sf) == 0 && statfs("lock.dat", &sf) == 0, "fstatfs, statfs"); /* 12 */
	CLOSE_OK(fd); /* 13 */
}

/* Paths the kernel cannot read: EFAULT, never a crash. */
static void efault_path_cases(void)
{
	struct stat st;
	struct statfs sf;
	struct statx sx;
	T("open_efault_path", K_FD, EFAULT, open(bad_ptr, O_RDONLY));
	T("creat_efault_path", K_FD, EFAULT, creat(bad_ptr, 0644));
	T("openat_efault_path", K_FD, EFAULT, openat(AT_FDCWD, bad_ptr, O_RDONLY));
	T("stat_efault_path", K_NUM, EFAULT, stat(bad_ptr, &st));
	T("statfs_efault_path", K_NUM, EFAULT, statfs(bad_ptr, &sf));
	T("statx_efault_path", K_NUM, EFAULT, statx(AT_FDCWD, bad_ptr, 0, STATX_SIZE, &sx));
	T("access_efault_path", K_NUM, EFAULT, access(bad_ptr, F_OK));
	T("mkdir_efault_path", K_NUM, EFAULT, mkdir(bad_ptr, 0755));
	T("unlink_efault_path", K_NUM, EFAULT, unlink(bad_ptr));
	T("rename_efault_path", K_NUM, EFAULT, rename(bad_ptr, "x"));
	T("fopen_efault_path", K_PTR, EFAULT, fopen(bad_ptr, "r"));
}

int main(int argc, char **argv)
{
	/* no-bad-paths: under ASan, whose interceptors read paths themselves */
	bool bad_paths = !(argc == 2 && strcmp(argv[1], "no-bad-paths") == 0);
	CHECK(setvbuf(stdout, NULL, _IOLBF, 0) == 0, "setvbuf stdout");
	make_fixtures();
	posix_cases();
	posix_meta_cases();
	stdio_cases();
	aio_cases();
	exec_cases();
	probe();
	copy_probe();
	lock_probe();
	if (bad_paths)
		efault_path_cases();
	printf("rows %u\n", n_rows);
	CHECK(fflush(stdout) == 0, "fflush stdout");
	if (n_surprises) {
		fprintf(stderr, "%u of %u cases did not go as expected\n", n_surprises, n_rows);
		return 1;
	}
	return 0;
}
