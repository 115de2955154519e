/* no_unshare PROGRAM [ARGS...]: runs PROGRAM where unshare() fails with
 * EPERM (a seccomp filter, as a container's may be), with LD_PRELOAD set to
 * $NO_UNSHARE_PRELOAD: the shim's sender must then keep sharing the
 * application's descriptor table, as it did before it had one of its own.
 * Exits 77 when no filter can be installed. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: no_unshare PROGRAM [ARGS...]\n");
		return 2;
	}
	struct sock_filter code[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof code / sizeof *code, .filter = code};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("no_unshare: seccomp");
		return 77;
	}
	const char *preload = getenv("NO_UNSHARE_PRELOAD");
	if (preload)
		setenv("LD_PRELOAD", preload, 1);
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
