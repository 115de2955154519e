/* aio cases of the errno table: posting (aio_read, aio_write, lio_listio
 * and the 64 forms) and collecting with aio_return. glibc reports most
 * failures of an operation through aio_error and a -1 from aio_return,
 * leaving errno alone; posting itself fails only for bad arguments. The
 * rows print aio_return's value, and aio_error's as a value row. */
#include <aio.h>
#include <fcntl.h>

#include "errno_table.h"

static char buf[256];

static struct aiocb cb_of(int fd, long long off, size_t n, int opcode)
{
	struct aiocb cb;
	memset(&cb, 0, sizeof cb);
	cb.aio_fildes = fd;
	cb.aio_offset = off;
	cb.aio_buf = buf;
	cb.aio_nbytes = n;
	cb.aio_lio_opcode = opcode;
	return cb;
}

/* Waits for cb (not wrapped: aio_suspend, aio_error) and prints its error. */
static void done(const char *name, struct aiocb *cb, int want)
{
	const struct aiocb *list[1] = {cb};
	while (aio_error(cb) == EINPROGRESS)
		aio_suspend(list, 1, NULL);
	row_value(name, aio_error(cb), want);
}

void aio_cases(void)
{
	int fd = open("aio.dat", O_CREAT | O_RDWR | O_TRUNC, 0644);
	int ro = open("ro.txt", O_RDONLY);
	CHECK(fd >= 0 && ro >= 0, "open aio.dat, ro.txt");
	memset(buf, 'a', sizeof buf);

	struct aiocb w = cb_of(fd, 0, 100, LIO_WRITE);
	T("aio_write_ok", K_NUM, W_OK_, aio_write(&w));
	done("aio_write_ok_error", &w, 0);
	T("aio_return_write", K_NUM, W_OK_, aio_return(&w));
	struct aiocb r = cb_of(fd, 10, 50, LIO_READ);
	T("aio_read_ok", K_NUM, W_OK_, aio_read(&r));
	done("aio_read_ok_error", &r, 0);
	T("aio_return_read", K_NUM, W_OK_, aio_return(&r));
	struct aiocb64 w64;
	memcpy(&w64, &w, sizeof w64);
	w64.aio_offset = 100;
	T("aio_write64_ok", K_NUM, W_OK_, aio_write64(&w64));
	done("aio_write64_ok_error", (struct aiocb *)&w64, 0);
	T("aio_return64_write", K_NUM, W_OK_, aio_return64(&w64));
	struct aiocb64 r64;
	memcpy(&r64, &r, sizeof r64);
	T("aio_read64_ok", K_NUM, W_OK_, aio_read64(&r64));
	done("aio_read64_ok_error", (struct aiocb *)&r64, 0);
	T("aio_return64_read", K_NUM, W_OK_, aio_return64(&r64));

	/* failures of the operation: aio_return -1, errno untouched */
	struct aiocb bad = cb_of(CLOSED_FD, 0, 10, LIO_READ);
	T("aio_read_closed_fd", K_NUM, W_OK_, aio_read(&bad));
	done("aio_read_closed_fd_error", &bad, EBADF);
	T("aio_return_closed_fd", K_NUM, W_EOF_, aio_return(&bad));
	struct aiocb rdonly = cb_of(ro, 0, 10, LIO_WRITE);
	T("aio_write_rdonly", K_NUM, W_OK_, aio_write(&rdonly));
	done("aio_write_rdonly_error", &rdonly, EBADF);
	T("aio_return_rdonly", K_NUM, W_EOF_, aio_return(&rdonly));
	struct aiocb neg = cb_of(fd, -1, 10, LIO_READ);
	T("aio_read_negative_offset", K_NUM, W_OK_, aio_read(&neg));
	done("aio_read_negative_offset_error", &neg, EINVAL);
	T("aio_return_negative_offset", K_NUM, W_EOF_, aio_return(&neg));
	/* failures of the post */
	struct aiocb prio = cb_of(fd, 0, 10, LIO_READ);
	prio.aio_reqprio = -1;
	T("aio_read_einval_prio", K_NUM, EINVAL, aio_read(&prio));
	T("aio_write_einval_prio", K_NUM, EINVAL, aio_write(&prio));

	struct aiocb l1 = cb_of(fd, 200, 30, LIO_WRITE), l2 = cb_of(fd, 0, 20, LIO_READ),
	             l3 = cb_of(fd, 0, 0, LIO_NOP);
	struct aiocb *list[] = {&l1, NULL, &l2, &l3};
	T("lio_listio_wait", K_NUM, W_OK_, lio_listio(LIO_WAIT, list, 4, NULL));
	T("aio_return_lio_write", K_NUM, W_OK_, aio_return(&l1));
	T("aio_return_lio_read", K_NUM, W_OK_, aio_return(&l2));
	T("lio_listio_nowait", K_NUM, W_OK_, lio_listio(LIO_NOWAIT, list, 4, NULL));
	done("lio_listio_nowait_write_error", &l1, 0);
	done("lio_listio_nowait_read_error", &l2, 0);
	T("aio_return_lio_nowait_write", K_NUM, W_OK_, aio_return(&l1));
	T("aio_return_lio_nowait_read", K_NUM, W_OK_, aio_return(&l2));
	T("lio_listio_einval_mode", K_NUM, EINVAL, lio_listio(99, list, 4, NULL));
	struct aiocb64 *list64[] = {(struct aiocb64 *)&l1};
	T("lio_listio64_wait", K_NUM, W_OK_, lio_listio64(LIO_WAIT, list64, 1, NULL));
	T("aio_return64_lio", K_NUM, W_OK_, aio_return64((struct aiocb64 *)&l1));
	CLOSE_OK(fd);
	CLOSE_OK(ro);
}
