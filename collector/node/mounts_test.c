/* The mount table: captured mountinfo text (this machine's, with an NFS,
 * a Lustre and a BeeGFS mount and an escaped mount point added), paths
 * found by device and by prefix, block devices named from a /sys tree,
 * and the machine's own table. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mounts.h"

static const char captured[] =
	"22 27 0:21 / /proc rw,relatime - proc proc rw\n"
	"25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683656k\n"
	"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
	"30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683656k\n"
	"42 27 254:0 /run/netns /run/netns rw,relatime shared:1 - ext4 /dev/vda rw\n"
	"50 27 0:51 / /home rw,relatime shared:7 master:2 - nfs4 srv:/export/home rw,vers=4.2\n"
	"51 27 0:52 / /lustre/scratch rw - lustre 10.0.0.1@tcp:/scratch rw,flock\n"
	"52 27 0:53 / /mnt/beegfs rw - beegfs beegfs_nodev rw\n"
	"53 27 259:1 / /data\\040set rw - xfs /dev/nvme0n1p1 rw\n"
	"this is not a mountinfo line\n"
	"54 27 0:54 / relative rw - tmpfs tmpfs rw\n"
	"55 27 x:1 / /bad rw - tmpfs tmpfs rw\n"
	"56 27 0:55 / /no-separator rw tmpfs tmpfs rw\n"
	"57 27 0:56 / /cut rw -";

static const char *type_at(const struct iop_mounts *m, const char *path)
{
	const struct iop_mount *x = iop_mounts_find(m, path, strlen(path), 0, 0, 0);
	return x ? x->type : NULL;
}

static const char *point_at(const struct iop_mounts *m, const char *path)
{
	const struct iop_mount *x = iop_mounts_find(m, path, strlen(path), 0, 0, 0);
	return x ? x->point : NULL;
}

static void parses_captured(void **state)
{
	(void)state;
	struct iop_mounts m = {0};
	assert_int_equal(iop_mounts_parse(&m, captured, strlen(captured)), IOP_OK);
	assert_int_equal(m.n, 9); /* the last 5 lines are not mounts */
	assert_string_equal(m.v[8].point, "/data set");
	assert_int_equal(m.v[8].major, 259);
	assert_int_equal(m.v[8].minor, 1);
	assert_string_equal(m.v[5].device, "srv:/export/home");
	/* by prefix, at '/' boundaries, the later of two equal mounts */
	assert_string_equal(type_at(&m, "/dev/shm/ckpt.0"), "tmpfs");
	assert_ptr_equal(iop_mounts_find(&m, "/dev/shm/x", 10, 0, 0, 0), &m.v[3]);
	assert_string_equal(type_at(&m, "/dev/shmem/x"), "ext4");
	assert_string_equal(type_at(&m, "/home/u/out.h5"), "nfs4");
	assert_string_equal(type_at(&m, "/lustre/scratch/run/f"), "lustre");
	assert_string_equal(type_at(&m, "/lustre/other"), "ext4");
	assert_string_equal(type_at(&m, "/mnt/beegfs/a"), "beegfs");
	assert_string_equal(point_at(&m, "/data set/x"), "/data set");
	assert_string_equal(point_at(&m, "/var/tmp/x"), "/");
	assert_null(iop_mounts_find(&m, "rel/x", 5, 0, 0, 0));
	assert_null(iop_mounts_find(&m, "", 0, 0, 0, 0));
	/* by device: a bind mount's path under it; a path through a link
	 * (no mount of the device is its prefix): the device's last mount */
	const struct iop_mount *x = iop_mounts_find(&m, "/run/netns/a", 12, 1, 254, 0);
	assert_string_equal(x->point, "/run/netns");
	x = iop_mounts_find(&m, "/scratch-link/f", 15, 1, 0, 52);
	assert_string_equal(x->point, "/lustre/scratch");
	x = iop_mounts_find(&m, "/dev/shm/y", 10, 1, 9, 9); /* unknown device: by prefix */
	assert_string_equal(x->type, "tmpfs");
	iop_mounts_free(&m);
	assert_int_equal(m.n, 0);
}

/* Block devices are named from /sys/dev/block/M:m/uevent; others keep
 * their source. */
static void names_block_devices(void **state)
{
	(void)state;
	char sys[] = "/tmp/mounts_test_sysXXXXXX";
	assert_non_null(mkdtemp(sys));
	char path[512];
	snprintf(path, sizeof path, "%s/dev", sys);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/dev/block", sys);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/dev/block/254:0", sys);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/dev/block/254:0/uevent", sys);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("MAJOR=254\nMINOR=0\nDEVNAME=vda\nDEVTYPE=disk\n", f);
	fclose(f);
	struct iop_mounts m = {0};
	assert_int_equal(iop_mounts_parse(&m, captured, strlen(captured)), IOP_OK);
	iop_mounts_devices(&m, sys);
	assert_string_equal(m.v[2].device, "vda");
	assert_string_equal(m.v[4].device, "vda");
	assert_string_equal(m.v[1].device, "tmpfs");
	assert_string_equal(m.v[8].device, "/dev/nvme0n1p1"); /* no entry: its source */
	iop_mounts_free(&m);
	unlink(path);
	snprintf(path, sizeof path, "%s/dev/block/254:0", sys);
	rmdir(path);
	snprintf(path, sizeof path, "%s/dev/block", sys);
	rmdir(path);
	snprintf(path, sizeof path, "%s/dev", sys);
	rmdir(path);
	rmdir(sys);
}

/* This machine's table: /dev/shm is tmpfs, and a file's st_dev finds the
 * mount the prefix finds. */
static void reads_own_table(void **state)
{
	(void)state;
	struct iop_mounts m = {0};
	assert_int_equal(iop_mounts_read(&m, NULL, NULL), IOP_OK);
	assert_true(m.n > 0);
	assert_string_equal(type_at(&m, "/dev/shm/x"), "tmpfs");
	struct stat st;
	assert_int_equal(stat("/proc/self", &st), 0);
	const struct iop_mount *x =
		iop_mounts_find(&m, "/proc/self", 10, 1, major(st.st_dev), minor(st.st_dev));
	assert_non_null(x);
	assert_string_equal(x->type, "proc");
	assert_int_equal(iop_mounts_read(&m, "/nonexistent/mountinfo", NULL), IOP_ERR_IO);
	iop_mounts_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_captured),
		cmocka_unit_test(names_block_devices),
		cmocka_unit_test(reads_own_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
