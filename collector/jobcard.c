/* Job cards and `iopulse jobs`. See jobcard.h. */
#include "jobcard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "summary.h"

enum iop_err coll_jobcard_dir(char *buf, size_t len, int create)
{
	const char *home = getenv("HOME");
	if (!home || !*home)
		return IOP_ERR_NOT_FOUND;
	int n = snprintf(buf, len, "%s/.iopulse", home);
	if (n < 0 || (size_t)n >= len)
		return IOP_ERR_INVAL;
	if (create && mkdir(buf, 0700) != 0 && errno != EEXIST)
		return IOP_ERR_IO;
	n = snprintf(buf, len, "%s/.iopulse/jobs", home);
	if (n < 0 || (size_t)n >= len)
		return IOP_ERR_INVAL;
	if (create && mkdir(buf, 0700) != 0 && errno != EEXIST)
		return IOP_ERR_IO;
	return IOP_OK;
}

enum iop_err coll_jobcard_write(const struct coll_jobcard *c, char *path, size_t len)
{
	char dir[512], tmp[600], key[IOP_KEY_HEX + 1], id[17];
	enum iop_err e = coll_jobcard_dir(dir, sizeof dir, 1);
	if (e)
		return e;
	iop_key_to_hex(&c->key, key);
	snprintf(id, sizeof id, "%016" PRIx64, c->job_id);
	json_t *o = json_pack("{s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:i,s:s}", "v", 1, "job", id, "key",
	                      key, "leaf", c->leaf, "root", c->root, "host", c->host, "command",
	                      c->command, "start_ns", (json_int_t)c->start_ns, "pid", c->pid,
	                      "record", c->record);
	if (!o)
		return IOP_ERR_NOMEM;
	snprintf(path, len, "%s/%s", dir, id);
	snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, id);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	e = IOP_ERR_IO;
	if (fd >= 0) {
		if (json_dumpfd(o, fd, JSON_COMPACT) == 0 && write(fd, "\n", 1) == 1 && close(fd) == 0 &&
		    rename(tmp, path) == 0)
			e = IOP_OK;
		else
			unlink(tmp);
	}
	json_decref(o);
	return e;
}

static void copy_str(json_t *o, const char *k, char *dst, size_t len)
{
	const char *v = json_string_value(json_object_get(o, k));
	snprintf(dst, len, "%s", v ? v : "");
}

enum iop_err coll_jobcard_read(const char *path, struct coll_jobcard *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	json_error_t je;
	json_t *o = json_load_file(path, 0, &je);
	if (!o) {
		snprintf(err, errlen, "%s: %s", path, je.text);
		return IOP_ERR_MALFORMED;
	}
	const char *id = json_string_value(json_object_get(o, "job"));
	const char *key = json_string_value(json_object_get(o, "key"));
	enum iop_err e = IOP_OK;
	if (!id || !key || iop_key_from_hex(key, &c->key) != IOP_OK) {
		snprintf(err, errlen, "%s: not a job card (no job id or key)", path);
		e = IOP_ERR_MALFORMED;
	} else {
		snprintf(c->path, sizeof c->path, "%s", path);
		c->job_id = strtoull(id, NULL, 16);
		copy_str(o, "leaf", c->leaf, sizeof c->leaf);
		copy_str(o, "root", c->root, sizeof c->root);
		copy_str(o, "host", c->host, sizeof c->host);
		copy_str(o, "command", c->command, sizeof c->command);
		copy_str(o, "record", c->record, sizeof c->record); /* "" in cards before it */
		c->start_ns = (uint64_t)json_integer_value(json_object_get(o, "start_ns"));
		c->pid = (int)json_integer_value(json_object_get(o, "pid"));
	}
	json_decref(o);
	return e;
}

/* A card's job still runs when its `iopulse run` process does (on this host). */
const char *coll_jobcard_state(const struct coll_jobcard *c)
{
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	if (strcmp(host, c->host) != 0)
		return "remote";
	return c->pid > 0 && (kill(c->pid, 0) == 0 || errno == EPERM) ? "running" : "stale";
}

