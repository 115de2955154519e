/* POSIX cases of the errno table: opening, closing and moving bytes
 * (posix_cases), then seeking, syncing, stat, paths, dup, fcntl, locks,
 * statfs, mmap and temporary files (posix_meta_cases). See errno_table.h
 * for T(). */
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>

#include "errno_table.h"

static char buf[8192];
static volatile int minus_one = -1; /* an iovec count the compiler cannot check */

static const char *long_name(void)
{
	static char name[PATH_MAX + 100];
	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = 0;
	return name;
}

static void open_cases(void)
{
	int fd, dfd;
	T("open_creat", K_FD, W_OK_, fd = open("a.dat", O_CREAT | O_RDWR | O_TRUNC, 0644));
	T("close", K_NUM, W_OK_, close(fd));
	T("open_rdonly", K_FD, W_OK_, fd = open("a.dat", O_RDONLY));
	CLOSE_OK(fd);
	T("open_tmpfile", K_FD, W_OK_, fd = open("dir", O_TMPFILE | O_RDWR, 0600));
	CLOSE_OK(fd);
	T("open_enoent", K_FD, ENOENT, open("missing/x", O_RDONLY));
	T("open_enoent_empty", K_FD, ENOENT, open("", O_RDONLY));
	T("open_eexist", K_FD, EEXIST, open("a.dat", O_CREAT | O_EXCL | O_WRONLY, 0644));
	T("open_enotdir", K_FD, ENOTDIR, open("a.dat/x", O_RDONLY));
	T("open_eisdir", K_FD, EISDIR, open("dir", O_WRONLY));
	T("open_einval", K_FD, EINVAL, open("dir", O_TMPFILE | O_RDONLY, 0600));
	T("open_enametoolong", K_FD, ENAMETOOLONG, open(long_name(), O_RDONLY));
	T("open_efault_null", K_FD, EFAULT, open(null_ptr, O_RDONLY));

	T("open64_creat", K_FD, W_OK_, fd = open64("b.dat", O_CREAT | O_WRONLY, 0644));
	CLOSE_OK(fd);
	T("open64_enoent", K_FD, ENOENT, open64("missing/y", O_RDONLY));
	T("open64_eisdir", K_FD, EISDIR, open64("dir", O_RDWR));

	T("openat_cwd", K_FD, W_OK_, fd = openat(AT_FDCWD, "a.dat", O_RDONLY));
	CLOSE_OK(fd);
	dfd = open(".", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0, "open .");
	T("openat_dirfd", K_FD, W_OK_, fd = openat(dfd, "a.dat", O_RDONLY));
	CLOSE_OK(fd);
	T("openat_dirfd_creat", K_FD, W_OK_, fd = openat(dfd, "c.dat", O_CREAT | O_WRONLY, 0600));
	CLOSE_OK(fd);
	T("openat_enoent", K_FD, ENOENT, openat(dfd, "missing", O_RDONLY));
	T("openat_eexist", K_FD, EEXIST, openat(dfd, "a.dat", O_CREAT | O_EXCL | O_RDWR, 0600));
	T("openat_ebadf", K_FD, EBADF, openat(-1, "a.dat", O_RDONLY));
	T("openat_ebadf_closed", K_FD, EBADF, openat(CLOSED_FD, "a.dat", O_RDONLY));
	fd = open("a.dat", O_RDONLY);
	CHECK(fd >= 0, "open a.dat");
	T("openat_enotdir", K_FD, ENOTDIR, openat(fd, "x", O_RDONLY));
	CLOSE_OK(fd);
	CLOSE_OK(dfd);

	T("creat_ok", K_FD, W_OK_, fd = creat("d.dat", 0644));
	CLOSE_OK(fd);
	T("creat_eisdir", K_FD, EISDIR, creat("dir", 0644));
	T("creat_enoent", K_FD, ENOENT, creat("missing/d", 0644));

	T("close_ebadf_neg", K_NUM, EBADF, close(-1));
	T("close_ebadf", K_NUM, EBADF, close(CLOSED_FD));
}

/* write(), past RLIMIT_FSIZE: EFBIG (SIGXFSZ is ignored). */
static void efbig_cases(int fd)
{
	struct rlimit old, small;
	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0, "getrlimit");
	small = old;
	small.rlim_cur = 16384;
	CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0, "setrlimit");
	T("pwrite_efbig", K_NUM, EFBIG, pwrite(fd, buf, 10, 20000));
	CHECK(lseek(fd, 16384, SEEK_SET) == 16384, "lseek");
	T("write_efbig", K_NUM, EFBIG, write(fd, buf, 10));
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0, "setrlimit back");
}

