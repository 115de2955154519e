/* Logging: one line per message on the chosen fd, level filtering, errno
 * preserved, long messages cut with "...", and the output goes through the
 * raw system call (the test interposes write() and counts: zero calls). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "test_util.h"

/* If iop_log used write(), this would see it. */
static int libc_write_calls;
ssize_t write(int fd, const void *buf, size_t n);
ssize_t write(int fd, const void *buf, size_t n)
{
	libc_write_calls++;
	errno = ENOSYS;
	return -1;
}

static size_t read_all(int fd, char *buf, size_t cap)
{
	ssize_t n = read(fd, buf, cap - 1);
	assert_true(n >= 0);
	buf[n] = 0;
	return (size_t)n;
}

static void messages_are_lines_on_the_chosen_fd(void **state)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	iop_log_set_fd(p[1]);
	iop_log_set_prefix("iopulse-test");
	iop_log_set_level(IOP_LOG_INFO);
	errno = EXDEV;
	iop_warn("collector %s unreachable (%d)", "tcp://n1:7411", 3);
	assert_int_equal(errno, EXDEV);
	iop_debug("hidden at info level");
	iop_info("ends with newline\n");
	char out[2048];
	read_all(p[0], out, sizeof out);
	char want[128];
	snprintf(want, sizeof want,
	         "iopulse-test[%d] warn: collector tcp://n1:7411 unreachable (3)\n", (int)getpid());
	assert_non_null(strstr(out, want));
	assert_null(strstr(out, "hidden"));
	assert_non_null(strstr(out, "info: ends with newline\n"));
	assert_null(strstr(out, "\n\n")); /* no doubled newline */
	assert_int_equal(libc_write_calls, 0);
	close(p[0]);
	close(p[1]);
}

static void long_messages_are_cut(void **state)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	iop_log_set_fd(p[1]);
	iop_log_set_level(IOP_LOG_ERROR);
	char big[2000];
	memset(big, 'z', sizeof big - 1);
	big[sizeof big - 1] = 0;
	iop_error("%s", big);
	char out[4096];
	size_t n = read_all(p[0], out, sizeof out);
	assert_true(n <= IOP_LOG_LINE_MAX);
	assert_int_equal(out[n - 1], '\n');
	assert_memory_equal(out + n - 4, "...\n", 4);
	assert_int_equal(libc_write_calls, 0);
	close(p[0]);
	close(p[1]);
}

static void the_level_comes_from_the_environment(void **state)
{
	setenv("IOPULSE_LOG", "debug", 1);
	iop_log_init();
	assert_int_equal(iop_log_get_level(), IOP_LOG_DEBUG);
	setenv("IOPULSE_LOG", "bogus", 1);
	iop_log_init();
	assert_int_equal(iop_log_get_level(), IOP_LOG_WARN);
	unsetenv("IOPULSE_LOG");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(messages_are_lines_on_the_chosen_fd),
	    cmocka_unit_test(long_messages_are_cut),
	    cmocka_unit_test(the_level_comes_from_the_environment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
