/* A leaf's sample of its own node. See probe.h. */
#include "probe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEXT_MAX (1u << 20) /* /proc/diskstats of a node with many devices */

struct seen_dev {
	uint32_t major, minor;
	struct iop_diskstat last;
	uint64_t at_ns;
};

struct seen_netfs {
	char point[256];
	struct iop_netfs_stat last;
	uint64_t at_ns;
};

struct iop_node_probe {
	char dir[4096];
	char *text; /* one file's text at a time */
	size_t cap;
	struct iop_psi psi;
	struct iop_cpustat cpu;
	uint64_t psi_ns; /* when psi was read; 0: never */
	bool has_cpu;
	struct seen_dev dev[IOP_PROBE_DEVS];
	size_t n_dev;
	struct seen_netfs net[IOP_PROBE_DEVS];
	size_t n_net;
};

enum iop_err iop_node_probe_new(const char *proc, struct iop_node_probe **out)
{
	struct iop_node_probe *p = calloc(1, sizeof(*p));
	if (!p)
		return IOP_ERR_NOMEM;
	snprintf(p->dir, sizeof p->dir, "%s", proc ? proc : "/proc");
	*out = p;
	return IOP_OK;
}

void iop_node_probe_free(struct iop_node_probe *p)
{
	if (!p)
		return;
	free(p->text);
	free(p);
}

/* dir/name's text into p->text: its length, or -1 (errno) when it cannot
 * be read. One read(2) for a /proc file: its text is made whole for it. */
static ssize_t read_text(struct iop_node_probe *p, const char *name)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", p->dir, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = 0;
	for (;;) {
		if (len == p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 16384;
			char *t = cap <= TEXT_MAX ? realloc(p->text, cap) : NULL;
			if (!t) {
				close(fd);
				errno = ENOMEM;
				return -1;
			}
			p->text = t;
			p->cap = cap;
		}
		ssize_t n = read(fd, p->text + len, p->cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = errno;
			close(fd);
			errno = err;
			return n < 0 ? -1 : (ssize_t)len;
		}
		len += (size_t)n;
	}
}

static struct seen_dev *seen(struct iop_node_probe *p, uint32_t major, uint32_t minor)
{
	for (size_t i = 0; i < p->n_dev; i++)
		if (p->dev[i].major == major && p->dev[i].minor == minor)
			return &p->dev[i];
	if (p->n_dev == IOP_PROBE_DEVS)
		return NULL;
	p->dev[p->n_dev] = (struct seen_dev){.major = major, .minor = minor};
	return &p->dev[p->n_dev++];
}

/* b - a for counters that only grow (0 when one went back) */
static uint64_t up(uint64_t b, uint64_t a)
{
	return b >= a ? b - a : 0;
}

static double share(uint64_t part, uint64_t whole)
{
	double s = whole ? (double)part / (double)whole : 0;
	return s < 0 ? 0 : s > 1 ? 1 : s;
}

void iop_node_probe_sample(struct iop_node_probe *p, uint64_t now_ns, struct iop_node_tick *node,
                           struct iop_probe_dev *devs, size_t n)
{
	*node = (struct iop_node_tick){0};
	ssize_t len = read_text(p, "pressure/io");
	struct iop_psi psi;
	if (len >= 0 && iop_psi_parse(p->text, (size_t)len, &psi) == IOP_OK) {
		if (p->psi_ns && now_ns > p->psi_ns) {
			uint64_t dt_us = (now_ns - p->psi_ns) / 1000;
			node->has_psi = true;
			node->psi_some = share(up(psi.some_us, p->psi.some_us), dt_us);
			node->has_full = psi.has_full && p->psi.has_full;
			node->psi_full = node->has_full ? share(up(psi.full_us, p->psi.full_us), dt_us) : 0;
		}
		p->psi = psi;
		p->psi_ns = now_ns;
	} else {
		p->psi_ns = 0;
	}
	len = read_text(p, "stat");
	struct iop_cpustat cpu;
	if (len >= 0 && iop_cpustat_parse(p->text, (size_t)len, &cpu) == IOP_OK) {
		if (p->has_cpu && cpu.total > p->cpu.total) {
			node->has_iowait = true;
			node->iowait = share(up(cpu.iowait, p->cpu.iowait), cpu.total - p->cpu.total);
		}
		p->cpu = cpu;
		p->has_cpu = true;
	}
	len = read_text(p, "meminfo");
	struct iop_meminfo mem;
	if (len >= 0 && iop_meminfo_parse(p->text, (size_t)len, &mem) == IOP_OK) {
		node->has_mem = true;
		node->dirty_kib = mem.dirty_kib;
		node->writeback_kib = mem.writeback_kib;
	}
	len = n ? read_text(p, "diskstats") : -1;
	for (size_t i = 0; i < n; i++) {
		struct iop_probe_dev *d = &devs[i];
		d->has = false;
		/* a device asked for twice (two bind mounts of one disk): the
		 * rates its first entry got */
		size_t j = 0;
		while (j < i && (devs[j].major != d->major || devs[j].minor != d->minor))
			j++;
		if (j < i) {
			d->has = devs[j].has;
			d->rates = devs[j].rates;
			continue;
		}
		struct iop_diskstat st;
		struct seen_dev *s = seen(p, d->major, d->minor);
		if (len < 0 || !s ||
		    iop_diskstats_find(p->text, (size_t)len, d->major, d->minor, &st) != IOP_OK) {
			if (s)
				s->at_ns = 0;
			continue;
		}
		if (s->at_ns && now_ns > s->at_ns) {
			iop_disk_rates(&s->last, &st, now_ns - s->at_ns, &d->rates);
			d->has = true;
		}
		s->last = st;
		s->at_ns = now_ns;
	}
}

