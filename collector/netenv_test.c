/* The monitoring variables forwarded through the launcher's command line:
 * Open MPI's -x, srun's --export (and its -x, which is not Open MPI's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "netenv.h"

static int setup(void **state)
{
	clearenv();
	setenv("PATH", "/usr/bin", 1);
	setenv("LD_PRELOAD", "/x/libiopulse.so", 1);
	setenv("IOPULSE_KEY", "00", 1);
	return 0;
}

static void assert_argv(char **got, const char *const *want)
{
	size_t i = 0;
	for (; want[i]; i++)
		assert_string_equal(got[i], want[i]);
	assert_null(got[i]);
}

static void srun_export_lists(void **state)
{
	char *s;
	assert_null(coll_srun_export("ALL"));
	assert_null(coll_srun_export("all,FOO=1"));
	assert_string_equal(s = coll_srun_export("NONE"), "LD_PRELOAD,IOPULSE_KEY");
	free(s);
	assert_string_equal(s = coll_srun_export("HOME,FOO=a"), "HOME,FOO=a,LD_PRELOAD,IOPULSE_KEY");
	free(s);
	/* a name already listed is not listed again */
	assert_string_equal(s = coll_srun_export("IOPULSE_KEY,HOME"), "IOPULSE_KEY,HOME,LD_PRELOAD");
	free(s);
}

static void srun_command_lines(void **state)
{
	/* srun's -x excludes nodes: no Open MPI -x NAME inserted */
	char *exclude[] = {"/usr/bin/srun", "-x", "n01", "-n", "2", "./app", NULL};
	assert_null(coll_forward_argv(exclude));
	char *all[] = {"srun", "--export=ALL,FOO=1", "./app", NULL};
	assert_null(coll_forward_argv(all));
	char *plain[] = {"srun", "-n", "2", "./app", NULL};
	assert_null(coll_forward_argv(plain));

	char *none[] = {"srun", "--export=NONE", "-n", "2", "./app", NULL};
	char **out = coll_forward_argv(none);
	assert_argv(out, (const char *const[]){"srun", "--export=LD_PRELOAD,IOPULSE_KEY", "-n", "2",
					       "./app", NULL});
	free(out[1]), free(out);
	char *split[] = {"srun", "--export", "HOME", "./app", "--export=x", NULL};
	out = coll_forward_argv(split);
	assert_argv(out, (const char *const[]){"srun", "--export", "HOME,LD_PRELOAD,IOPULSE_KEY",
					       "./app", "--export=x", NULL});
	free(out[2]), free(out);
}

static void openmpi_dash_x(void **state)
{
	char *argv[] = {"mpirun", "-x", "FOO", "-n", "2", "./app", NULL};
	char **out = coll_forward_argv(argv);
	assert_argv(out, (const char *const[]){"mpirun", "-x", "LD_PRELOAD", "-x", "IOPULSE_KEY",
					       "-x", "FOO", "-n", "2", "./app", NULL});
	for (size_t i = 2; i < 5; i += 2)
		free(out[i]);
	free(out);
}

/* MPICH's mpiexec has no -x: a "-x" on its line is the program's own, and
 * nothing is inserted (hydra refused "-x LD_PRELOAD" before the program) */
static void hydra_leaves_dash_x(void **state)
{
	char *argv[] = {"mpiexec.mpich", "-n", "4", "./mpi-checkpoint", "-x", "32", NULL};
	if (access("/usr/bin/mpiexec.mpich", X_OK) == 0)
		assert_null(coll_forward_argv(argv));
	char *by_path[] = {"/usr/bin/mpiexec.hydra", "-n", "4", "./app", "-x", "32", NULL};
	if (access(by_path[0], X_OK) == 0)
		assert_null(coll_forward_argv(by_path));
	/* a launcher that is not hydra keeps the insertion (Open MPI's -x) */
	char *ompi[] = {"/no/such/mpirun", "-x", "FOO", "./app", NULL};
	char **out = coll_forward_argv(ompi);
	assert_non_null(out);
	assert_string_equal(out[1], "-x");
	for (size_t i = 2; out[i] && strcmp(out[i], "FOO"); i += 2)
		free(out[i]);
	free(out);
}

static void slurm_export_env(void **state)
{
	setenv("SLURM_EXPORT_ENV", "NONE", 1);
	coll_forward_env();
	assert_string_equal(getenv("SLURM_EXPORT_ENV"), "LD_PRELOAD,IOPULSE_KEY");
	setenv("SLURM_EXPORT_ENV", "ALL", 1);
	coll_forward_env();
	assert_string_equal(getenv("SLURM_EXPORT_ENV"), "ALL");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(srun_export_lists, setup),
		cmocka_unit_test_setup(srun_command_lines, setup),
		cmocka_unit_test_setup(openmpi_dash_x, setup),
		cmocka_unit_test_setup(hydra_leaves_dash_x, setup),
		cmocka_unit_test_setup(slurm_export_env, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