/* read/write at the descriptor's position. */
static void sequential_cases(int fd, int ro, int wo, int dir)
{
	T("read_ok", K_NUM, W_OK_, read(fd, buf, 100));
	T("read_zero", K_NUM, W_OK_, read(fd, buf, 0));
	T("read_ebadf", K_NUM, EBADF, read(-1, buf, 10));
	T("read_ebadf_closed", K_NUM, EBADF, read(CLOSED_FD, buf, 10));
	T("read_ebadf_wronly", K_NUM, EBADF, read(wo, buf, 10));
	T("read_eisdir", K_NUM, EISDIR, read(dir, buf, 10));
	T("read_efault", K_NUM, EFAULT, read(fd, bad_ptr, 10));
	T("write_ok", K_NUM, W_OK_, write(fd, buf, 100));
	T("write_zero", K_NUM, W_OK_, write(fd, buf, 0));
	T("write_ebadf", K_NUM, EBADF, write(-1, buf, 10));
	T("write_ebadf_rdonly", K_NUM, EBADF, write(ro, buf, 10));
	T("write_efault", K_NUM, EFAULT, write(fd, bad_ptr, 10));
	T("write_epipe", K_NUM, EPIPE, (close(pipe_r) == 0 ? write(pipe_w, buf, 1) : -2));
	int p[2];
	CLOSE_OK(pipe_w);
	CHECK(pipe(p) == 0, "pipe");
	pipe_r = p[0];
	pipe_w = p[1];
	CHECK(lseek(fd, 0, SEEK_END) == 4096, "lseek end");
	T("read_eof", K_NUM, W_OK_, read(fd, buf, 10));
}

/* pread/pwrite and their 64 forms: at an explicit offset. */
static void positioned_cases(int fd, int ro, int dir)
{
	T("pread_ok", K_NUM, W_OK_, pread(fd, buf, 10, 5));
	T("pread_eof", K_NUM, W_OK_, pread(fd, buf, 10, 1 << 20));
	T("pread_einval", K_NUM, EINVAL, pread(fd, buf, 10, -1));
	T("pread_espipe", K_NUM, ESPIPE, pread(pipe_r, buf, 10, 0));
	T("pread_ebadf", K_NUM, EBADF, pread(-1, buf, 10, 0));
	T("pread_eisdir", K_NUM, EISDIR, pread(dir, buf, 10, 0));
	T("pwrite_ok", K_NUM, W_OK_, pwrite(fd, buf, 64, 8));
	T("pwrite_einval", K_NUM, EINVAL, pwrite(fd, buf, 10, -1));
	T("pwrite_espipe", K_NUM, ESPIPE, pwrite(pipe_w, buf, 10, 0));
	T("pwrite_ebadf", K_NUM, EBADF, pwrite(CLOSED_FD, buf, 10, 0));
	T("pwrite_ebadf_rdonly", K_NUM, EBADF, pwrite(ro, buf, 10, 0));
	T("pread64_ok", K_NUM, W_OK_, pread64(fd, buf, 20, 100));
	T("pread64_einval", K_NUM, EINVAL, pread64(fd, buf, 20, -5));
	T("pread64_ebadf", K_NUM, EBADF, pread64(-1, buf, 20, 0));
	T("pwrite64_ok", K_NUM, W_OK_, pwrite64(fd, buf, 20, 200));
	T("pwrite64_einval", K_NUM, EINVAL, pwrite64(fd, buf, 20, -5));
	T("pwrite64_ebadf", K_NUM, EBADF, pwrite64(ro, buf, 20, 0));
}

