/* Host address and launcher environment. See netenv.h. */
#include "netenv.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <strings.h>
#include <unistd.h>

extern char **environ;

void coll_first_ipv4(char *buf, size_t len)
{
	struct ifaddrs *all;
	if (getifaddrs(&all) < 0)
		return;
	for (struct ifaddrs *i = all; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK) ||
		    !(i->ifa_flags & IFF_UP))
			continue;
		const struct sockaddr_in *a = (const struct sockaddr_in *)(const void *)i->ifa_addr;
		if (inet_ntop(AF_INET, &a->sin_addr, buf, (socklen_t)len))
			break;
	}
	freeifaddrs(all);
}

static bool listed(const char *list, char sep, const char *name, size_t n)
{
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, sep);
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && !strncmp(p, name, n))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

static bool forwarded(const char *var)
{
	return !strncmp(var, "IOPULSE_", 8) || !strncmp(var, "IOPFAULT_", 9) ||
	       !strncmp(var, "LD_PRELOAD=", 11);
}

static bool is_srun(const char *arg0)
{
	const char *base = strrchr(arg0, '/');
	return !strcmp(base ? base + 1 : arg0, "srun");
}

char *coll_srun_export(const char *list)
{
	if (!strcasecmp(list, "ALL") || !strncasecmp(list, "ALL,", 4))
		return NULL;
	bool none = !strcasecmp(list, "NONE"); /* NONE takes no names: ours replace it */
	size_t cap = strlen(list) + 1;
	for (char **e = environ; *e; e++)
		cap += forwarded(*e) ? strlen(*e) + 1 : 0;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	snprintf(out, cap, "%s", none ? "" : list);
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || !forwarded(*e) || listed(out, ',', *e, (size_t)(eq - *e)))
			continue;
		size_t at = strlen(out);
		snprintf(out + at, cap - at, "%s%.*s", at ? "," : "", (int)(eq - *e), *e);
	}
	return out;
}

/* srun's --export=LIST / --export LIST, when LIST is not ALL: the first
 * such option only (srun's own come before the program; a program's own
 * --export after an srun --export is left alone). */
static char **srun_argv(char **argv)
{
	for (size_t i = 1; argv[i]; i++) {
		bool joined = !strncmp(argv[i], "--export=", 9);
		if (!joined && (strcmp(argv[i], "--export") || !argv[i + 1]))
			continue;
		char *list = coll_srun_export(joined ? argv[i] + 9 : argv[i + 1]);
		if (!list)
			return NULL;
		size_t n = i + 2;
		while (argv[n])
			n++;
		char **out = calloc(n + 1, sizeof(*out));
		char *arg = out ? malloc(strlen(list) + 10) : NULL;
		if (!arg) {
			free(out), free(list);
			return NULL;
		}
		memcpy(out, argv, n * sizeof(*out));
		sprintf(arg, "%s%s", joined ? "--export=" : "", list);
		out[joined ? i : i + 1] = arg;
		free(list);
		return out;
	}
	return NULL;
}

/* MPICH's mpiexec (hydra: mpiexec.mpich, mpirun.mpich, mpiexec.hydra, or a
 * mpiexec that resolves to one): it has no -x, and passes the whole
 * environment on by itself. A "-x" on its line is the program's own (an
 * argument of mpi-checkpoint: hydra refused the -x NAME inserted before). */
static bool is_hydra(const char *arg0)
{
	char path[PATH_MAX], real[PATH_MAX];
	if (!strchr(arg0, '/')) { /* found as execvp will find it */
		const char *p = getenv("PATH");
		bool found = false;
		while (p && *p && !found) {
			size_t len = strcspn(p, ":");
			snprintf(path, sizeof path, "%.*s/%s", (int)len, p, arg0);
			found = access(path, X_OK) == 0;
			p += len + (p[len] == ':');
		}
		if (!found)
			return false;
		arg0 = path;
	}
	if (!realpath(arg0, real))
		return false;
	const char *base = strrchr(real, '/');
	base = base ? base + 1 : real;
	return strstr(base, "hydra") || strstr(base, ".mpich");
}

char **coll_forward_argv(char **argv)
{
	if (argv[0] && is_srun(argv[0]))
		return srun_argv(argv); /* srun's -x is --exclude */
	if (argv[0] && is_hydra(argv[0]))
		return NULL;
	size_t n = 0, dash_x = 0, ours = 0;
	for (; argv[n]; n++)
		dash_x += !strcmp(argv[n], "-x");
	for (char **e = environ; *e; e++)
		ours += forwarded(*e);
	if (!dash_x || !n)
		return NULL;
	char **out = calloc(n + 2 * ours + 1, sizeof(*out));
	if (!out)
		return NULL;
	size_t k = 0;
	out[k++] = argv[0];
	for (char **e = environ; *e; e++) {
		if (!forwarded(*e))
			continue;
		out[k++] = "-x";
		out[k++] = strndup(*e, (size_t)(strchr(*e, '=') - *e));
	}
	for (size_t i = 1; i < n; i++)
		out[k++] = argv[i];
	return out;
}

void coll_forward_env(void)
{
	const char *old = getenv("OMPI_MCA_mca_base_env_list");
	size_t cap = (old ? strlen(old) : 0) + 64;
	for (char **e = environ; *e; e++)
		cap += strlen(*e) + 1;
	char *list = malloc(cap);
	if (!list)
		return;
	snprintf(list, cap, "%s", old ? old : "");
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || !forwarded(*e))
			continue;
		size_t n = (size_t)(eq - *e);
		if (listed(list, ';', *e, n))
			continue;
		size_t at = strlen(list);
		snprintf(list + at, cap - at, "%s%.*s", at ? ";" : "", (int)n, *e);
	}
	setenv("OMPI_MCA_mca_base_env_list", list, 1);
	free(list);
	const char *slurm = getenv("SLURM_EXPORT_ENV"); /* srun's --export, as a variable */
	char *more = slurm ? coll_srun_export(slurm) : NULL;
	if (more)
		setenv("SLURM_EXPORT_ENV", more, 1);
	free(more);
}
