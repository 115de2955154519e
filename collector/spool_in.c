/* A leaf's spool. See spool_in.h. */
#include "spool_in.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


int coll_spool_open(struct coll_spool *s, const char *final_url, char *why, size_t why_len)
{
	memset(s, 0, sizeof *s);
	if (!iop_spool_dir(final_url, s->dir, sizeof s->dir)) {
		snprintf(why, why_len, "no spool for the final address %s", final_url);
		s->dir[0] = 0;
		return -1;
	}
	if (mkdir(s->dir, 0700) != 0 && errno != EEXIST) {
		snprintf(why, why_len, "cannot make the spool %s: %s", s->dir, strerror(errno));
		s->dir[0] = 0;
		return -1;
	}
	return 0;
}

/* A finished spool file's name: not one being written (".NAME"). */
static int is_spooled(const struct dirent *d)
{
	size_t n = strlen(d->d_name), k = sizeof IOP_SPOOL_SUFFIX - 1;
	return d->d_name[0] != '.' && n > k && strcmp(d->d_name + n - k, IOP_SPOOL_SUFFIX) == 0;
}

/* The file's bytes (at most IOP_SPOOL_MAX_BYTES), or NULL. */
static uint8_t *slurp(int dirfd, const char *name, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	struct stat st;
	uint8_t *buf = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= IOP_SPOOL_MAX_BYTES && (buf = malloc((size_t)st.st_size))) {
		size_t got = 0;
		ssize_t n;
		while (got < (size_t)st.st_size &&
		       ((n = read(fd, buf + got, (size_t)st.st_size - got)) > 0 || (n < 0 && errno == EINTR)))
			got += n > 0 ? (size_t)n : 0;
		*len = got;
	}
	close(fd);
	return buf;
}

/* Whether the file name is to wait still: first seen not ready less than
 * hold_ns ago. Its entry goes once it is taken. */
static bool hold(struct coll_spool *s, const char *name, uint64_t now_ns, uint64_t hold_ns)
{
	for (unsigned i = 0; i < s->n_held; i++)
		if (strcmp(s->held[i].name, name) == 0)
			return now_ns - s->held[i].seen_ns < hold_ns;
	size_t len = strlen(name);
	if (s->n_held == COLL_SPOOL_HELD || len > IOP_SPOOL_NAME_LEN)
		return false;
	memcpy(s->held[s->n_held].name, name, len + 1);
	s->held[s->n_held++].seen_ns = now_ns;
	return hold_ns > 0;
}

static void unhold(struct coll_spool *s, const char *name)
{
	for (unsigned i = 0; i < s->n_held; i++)
		if (strcmp(s->held[i].name, name) == 0) {
			s->held[i] = s->held[--s->n_held];
			return;
		}
}

unsigned coll_spool_take(struct coll_spool *s, uint64_t now_ns, uint64_t hold_ns,
                         coll_spool_ready_fn *ready, coll_spool_frame_fn *fn, void *arg)
{
	if (!s->dir[0])
		return 0;
	struct dirent **names;
	int n = scandir(s->dir, &names, is_spooled, alphasort);
	if (n <= 0)
		return 0;
	int dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	unsigned handed = 0;
	for (int i = 0; i < n; i++) {
		size_t len = 0, at = 0, one;
		const char *name = names[i]->d_name;
		uint8_t *buf = dirfd >= 0 ? slurp(dirfd, name, &len) : NULL;
		uint64_t image_ns = 0;
		bool head = buf && iop_spool_header_read(buf, len, &image_ns);
		if (head)
			at = IOP_SPOOL_HEADER_LEN;
		one = head ? iop_frame_len_at(buf + at, len - at) : 0;
		if (ready && one && one <= len - at && !ready(arg, buf + at, one, image_ns) &&
		    hold(s, name, now_ns, hold_ns)) {
			free(buf);
			free(names[i]);
			continue;
		}
		unhold(s, name);
		while (head && (one = iop_frame_len_at(buf + at, len - at)) && one <= len - at) {
			fn(arg, buf + at, one, image_ns);
			at += one;
			handed++;
			s->frames++;
		}
		if (!head || at != len) {
			s->bad_files++;
			fprintf(stderr, "iopulse: warning: spool file %s/%s %s: %zu of its %zu bytes taken\n",
			        s->dir, name, !buf ? "cannot be read" : !head ? "has no header" : "is cut short",
			        head ? at : 0, len);
		}
		s->files++;
		free(buf);
		if (dirfd >= 0)
			unlinkat(dirfd, name, 0);
		free(names[i]);
	}
	free(names);
	if (dirfd >= 0)
		close(dirfd);
	return handed;
}

void coll_spool_close(struct coll_spool *s)
{
	if (!s->dir[0])
		return;
	DIR *d = opendir(s->dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(s->dir);
	s->dir[0] = 0;
}