/* readv/writev and the p*v, p*v2 forms (offset -1: the current position). */
static void vector_cases(int fd, int ro)
{
	struct iovec iov[2] = {{buf, 30}, {buf + 100, 40}};
	CHECK(lseek(fd, 0, SEEK_SET) == 0, "lseek 0");
	T("readv_ok", K_NUM, W_OK_, readv(fd, iov, 2));
	T("readv_einval", K_NUM, EINVAL, readv(fd, iov, minus_one));
	T("readv_ebadf", K_NUM, EBADF, readv(-1, iov, 2));
	T("readv_efault", K_NUM, EFAULT, readv(fd, null_ptr, 1));
	T("writev_ok", K_NUM, W_OK_, writev(fd, iov, 2));
	T("writev_einval", K_NUM, EINVAL, writev(fd, iov, minus_one));
	T("writev_ebadf", K_NUM, EBADF, writev(ro, iov, 2));
	T("writev_efault", K_NUM, EFAULT, writev(fd, null_ptr, 1));
	T("preadv_ok", K_NUM, W_OK_, preadv(fd, iov, 2, 10));
	T("preadv_einval", K_NUM, EINVAL, preadv(fd, iov, 2, -1));
	T("preadv_ebadf", K_NUM, EBADF, preadv(-1, iov, 2, 0));
	T("pwritev_ok", K_NUM, W_OK_, pwritev(fd, iov, 2, 300));
	T("pwritev_einval", K_NUM, EINVAL, pwritev(fd, iov, 2, -2));
	T("pwritev_ebadf", K_NUM, EBADF, pwritev(CLOSED_FD, iov, 2, 0));
	T("preadv2_ok", K_NUM, W_OK_, preadv2(fd, iov, 2, 50, 0));
	T("preadv2_cur", K_NUM, W_OK_, preadv2(fd, iov, 2, -1, 0));
	T("preadv2_eopnotsupp", K_NUM, EOPNOTSUPP, preadv2(fd, iov, 2, 0, 0x40000000));
	T("preadv2_ebadf", K_NUM, EBADF, preadv2(-1, iov, 2, 0, 0));
	T("pwritev2_ok", K_NUM, W_OK_, pwritev2(fd, iov, 2, 500, 0));
	T("pwritev2_cur", K_NUM, W_OK_, pwritev2(fd, iov, 2, -1, 0));
	T("pwritev2_eopnotsupp", K_NUM, EOPNOTSUPP, pwritev2(fd, iov, 2, 0, 0x40000000));
	T("pwritev2_ebadf", K_NUM, EBADF, pwritev2(ro, iov, 2, 0, 0));
	T("pwritev2_ebadf_cur", K_NUM, EBADF, pwritev2(ro, iov, 2, -1, 0));
}

