/* The node's mount table. See mounts.h. */
#include "mounts.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next space-separated field of [*p, end), or NULL. */
static const char *field(const char **p, const char *end, size_t *len)
{
	const char *s = *p;
	while (s < end && *s == ' ')
		s++;
	if (s >= end)
		return NULL;
	const char *e = memchr(s, ' ', (size_t)(end - s));
	if (!e)
		e = end;
	*len = (size_t)(e - s);
	*p = e;
	return s;
}

/* A field with mountinfo's octal escapes (\040 space, \011 tab, \012
 * newline, \134 backslash) undone; NULL when out of memory. */
static char *unescape(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			*o++ = (char)((s[i + 1] - '0') << 6 | (s[i + 2] - '0') << 3 | (s[i + 3] - '0'));
			i += 3;
		} else {
			*o++ = s[i];
		}
	}
	*o = 0;
	return out;
}

static void mount_free(struct iop_mount *x)
{
	free(x->point);
	free(x->type);
	free(x->device);
}

/* Parses one line [s, end); false when it is not a mountinfo line. */
static bool parse_line(const char *s, const char *end, struct iop_mount *x)
{
	const char *f[5];
	size_t fl[5];
	for (int i = 0; i < 5; i++)
		if (!(f[i] = field(&s, end, &fl[i])))
			return false;
	/* optional fields up to the lone "-" */
	const char *t;
	size_t tl;
	do {
		if (!(t = field(&s, end, &tl)))
			return false;
	} while (!(tl == 1 && t[0] == '-'));
	const char *type, *src;
	size_t typel, srcl;
	if (!(type = field(&s, end, &typel)) || !(src = field(&s, end, &srcl)))
		return false;
	/* major:minor */
	char dev[32];
	if (fl[2] >= sizeof dev)
		return false;
	memcpy(dev, f[2], fl[2]);
	dev[fl[2]] = 0;
	unsigned maj, min;
	char tail;
	if (sscanf(dev, "%u:%u%c", &maj, &min, &tail) != 2 || f[4][0] != '/')
		return false;
	*x = (struct iop_mount){.point = unescape(f[4], fl[4]), .type = unescape(type, typel),
	                        .device = unescape(src, srcl), .major = maj, .minor = min};
	if (!x->point || !x->type || !x->device) {
		mount_free(x);
		return false;
	}
	x->point_len = (uint32_t)strlen(x->point);
	return true;
}

enum iop_err iop_mounts_parse(struct iop_mounts *m, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	while (p < end && m->n < IOP_MOUNTS_MAX) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		struct iop_mount x;
		if (parse_line(p, le, &x)) {
			if (m->n == m->cap) {
				size_t cap = m->cap ? 2 * m->cap : 32;
				struct iop_mount *v = realloc(m->v, cap * sizeof(*v));
				if (!v) {
					mount_free(&x);
					return IOP_ERR_NOMEM;
				}
				m->v = v;
				m->cap = cap;
			}
			m->v[m->n++] = x;
		}
		p = nl ? nl + 1 : end;
	}
	return IOP_OK;
}

void iop_mounts_devices(struct iop_mounts *m, const char *sys)
{
	for (size_t i = 0; i < m->n; i++) {
		struct iop_mount *x = &m->v[i];
		if (!x->major)
			continue;
		char path[512], line[256];
		snprintf(path, sizeof path, "%s/dev/block/%u:%u/uevent", sys ? sys : "/sys", x->major,
		         x->minor);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof line, f)) {
			if (strncmp(line, "DEVNAME=", 8))
				continue;
			line[strcspn(line, "\n")] = 0;
			char *name = strdup(line + 8);
			if (name && *name) {
				free(x->device);
				x->device = name;
			} else {
				free(name);
			}
			break;
		}
		fclose(f);
	}
}

enum iop_err iop_mounts_read(struct iop_mounts *m, const char *path, const char *sys)
{
	FILE *f = fopen(path ? path : "/proc/self/mountinfo", "re");
	if (!f)
		return IOP_ERR_IO;
	char *text = NULL;
	size_t cap = 0, len = 0, got;
	enum iop_err e = IOP_OK;
	do {
		if (len + 4096 > cap) {
			char *t = realloc(text, cap ? 2 * cap : 16384);
			if (!t) {
				e = IOP_ERR_NOMEM;
				break;
			}
			text = t;
			cap = cap ? 2 * cap : 16384;
		}
		got = fread(text + len, 1, cap - len, f);
		len += got;
	} while (got > 0 && len < (64u << 20));
	if (!e && ferror(f))
		e = IOP_ERR_IO;
	fclose(f);
	if (!e)
		e = iop_mounts_parse(m, text ? text : "", len);
	free(text);
	if (!e)
		iop_mounts_devices(m, sys);
	return e;
}

void iop_mounts_free(struct iop_mounts *m)
{
	for (size_t i = 0; i < m->n; i++)
		mount_free(&m->v[i]);
	free(m->v);
	*m = (struct iop_mounts){0};
}

/* Whether point (n bytes) is a prefix of path[0, len) ending at a '/'
 * boundary. */
static bool under(const char *point, size_t n, const char *path, size_t len)
{
	if (n == 1 && point[0] == '/')
		return len >= 1 && path[0] == '/';
	return n <= len && !memcmp(point, path, n) && (n == len || path[n] == '/');
}

const struct iop_mount *iop_mounts_find(const struct iop_mounts *m, const char *path, size_t len,
                                        int has_dev, uint32_t major, uint32_t minor)
{
	if (!len || path[0] != '/')
		return NULL;
	for (int pass = has_dev ? 0 : 1; pass < 2; pass++) {
		const struct iop_mount *best = NULL;
		size_t best_n = 0;
		for (size_t i = 0; i < m->n; i++) {
			const struct iop_mount *x = &m->v[i];
			if (pass == 0 && (x->major != major || x->minor != minor))
				continue;
			size_t n = x->point_len;
			if (under(x->point, n, path, len) && (!best || n >= best_n)) {
				best = x;
				best_n = n;
			}
		}
		if (best)
			return best;
		/* of the device's mounts none is a prefix (the path came through a
		 * symbolic link): the device's last mount */
		for (size_t i = m->n; pass == 0 && i-- > 0;)
			if (m->v[i].major == major && m->v[i].minor == minor)
				return &m->v[i];
	}
	return NULL;
}