static struct seen_netfs *seen_net(struct iop_node_probe *p, const char *point)
{
	for (size_t i = 0; i < p->n_net; i++)
		if (!strcmp(p->net[i].point, point))
			return &p->net[i];
	if (p->n_net == IOP_PROBE_DEVS || strlen(point) >= sizeof p->net[0].point)
		return NULL;
	struct seen_netfs *s = &p->net[p->n_net++];
	memset(s, 0, sizeof(*s));
	strcpy(s->point, point);
	return s;
}

/* Lustre file system name's llite stats: the first instance NAME-* under
 * fs/lustre/llite, parsed into *out. */
static bool llite_stats(struct iop_node_probe *p, const char *name, struct iop_netfs_stat *out)
{
	char dir[4200], rel[600];
	snprintf(dir, sizeof dir, "%s/fs/lustre/llite", p->dir);
	DIR *d = opendir(dir);
	if (!d)
		return false;
	size_t n = strlen(name);
	struct dirent *e;
	bool got = false;
	while (!got && (e = readdir(d)))
		if (!strncmp(e->d_name, name, n) && e->d_name[n] == '-') {
			snprintf(rel, sizeof rel, "fs/lustre/llite/%s/stats", e->d_name);
			ssize_t len = read_text(p, rel);
			got = len >= 0 && iop_llite_parse(p->text, (size_t)len, out) == IOP_OK;
		}
	closedir(d);
	return got;
}

void iop_node_probe_netfs(struct iop_node_probe *p, uint64_t now_ns, struct iop_probe_netfs *v,
                          size_t n)
{
	bool nfs = false;
	for (size_t i = 0; i < n; i++)
		nfs = nfs || !v[i].lustre;
	/* NFS's counters all come from one file: read once, kept in a copy as
	 * Lustre's reads take the buffer */
	char *ms = NULL;
	ssize_t ms_len = nfs ? read_text(p, "self/mountstats") : -1;
	if (ms_len >= 0 && !(ms = malloc((size_t)ms_len + 1)))
		ms_len = -1;
	if (ms_len >= 0)
		memcpy(ms, p->text, (size_t)ms_len);
	for (size_t i = 0; i < n; i++) {
		struct iop_probe_netfs *x = &v[i];
		x->has = false;
		size_t j = 0; /* asked for twice: the first one's */
		while (j < i && strcmp(v[j].point, x->point))
			j++;
		if (j < i) {
			x->has = v[j].has;
			x->rates = v[j].rates;
			continue;
		}
		struct iop_netfs_stat st;
		struct seen_netfs *s = seen_net(p, x->point);
		bool got = s && (x->lustre ? llite_stats(p, x->lustre, &st)
		                           : ms_len >= 0 && iop_mountstats_find(ms, (size_t)ms_len,
		                                                                x->point, &st) == IOP_OK);
		if (!got) {
			if (s)
				s->at_ns = 0;
			continue;
		}
		if (s->at_ns && now_ns > s->at_ns) {
			iop_netfs_rates(&s->last, &st, now_ns - s->at_ns, &x->rates);
			x->has = true;
		}
		s->last = st;
		s->at_ns = now_ns;
	}
	free(ms);
}
