/* exec cases of the errno table: every exec form, failing (a successful
 * exec would end the table). The shim sends a last frame before each and
 * goes on recording when it fails; the driver expects one FINAL frame per
 * row whose name starts with "exec" or "fexecve", plus the one at exit. */
#include <fcntl.h>

#include "errno_table.h"

extern char **environ;

#define MISSING      "missing/prog"
#define MISSING_NAME "iopulse-no-such-program-here"

void exec_cases(void)
{
	char *argv[] = {"prog", "arg", NULL};
	T("execve_enoent", K_NUM, ENOENT, execve(MISSING, argv, environ));
	T("execv_enoent", K_NUM, ENOENT, execv(MISSING, argv));
	T("execvp_enoent", K_NUM, ENOENT, execvp(MISSING_NAME, argv));
	T("execvpe_enoent", K_NUM, ENOENT, execvpe(MISSING_NAME, argv, environ));
	T("execl_enoent", K_NUM, ENOENT, execl(MISSING, "prog", "arg", (char *)NULL));
	T("execlp_enoent", K_NUM, ENOENT, execlp(MISSING_NAME, "prog", "arg", (char *)NULL));
	T("execle_enoent", K_NUM, ENOENT,
	  execle(MISSING, "prog", "arg", (char *)NULL, (char *const *)environ));
	/* more arguments than fit a small array: counted as glibc counts */
	T("execl_many_args", K_NUM, ENOENT,
	  execl(MISSING, "p", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13",
	        "14", "15", "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27",
	        "28", "29", "30", "31", "32", "33", "34", "35", "36", "37", "38", "39",
	        (char *)NULL));
	T("execve_eacces", K_NUM, EACCES, execve("ro.txt", argv, environ));
	T("execv_enotdir", K_NUM, ENOTDIR, execv("ro.txt/x", argv));
	T("execv_eisdir", K_NUM, EACCES, execv("dir", argv));
	T("fexecve_ebadf", K_NUM, EBADF, fexecve(CLOSED_FD, argv, environ));
	int ro = open("ro.txt", O_RDONLY);
	CHECK(ro >= 0, "open ro.txt");
	T("fexecve_eacces", K_NUM, EACCES, fexecve(ro, argv, environ));
	CLOSE_OK(ro);
	T("execveat_enoent", K_NUM, ENOENT, execveat(AT_FDCWD, MISSING, argv, environ, 0));
	T("execveat_ebadf", K_NUM, EBADF, execveat(CLOSED_FD, "prog", argv, environ, 0));
}