static void transfer_cases(void)
{
	int fd = open("data.bin", O_RDWR), ro = open("ro.txt", O_RDONLY);
	int wo = open("wo.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644), dir = open("dir", O_RDONLY);
	CHECK(fd >= 0 && ro >= 0 && wo >= 0 && dir >= 0, "open fixtures");
	memcpy(buf, safety_pattern(sizeof buf), sizeof buf);
	sequential_cases(fd, ro, wo, dir);
	positioned_cases(fd, ro, dir);
	vector_cases(fd, ro);
	efbig_cases(wo);
	CLOSE_OK(fd);
	CLOSE_OK(ro);
	CLOSE_OK(wo);
	CLOSE_OK(dir);
}

/* copy_file_range, sendfile, splice: the kernel moves the bytes. The
 * offsets the calls move on print as values. */
static void kernel_copy_cases(void)
{
	int fd = open("data.bin", O_RDONLY), ro = open("ro.txt", O_RDONLY);
	int wo = open("kc.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644), dir = open("dir", O_RDONLY);
	int p[2];
	CHECK(fd >= 0 && ro >= 0 && wo >= 0 && dir >= 0 && pipe(p) == 0, "open fixtures");
	off64_t oi = 10, oo = 0;
	T("copy_file_range_ok", K_NUM, W_OK_, copy_file_range(fd, NULL, wo, NULL, 100, 0));
	T("copy_file_range_offsets", K_NUM, W_OK_, copy_file_range(fd, &oi, wo, &oo, 50, 0));
	row_value("copy_file_range_off_in", (long)oi, 60);
	row_value("copy_file_range_off_out", (long)oo, 50);
	row_value("copy_file_range_pos_in", (long)lseek(fd, 0, SEEK_CUR), 100);
	T("copy_file_range_eof", K_NUM, W_OK_, copy_file_range(fd, &(off64_t){1 << 20}, wo, NULL, 9, 0));
	T("copy_file_range_ebadf", K_NUM, EBADF, copy_file_range(-1, NULL, wo, NULL, 10, 0));
	T("copy_file_range_ebadf_out", K_NUM, EBADF, copy_file_range(fd, NULL, ro, NULL, 10, 0));
	T("copy_file_range_einval_flags", K_NUM, EINVAL, copy_file_range(fd, NULL, wo, NULL, 10, 1));
	T("copy_file_range_eisdir", K_NUM, EISDIR, copy_file_range(dir, NULL, wo, NULL, 10, 0));
	T("copy_file_range_efault", K_NUM, EFAULT, copy_file_range(fd, bad_ptr, wo, NULL, 10, 0));

	off_t so = 5;
	T("sendfile_file", K_NUM, W_OK_, sendfile(wo, fd, NULL, 40));
	T("sendfile_offset", K_NUM, W_OK_, sendfile(wo, fd, &so, 30));
	row_value("sendfile_offset_after", (long)so, 35);
	row_value("sendfile_pos_in", (long)lseek(fd, 0, SEEK_CUR), 140);
	T("sendfile_pipe", K_NUM, W_OK_, sendfile(p[1], fd, NULL, 20));
	T("sendfile_ebadf", K_NUM, EBADF, sendfile(wo, CLOSED_FD, NULL, 10));
	T("sendfile_ebadf_out", K_NUM, EBADF, sendfile(ro, fd, NULL, 10));
	T("sendfile_efault", K_NUM, EFAULT, sendfile(wo, fd, bad_ptr, 10));
	off64_t so64 = 0;
	T("sendfile64_offset", K_NUM, W_OK_, sendfile64(wo, fd, &so64, 25));
	row_value("sendfile64_offset_after", (long)so64, 25);
	T("sendfile64_ebadf", K_NUM, EBADF, sendfile64(wo, -1, NULL, 10));

	/* the pipe holds sendfile_pipe's 20 bytes */
	T("splice_to_file", K_NUM, W_OK_, splice(p[0], NULL, wo, NULL, 20, 0));
	off64_t si = 100;
	T("splice_from_file", K_NUM, W_OK_, splice(fd, &si, p[1], NULL, 64, 0));
	row_value("splice_offset_after", (long)si, 164);
	T("splice_to_file_offset", K_NUM, W_OK_, splice(p[0], NULL, wo, &(off64_t){0}, 64, 0));
	T("splice_einval_no_pipe", K_NUM, EINVAL, splice(fd, NULL, wo, NULL, 10, 0));
	T("splice_ebadf", K_NUM, EBADF, splice(CLOSED_FD, NULL, p[1], NULL, 10, 0));
	T("splice_espipe", K_NUM, ESPIPE, splice(p[0], &(off64_t){0}, wo, NULL, 10, 0));
	CLOSE_OK(p[0]);
	CLOSE_OK(p[1]);
	CLOSE_OK(fd);
	CLOSE_OK(ro);
	CLOSE_OK(wo);
	CLOSE_OK(dir);
}

void posix_cases(void)
{
	open_cases();
	transfer_cases();
	kernel_copy_cases();
}

/* ------------------------------------------------------------ metadata */

static void seek_sync_cases(int fd, int ro)
{
	T("lseek_set", K_NUM, W_OK_, lseek(fd, 5, SEEK_SET));
	T("lseek_cur", K_NUM, W_OK_, lseek(fd, 10, SEEK_CUR));
	T("lseek_end", K_NUM, W_OK_, lseek(fd, 0, SEEK_END));
	T("lseek_einval_whence", K_NUM, EINVAL, lseek(fd, 0, 99));
	T("lseek_einval_neg", K_NUM, EINVAL, lseek(fd, -10, SEEK_SET));
	T("lseek_espipe", K_NUM, ESPIPE, lseek(pipe_r, 0, SEEK_SET));
	T("lseek_ebadf", K_NUM, EBADF, lseek(-1, 0, SEEK_SET));
	T("lseek64_set", K_NUM, W_OK_, lseek64(fd, 7, SEEK_SET));
	T("lseek64_einval", K_NUM, EINVAL, lseek64(fd, -1, SEEK_SET));
	T("lseek64_ebadf", K_NUM, EBADF, lseek64(CLOSED_FD, 0, SEEK_SET));

	T("fsync_ok", K_NUM, W_OK_, fsync(fd));
	T("fsync_ebadf", K_NUM, EBADF, fsync(-1));
	T("fsync_einval", K_NUM, EINVAL, fsync(pipe_r));
	T("fdatasync_ok", K_NUM, W_OK_, fdatasync(fd));
	T("fdatasync_ebadf", K_NUM, EBADF, fdatasync(CLOSED_FD));
	T("fdatasync_einval", K_NUM, EINVAL, fdatasync(pipe_w));
	T("ftruncate_ok", K_NUM, W_OK_, ftruncate(fd, 3000));
	T("ftruncate_einval", K_NUM, EINVAL, ftruncate(fd, -1));
	T("ftruncate_rdonly", K_NUM, EINVAL, ftruncate(ro, 0));
	T("ftruncate_ebadf", K_NUM, EBADF, ftruncate(-1, 0));
}

static void stat_cases(int fd)
{
	struct stat st;
	struct statx sx;
	T("stat_ok", K_NUM, W_OK_, stat("data.bin", &st));
	T("stat_dir", K_NUM, W_OK_, stat("dir", &st));
	T("stat_enoent", K_NUM, ENOENT, stat("missing", &st));
	T("stat_enotdir", K_NUM, ENOTDIR, stat("data.bin/x", &st));
	T("stat_efault", K_NUM, EFAULT, stat("data.bin", null_ptr));
	T("stat_enametoolong", K_NUM, ENAMETOOLONG, stat(long_name(), &st));
	T("lstat_ok", K_NUM, W_OK_, lstat("data.bin", &st));
	T("lstat_enoent", K_NUM, ENOENT, lstat("missing", &st));
	T("lstat_enotdir", K_NUM, ENOTDIR, lstat("ro.txt/", &st));
	T("fstat_ok", K_NUM, W_OK_, fstat(fd, &st));
	T("fstat_ebadf", K_NUM, EBADF, fstat(-1, &st));
	T("fstat_ebadf_closed", K_NUM, EBADF, fstat(CLOSED_FD, &st));
	T("fstat_efault", K_NUM, EFAULT, fstat(fd, null_ptr));
	int dfd = open("dir", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0, "open dir");
	T("fstatat_cwd", K_NUM, W_OK_, fstatat(AT_FDCWD, "data.bin", &st, 0));
	T("fstatat_dirfd", K_NUM, W_OK_, fstatat(dfd, "..", &st, 0));
	T("fstatat_empty", K_NUM, W_OK_, fstatat(fd, "", &st, AT_EMPTY_PATH));
	T("fstatat_enoent", K_NUM, ENOENT, fstatat(dfd, "missing", &st, 0));
	T("fstatat_ebadf", K_NUM, EBADF, fstatat(-1, "data.bin", &st, 0));
	T("fstatat_einval", K_NUM, EINVAL, fstatat(AT_FDCWD, "data.bin", &st, 0x40000000));
	T("statx_ok", K_NUM, W_OK_, statx(AT_FDCWD, "data.bin", 0, STATX_BASIC_STATS, &sx));
	T("statx_dirfd", K_NUM, W_OK_, statx(dfd, "..", 0, STATX_SIZE, &sx));
	T("statx_enoent", K_NUM, ENOENT, statx(AT_FDCWD, "missing", 0, STATX_SIZE, &sx));
	T("statx_einval", K_NUM, EINVAL, statx(AT_FDCWD, "data.bin", 0, STATX__RESERVED, &sx));
	T("statx_efault", K_NUM, EFAULT, statx(AT_FDCWD, "data.bin", 0, STATX_SIZE, null_ptr));
	T("statx_ebadf", K_NUM, EBADF, statx(CLOSED_FD, "x", 0, STATX_SIZE, &sx));
	CLOSE_OK(dfd);
}

static void path_cases(void)
{
	int fd = open("u.dat", O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0, "open u.dat");
	CLOSE_OK(fd);
	T("mkdir_ok", K_NUM, W_OK_, mkdir("m", 0755));
	T("mkdir_eexist", K_NUM, EEXIST, mkdir("m", 0755));
	T("mkdir_enoent", K_NUM, ENOENT, mkdir("missing/m", 0755));
	T("mkdir_enotdir", K_NUM, ENOTDIR, mkdir("u.dat/m", 0755));
	CHECK(mkdir("m/sub", 0755) == 0, "mkdir m/sub");
	T("rename_ok", K_NUM, W_OK_, rename("u.dat", "v.dat"));
	T("rename_enoent", K_NUM, ENOENT, rename("u.dat", "w.dat"));
	T("rename_eisdir", K_NUM, EISDIR, rename("v.dat", "dir"));
	T("rename_enotdir", K_NUM, ENOTDIR, rename("m/sub", "v.dat"));
	T("rename_einval", K_NUM, EINVAL, rename("m", "m/sub/deeper"));
	T("access_ok", K_NUM, W_OK_, access("v.dat", F_OK));
	T("access_r_ok", K_NUM, W_OK_, access("v.dat", R_OK | W_OK));
	T("access_enoent", K_NUM, ENOENT, access("u.dat", F_OK));
	T("access_eacces", K_NUM, EACCES, access("v.dat", X_OK));
	T("access_enotdir", K_NUM, ENOTDIR, access("v.dat/x", F_OK));
	T("access_einval", K_NUM, EINVAL, access("v.dat", 0x80));
	T("unlink_ok", K_NUM, W_OK_, unlink("v.dat"));
	T("unlink_enoent", K_NUM, ENOENT, unlink("v.dat"));
	T("unlink_eisdir", K_NUM, EISDIR, unlink("m"));
	T("unlink_enotdir", K_NUM, ENOTDIR, unlink("ro.txt/x"));
	T("rmdir_enotempty", K_NUM, ENOTEMPTY, rmdir("m"));
	T("rmdir_ok", K_NUM, W_OK_, rmdir("m/sub"));
	T("rmdir_enoent", K_NUM, ENOENT, rmdir("m/sub"));
	T("rmdir_enotdir", K_NUM, ENOTDIR, rmdir("ro.txt"));
	T("rmdir_einval", K_NUM, EINVAL, rmdir("m/."));
	CHECK(rmdir("m") == 0, "rmdir m");
}

static void dup_cases(int fd)
{
	int d;
	T("dup_ok", K_FD, W_OK_, d = dup(fd));
	CLOSE_OK(d);
	T("dup_ebadf", K_FD, EBADF, dup(-1));
	T("dup_ebadf_closed", K_FD, EBADF, dup(CLOSED_FD));
	T("dup2_ok", K_NUM, W_OK_, dup2(fd, 100));
	T("dup2_again", K_NUM, W_OK_, dup2(fd, 100));
	CLOSE_OK(100);
	T("dup2_same", K_FD, W_OK_, dup2(fd, fd));
	T("dup2_ebadf", K_NUM, EBADF, dup2(-1, 100));
	T("dup2_ebadf_target", K_NUM, EBADF, dup2(fd, -1));
	T("dup3_ok", K_NUM, W_OK_, dup3(fd, 101, O_CLOEXEC));
	CLOSE_OK(101);
	T("dup3_einval_same", K_NUM, EINVAL, dup3(fd, fd, 0));
	T("dup3_einval_flags", K_NUM, EINVAL, dup3(fd, 102, 0x1));
	T("dup3_ebadf", K_NUM, EBADF, dup3(CLOSED_FD, 102, 0));

	struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
	T("fcntl_dupfd", K_NUM, W_OK_, fcntl(fd, F_DUPFD, 200));
	CLOSE_OK(200);
	T("fcntl_dupfd_cloexec", K_NUM, W_OK_, fcntl(fd, F_DUPFD_CLOEXEC, 210));
	CLOSE_OK(210);
	T("fcntl_dupfd_einval", K_NUM, EINVAL, fcntl(fd, F_DUPFD, -1));
	T("fcntl_dupfd_ebadf", K_NUM, EBADF, fcntl(-1, F_DUPFD, 0));
	T("fcntl_dupfd_cloexec_ebadf", K_NUM, EBADF, fcntl(CLOSED_FD, F_DUPFD_CLOEXEC, 0));
	T("fcntl_getfl", K_NUM, W_OK_, fcntl(fd, F_GETFL));
	T("fcntl_setfl", K_NUM, W_OK_, fcntl(fd, F_SETFL, O_APPEND));
	T("fcntl_getfl_append", K_NUM, W_OK_, fcntl(fd, F_GETFL));
	T("fcntl_getfl_ebadf", K_NUM, EBADF, fcntl(-1, F_GETFL));
	T("fcntl_getfd", K_NUM, W_OK_, fcntl(fd, F_GETFD));
	T("fcntl_setlk", K_NUM, W_OK_, fcntl(fd, F_SETLK, &lk));
	T("fcntl_getlk", K_NUM, W_OK_, fcntl(fd, F_GETLK, &lk));
	row_value("fcntl_getlk_type", lk.l_type, F_UNLCK);
	T("fcntl_getlk_efault", K_NUM, EFAULT, fcntl(fd, F_GETLK, null_ptr));
	T("fcntl_einval_cmd", K_NUM, EINVAL, fcntl(fd, 9999));
	CHECK(fcntl(fd, F_SETFL, 0) == 0, "F_SETFL 0");
}

/* fcntl's record locks (process and open file description), flock. A
 * second open of data.bin is another open file description: its OFD locks
 * and flock conflict with the first's (never blocking: F_SETLKW and
 * F_OFD_SETLKW only where nothing conflicts). */
static void lock_cases(int fd, int ro)
{
	struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100};
	struct flock bad = lk;
	bad.l_type = 99;
	T("fcntl_setlkw", K_NUM, W_OK_, fcntl(fd, F_SETLKW, &lk));
	T("fcntl_setlk_ebadf", K_NUM, EBADF, fcntl(CLOSED_FD, F_SETLK, &lk));
	T("fcntl_setlk_ebadf_neg", K_NUM, EBADF, fcntl(-1, F_SETLK, &lk));
	T("fcntl_setlk_ebadf_rdonly", K_NUM, EBADF, fcntl(ro, F_SETLK, &lk));
	T("fcntl_setlk_einval", K_NUM, EINVAL, fcntl(fd, F_SETLK, &bad));
	T("fcntl_setlkw_efault", K_NUM, EFAULT, fcntl(fd, F_SETLKW, null_ptr));
	T("fcntl_getlk_ebadf", K_NUM, EBADF, fcntl(CLOSED_FD, F_GETLK, &lk));
	lk.l_type = F_UNLCK;
	T("fcntl_setlk_unlock", K_NUM, W_OK_, fcntl(fd, F_SETLK, &lk));
	struct flock64 lk64 = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	T("fcntl_setlk64", K_NUM, W_OK_, fcntl(fd, F_SETLK64, &lk64));
	T("fcntl_getlk64", K_NUM, W_OK_, fcntl(fd, F_GETLK64, &lk64));
	row_value("fcntl_getlk64_type", lk64.l_type, F_UNLCK); /* its own locks never conflict */
	struct flock all = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	T("fcntl64_setlkw_unlock", K_NUM, W_OK_, fcntl64(fd, F_SETLKW, &all));
	T("fcntl64_getlk_ebadf", K_NUM, EBADF, fcntl64(CLOSED_FD, F_GETLK, &lk));

	int other = open("data.bin", O_RDWR);
	CHECK(other >= 0, "open data.bin again");
	struct flock ofd = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
	T("fcntl_ofd_setlkw", K_NUM, W_OK_, fcntl(fd, F_OFD_SETLKW, &ofd));
	T("fcntl_ofd_setlk_eagain", K_NUM, EAGAIN, fcntl(other, F_OFD_SETLK, &ofd));
	T("fcntl_setlk_eagain_ofd", K_NUM, EAGAIN, fcntl(other, F_SETLK, &ofd));
	T("fcntl_ofd_getlk", K_NUM, W_OK_, fcntl(other, F_OFD_GETLK, &ofd));
	row_value("fcntl_ofd_getlk_type", ofd.l_type, F_WRLCK);
	struct flock owned = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_pid = 1};
	T("fcntl_ofd_setlk_einval_pid", K_NUM, EINVAL, fcntl(fd, F_OFD_SETLK, &owned));
	T("fcntl_ofd_getlk_ebadf", K_NUM, EBADF, fcntl(CLOSED_FD, F_OFD_GETLK, &ofd));
	ofd = (struct flock){.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
	T("fcntl_ofd_setlk_unlock", K_NUM, W_OK_, fcntl(fd, F_OFD_SETLK, &ofd));

	T("flock_ex", K_NUM, W_OK_, flock(fd, LOCK_EX));
	T("flock_ewouldblock", K_NUM, EWOULDBLOCK, flock(other, LOCK_EX | LOCK_NB));
	T("flock_sh_ewouldblock", K_NUM, EWOULDBLOCK, flock(other, LOCK_SH | LOCK_NB));
	T("flock_un", K_NUM, W_OK_, flock(fd, LOCK_UN));
	T("flock_sh_other", K_NUM, W_OK_, flock(other, LOCK_SH | LOCK_NB));
	T("flock_einval", K_NUM, EINVAL, flock(fd, 0));
	T("flock_ebadf", K_NUM, EBADF, flock(CLOSED_FD, LOCK_EX));
	T("flock_ebadf_neg", K_NUM, EBADF, flock(-1, LOCK_UN));
	CLOSE_OK(other);
}

static void statfs_cases(int fd)
{
	struct statfs sf;
	struct statfs64 sf64;
	int gone = open("gone.dat", O_CREAT | O_RDWR, 0644);
	CHECK(gone >= 0, "open gone.dat");
	CLOSE_OK(gone);
	T("statfs_ok", K_NUM, W_OK_, statfs("data.bin", &sf));
	T("statfs_dir", K_NUM, W_OK_, statfs("dir", &sf));
	T("statfs_excluded", K_NUM, W_OK_, statfs("/proc/self", &sf));
	T("statfs_enoent", K_NUM, ENOENT, statfs("missing", &sf));
	T("statfs_enoent_empty", K_NUM, ENOENT, statfs("", &sf));
	T("statfs_enotdir", K_NUM, ENOTDIR, statfs("data.bin/x", &sf));
	T("statfs_efault", K_NUM, EFAULT, statfs("data.bin", null_ptr));
	T("statfs_enametoolong", K_NUM, ENAMETOOLONG, statfs(long_name(), &sf));
	T("statfs64_ok", K_NUM, W_OK_, statfs64("data.bin", &sf64));
	T("statfs64_enoent", K_NUM, ENOENT, statfs64("missing", &sf64));
	T("fstatfs_ok", K_NUM, W_OK_, fstatfs(fd, &sf));
	T("fstatfs_pipe", K_NUM, W_OK_, fstatfs(pipe_r, &sf));
	T("fstatfs_ebadf", K_NUM, EBADF, fstatfs(-1, &sf));
	T("fstatfs_ebadf_closed", K_NUM, EBADF, fstatfs(gone, &sf));
	T("fstatfs_efault", K_NUM, EFAULT, fstatfs(fd, null_ptr));
	T("fstatfs64_ok", K_NUM, W_OK_, fstatfs64(fd, &sf64));
	T("fstatfs64_ebadf", K_NUM, EBADF, fstatfs64(CLOSED_FD, &sf64));
	CHECK(unlink("gone.dat") == 0, "unlink gone.dat");
}

static void mmap_cases(int fd, int ro)
{
	void *m;
	T("mmap_file", K_MAP, W_OK_, m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0));
	CHECK(m != MAP_FAILED && munmap(m, 4096) == 0, "munmap");
	T("mmap_file_private", K_MAP, W_OK_,
	  m = mmap(NULL, 2000, PROT_READ | PROT_WRITE, MAP_PRIVATE, ro, 0));
	CHECK(m != MAP_FAILED && munmap(m, 2000) == 0, "munmap");
	T("mmap_anon", K_MAP, W_OK_,
	  m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	CHECK(m != MAP_FAILED && munmap(m, 4096) == 0, "munmap");
	T("mmap_ebadf", K_MAP, EBADF, mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, -1, 0));
	T("mmap_ebadf_closed", K_MAP, EBADF, mmap(NULL, 4096, PROT_READ, MAP_SHARED, CLOSED_FD, 0));
	T("mmap_einval_len", K_MAP, EINVAL, mmap(NULL, 0, PROT_READ, MAP_SHARED, fd, 0));
	T("mmap_einval_off", K_MAP, EINVAL, mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 1));
	T("mmap_eacces", K_MAP, EACCES, mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, ro, 0));
	T("mmap_enodev", K_MAP, ENODEV, mmap(NULL, 4096, PROT_READ, MAP_SHARED, pipe_r, 0));
}