enum iop_err coll_jobcard_each(const char *who, int (*fn)(void *arg, const struct coll_jobcard *c),
                               void *arg)
{
	char dir[512];
	if (coll_jobcard_dir(dir, sizeof dir, 0) != IOP_OK)
		return IOP_ERR_NOT_FOUND;
	DIR *d = opendir(dir);
	if (!d)
		return IOP_ERR_IO;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[1024], err[256];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		struct coll_jobcard c;
		if (coll_jobcard_read(path, &c, err, sizeof err) != IOP_OK) {
			fprintf(stderr, "%s: skipping %s\n", who, err);
			continue;
		}
		if (fn(arg, &c))
			break;
	}
	closedir(d);
	return IOP_OK;
}

enum iop_err coll_jobcard_key(const char *path, uint64_t *job_id, struct iop_key *key, char *err,
                              size_t errlen)
{
	if (path) {
		struct coll_jobcard c;
		if (coll_jobcard_read(path, &c, err, errlen) != IOP_OK)
			return IOP_ERR_IO; /* not there, not readable (another user's), not a card */
		*job_id = c.job_id;
		*key = c.key;
		return IOP_OK;
	}
	const char *hex = getenv("IOPULSE_KEY"), *job = getenv("IOPULSE_JOB");
	char *end = NULL;
	if (!hex || !job || iop_key_from_hex(hex, key) != IOP_OK) {
		snprintf(err, errlen, "no job key: give --card FILE, or IOPULSE_KEY and IOPULSE_JOB");
		return IOP_ERR_INVAL;
	}
	*job_id = strtoull(job, &end, 16);
	if (!*job || *end) {
		snprintf(err, errlen, "IOPULSE_JOB is not a job id: %s", job);
		return IOP_ERR_INVAL;
	}
	return IOP_OK;
}

static int print_card(void *arg, const struct coll_jobcard *c)
{
	int *n = arg;
	char start[32];
	if (!(*n)++)
		printf("%-16s %-8s %-24s %-16s %-40s %s\n", "JOB", "STATE", "START", "HOST", "ROOT",
		       "COMMAND");
	coll_iso_time(c->start_ns, start, sizeof start);
	printf("%016" PRIx64 " %-8s %-24s %-16s %-40s %s\n", c->job_id, coll_jobcard_state(c), start,
	       c->host, c->root, c->command);
	return 0;
}

/* --prune: removes the cards of this host whose iopulse is gone. */
struct prune {
	unsigned removed, failed;
};

static int prune_card(void *arg, const struct coll_jobcard *c)
{
	struct prune *p = arg;
	if (strcmp(coll_jobcard_state(c), "stale") != 0)
		return 0;
	if (unlink(c->path) == 0) {
		p->removed++;
	} else if (errno != ENOENT) {
		fprintf(stderr, "iopulse jobs: cannot remove %s: %s\n", c->path, strerror(errno));
		p->failed++;
	}
	return 0;
}

int coll_cmd_jobs(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'}, {"prune", no_argument, NULL, 'p'}, {0}};
	int ch;
	bool prune = false;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (ch == 'h') {
			printf("usage: iopulse jobs [--prune]\n"
			       "Lists the jobs of this user (job cards in ~/.iopulse/jobs): id, state\n"
			       "(running, stale: its iopulse is gone, remote: started on another host),\n"
			       "start time, host, root address (for 'iopulse top') and command.\n"
			       "  --prune  remove the stale cards (this host's jobs whose iopulse is\n"
			       "           gone, e.g. killed with SIGKILL), then list what is left\n");
			return 0;
		}
		if (ch == 'p') {
			prune = true;
			continue;
		}
		fprintf(stderr, "iopulse jobs: unknown option; see 'iopulse jobs --help'\n");
		return 1;
	}
	if (optind < argc) {
		fprintf(stderr, "iopulse jobs: unexpected argument '%s'; see 'iopulse jobs --help'\n",
		        argv[optind]);
		return 1;
	}
	if (prune) {
		struct prune p = {0};
		if (coll_jobcard_each("iopulse jobs", prune_card, &p) == IOP_OK)
			printf("removed %u stale job card%s\n", p.removed, p.removed == 1 ? "" : "s");
		if (p.failed)
			return 2;
	}
	int n = 0;
	enum iop_err e = coll_jobcard_each("iopulse jobs", print_card, &n);
	if (e == IOP_ERR_NOT_FOUND) {
		fprintf(stderr, "iopulse jobs: HOME is not set: cannot find ~/.iopulse/jobs\n");
		return 2;
	}
	if (e != IOP_OK || !n)
		printf("no jobs\n");
	return 0;
}