static void temp_cases(void)
{
	char t1[] = "tmpXXXXXX", t2[] = "tmpXXXX", t3[] = "missing/tXXXXXX";
	char t4[] = "otmpXXXXXX", t5[] = "otmp";
	int fd;
	T("mkstemp_ok", K_FD, W_OK_, fd = mkstemp(t1));
	CLOSE_OK(fd);
	row_value("mkstemp_filled", strcmp(t1, "tmpXXXXXX") != 0, 1);
	T("mkstemp_einval", K_FD, EINVAL, mkstemp(t2));
	T("mkstemp_enoent", K_FD, ENOENT, mkstemp(t3));
	T("mkostemp_ok", K_FD, W_OK_, fd = mkostemp(t4, O_CLOEXEC));
	row_value("mkostemp_cloexec", fcntl(fd, F_GETFD), FD_CLOEXEC);
	CLOSE_OK(fd);
	T("mkostemp_einval", K_FD, EINVAL, mkostemp(t5, 0));
	CHECK(unlink(t1) == 0 && unlink(t4) == 0, "unlink temps");
}

void posix_meta_cases(void)
{
	int fd = open("data.bin", O_RDWR), ro = open("ro.txt", O_RDONLY);
	CHECK(fd >= 0 && ro >= 0, "open fixtures");
	seek_sync_cases(fd, ro);
	stat_cases(fd);
	path_cases();
	dup_cases(fd);
	lock_cases(fd, ro);
	statfs_cases(fd);
	mmap_cases(fd, ro);
	temp_cases();
	CLOSE_OK(fd);
	CLOSE_OK(ro);
}
