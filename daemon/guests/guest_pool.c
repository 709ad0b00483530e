/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * guest_pool.c - storage volumes on a libvirt host that shares no
 * filesystem with the daemon: the pool rcgate owns there, uploading a
 * kernel, an initramfs or a scratch disk into a volume over a sparse
 * stream, and deleting volumes (after a job, or all of this daemon's
 * after a crash). With guest_conn.c and guest.c, the only libvirt users.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "base/base.h"
#include "guests/guests.h"
#include "guest_internal.h"

/* Pool and volume names go into XML unescaped: only these characters. */
static int name_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return 0;
	for (const char *p = s; *p != '\0'; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' ||
		      *p == '-'))
			return 0;
	}
	return s[0] != '.';
}

/* A directory path for the pool's XML: absolute, no markup characters. */
static int path_ok(const char *s)
{
	return s[0] == '/' && strlen(s) < 1024 && strpbrk(s, "<>&'\"") == NULL;
}

static virStoragePoolPtr pool_lookup(struct guest_host *h, const char *pool,
				     char *err, size_t errlen)
{
	virStoragePoolPtr p = virStoragePoolLookupByName(guest_host_conn(h),
							 pool);

	if (p == NULL)
		snprintf(err, errlen, "storage pool %s: %s", pool,
			 virGetLastErrorMessage());
	return p;
}

static int pool_ensure(struct guest_host *h, const char *pool, const char *path,
		       long min_free_mb, char *err, size_t errlen)
{
	virStoragePoolPtr p;
	virStoragePoolInfo info;
	char xml[1400];
	int active, rc = -1;

	if (h == NULL || pool == NULL || !name_ok(pool, 64)) {
		snprintf(err, errlen, "storage pool name '%s' is not a plain"
			 " name", pool ? pool : "");
		return -1;
	}
	guest_errors_expected(1);
	p = virStoragePoolLookupByName(guest_host_conn(h), pool);
	guest_errors_expected(0);
	if (p == NULL) {
		if (path == NULL || path[0] == '\0') {
			snprintf(err, errlen, "storage pool %s does not exist on"
				 " the host and no pool_path is configured to"
				 " create it", pool);
			return -1;
		}
		if (!path_ok(path)) {
			snprintf(err, errlen, "pool_path '%s' must be an absolute"
				 " path without markup characters", path);
			return -1;
		}
		/* Transient: gone when that libvirtd restarts, made again at
		 * the next connection. BUILD makes the directory. */
		snprintf(xml, sizeof(xml), "<pool type='dir'><name>%s</name>"
			 "<target><path>%s</path></target></pool>", pool, path);
		guest_errors_expected(1);
		p = virStoragePoolCreateXML(guest_host_conn(h), xml,
					    VIR_STORAGE_POOL_CREATE_WITH_BUILD);
		guest_errors_expected(0);
		/* A driver without the flag (the test driver): the
		 * directory must be there already. */
		if (p == NULL && virGetLastErrorCode() == VIR_ERR_INVALID_ARG)
			p = virStoragePoolCreateXML(guest_host_conn(h), xml, 0);
		if (p == NULL) {
			snprintf(err, errlen, "creating storage pool %s at %s: %s",
				 pool, path, virGetLastErrorMessage());
			return -1;
		}
	}
	active = virStoragePoolIsActive(p);
	if (active == 0 && virStoragePoolCreate(p, 0) < 0) {
		snprintf(err, errlen, "starting storage pool %s: %s", pool,
			 virGetLastErrorMessage());
		goto out;
	}
	/* The free space is what the last refresh saw. */
	guest_errors_expected(1);
	virStoragePoolRefresh(p, 0);
	guest_errors_expected(0);
	if (virStoragePoolGetInfo(p, &info) < 0) {
		snprintf(err, errlen, "storage pool %s: %s", pool,
			 virGetLastErrorMessage());
		goto out;
	}
	if (min_free_mb > 0 &&
	    info.available < (unsigned long long)min_free_mb << 20) {
		snprintf(err, errlen, "storage pool %s is full: %llu MiB "
			 "available, %ld MiB wanted", pool, info.available >> 20,
			 min_free_mb);
		goto out;
	}
	rc = 0;
out:
	virStoragePoolFree(p);
	return rc;
}

/* What virStreamSparseSendAll reads through: the file and where it is. */
struct upload {
	int fd;
	off_t size;
	const atomic_int *cancel;
};

static int up_source(virStreamPtr st, char *data, size_t nbytes, void *opaque)
{
	struct upload *u = opaque;
	ssize_t n;

	(void)st;
	if (u->cancel != NULL && *u->cancel) {
		errno = ECANCELED;
		return -1;
	}
	do {
		n = read(u->fd, data, nbytes);
	} while (n < 0 && errno == EINTR);
	return (int)n;
}

/* Whether the file position is in data or in a hole, and how far that
 * goes (SEEK_DATA/SEEK_HOLE); at the end, a hole of length 0. */
static int up_hole(virStreamPtr st, int *in_data, long long *length,
		   void *opaque)
{
	struct upload *u = opaque;
	off_t cur = lseek(u->fd, 0, SEEK_CUR), next;

	(void)st;
	if (cur < 0)
		return -1;
	if (cur >= u->size) {
		*in_data = 0;
		*length = 0;
		return 0;
	}
	next = lseek(u->fd, cur, SEEK_DATA);
	if (next < 0 && errno != ENXIO)
		return -1;
	if (next < 0 || next > cur) {
		/* A hole up to the next data, or to the end. */
		*in_data = 0;
		*length = (next < 0 ? u->size : next) - cur;
	} else {
		next = lseek(u->fd, cur, SEEK_HOLE);
		if (next < 0)
			return -1;
		*in_data = 1;
		*length = next - cur;
	}
	return lseek(u->fd, cur, SEEK_SET) < 0 ? -1 : 0;
}

static int up_skip(virStreamPtr st, long long length, void *opaque)
{
	struct upload *u = opaque;

	(void)st;
	return lseek(u->fd, (off_t)length, SEEK_CUR) < 0 ? -1 : 0;
}

static int vol_upload(struct guest_host *h, const char *pool, const char *name,
		      const char *local, char *path, size_t pathlen,
		      const atomic_int *cancel, char *err, size_t errlen)
{
	struct upload u = { .fd = -1, .cancel = cancel };
	virStoragePoolPtr p = NULL;
	virStorageVolPtr v = NULL;
	virStreamPtr st = NULL;
	struct stat sb;
	char xml[512], *vpath = NULL;
	int rc = -1;

	if (!name_ok(name, 200)) {
		snprintf(err, errlen, "volume name '%s' is not a plain name",
			 name);
		return -1;
	}
	u.fd = open(local, O_RDONLY | O_CLOEXEC);
	if (u.fd < 0 || fstat(u.fd, &sb) < 0) {
		snprintf(err, errlen, "open %s: %s", local, strerror(errno));
		goto out;
	}
	u.size = sb.st_size;
	if ((p = pool_lookup(h, pool, err, errlen)) == NULL)
		goto out;
	/* A volume of this name is a leftover of a crashed attempt. */
	guest_errors_expected(1);
	v = virStorageVolLookupByName(p, name);
	if (v != NULL) {
		virStorageVolDelete(v, 0);
		virStorageVolFree(v);
		v = NULL;
	}
	guest_errors_expected(0);
	snprintf(xml, sizeof(xml), "<volume><name>%s</name>"
		 "<capacity unit='bytes'>%lld</capacity>"
		 "<allocation unit='bytes'>0</allocation>"
		 "<target><format type='raw'/></target></volume>", name,
		 (long long)u.size);
	v = virStorageVolCreateXML(p, xml, 0);
	if (v == NULL) {
		snprintf(err, errlen, "creating volume %s in pool %s: %s", name,
			 pool, virGetLastErrorMessage());
		goto out;
	}
	st = virStreamNew(guest_host_conn(h), 0);
	if (st == NULL) {
		snprintf(err, errlen, "virStreamNew: %s", virGetLastErrorMessage());
		goto out;
	}
	if (virStorageVolUpload(v, st, 0, (unsigned long long)u.size,
				VIR_STORAGE_VOL_UPLOAD_SPARSE_STREAM) < 0) {
		snprintf(err, errlen, "virStorageVolUpload(%s): %s", name,
			 virGetLastErrorMessage());
		goto out;
	}
	if (virStreamSparseSendAll(st, up_source, up_hole, up_skip, &u) < 0) {
		snprintf(err, errlen, "uploading %s to volume %s: %s", local,
			 name, cancel != NULL && *cancel ? "cancelled"
			 : virGetLastErrorMessage());
		guest_errors_expected(1);
		virStreamAbort(st);
		guest_errors_expected(0);
		goto out;
	}
	/* Where the host's errors (a full disk) show up. */
	if (virStreamFinish(st) < 0) {
		snprintf(err, errlen, "uploading %s to volume %s: %s", local,
			 name, virGetLastErrorMessage());
		goto out;
	}
	vpath = virStorageVolGetPath(v);
	if (vpath == NULL || strlen(vpath) >= pathlen) {
		snprintf(err, errlen, "volume %s: no usable path: %s", name,
			 vpath == NULL ? virGetLastErrorMessage() : "too long");
		goto out;
	}
	snprintf(path, pathlen, "%s", vpath);
	rc = 0;
out:
	if (rc < 0 && v != NULL) {
		guest_errors_expected(1);
		virStorageVolDelete(v, 0);
		guest_errors_expected(0);
	}
	free(vpath);
	if (st != NULL)
		virStreamFree(st);
	if (v != NULL)
		virStorageVolFree(v);
	if (p != NULL)
		virStoragePoolFree(p);
	if (u.fd >= 0)
		close(u.fd);
	return rc;
}

static int vol_delete(struct guest_host *h, const char *pool, const char *name,
		      char *err, size_t errlen)
{
	virStoragePoolPtr p = pool_lookup(h, pool, err, errlen);
	virStorageVolPtr v;
	int rc = 0;

	if (p == NULL)
		return -1;
	guest_errors_expected(1);
	v = virStorageVolLookupByName(p, name);
	guest_errors_expected(0);
	if (v != NULL) {
		if (virStorageVolDelete(v, 0) < 0) {
			snprintf(err, errlen, "deleting volume %s: %s", name,
				 virGetLastErrorMessage());
			rc = -1;
		}
		virStorageVolFree(v);
	}
	virStoragePoolFree(p);
	return rc;
}

static int vol_delete_prefix(struct guest_host *h, const char *pool,
			     const char *prefix, int *ndeleted, char *err,
			     size_t errlen)
{
	virStoragePoolPtr p;
	virStorageVolPtr *vols = NULL;
	size_t plen = prefix != NULL ? strlen(prefix) : 0;
	int n, count = 0, rc = 0;

	if (ndeleted != NULL)
		*ndeleted = 0;
	if (plen == 0) {
		snprintf(err, errlen, "guest_vol_delete_prefix: empty prefix");
		return -1;
	}
	if ((p = pool_lookup(h, pool, err, errlen)) == NULL)
		return -1;
	guest_errors_expected(1);
	virStoragePoolRefresh(p, 0);
	guest_errors_expected(0);
	n = virStoragePoolListAllVolumes(p, &vols, 0);
	if (n < 0) {
		snprintf(err, errlen, "listing volumes of %s: %s", pool,
			 virGetLastErrorMessage());
		virStoragePoolFree(p);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const char *name = virStorageVolGetName(vols[i]);

		if (name != NULL && strncmp(name, prefix, plen) == 0) {
			if (virStorageVolDelete(vols[i], 0) < 0) {
				snprintf(err, errlen, "deleting volume %s: %s",
					 name, virGetLastErrorMessage());
				rc = -1;
			} else {
				count++;
			}
		}
		virStorageVolFree(vols[i]);
	}
	free(vols);
	virStoragePoolFree(p);
	if (ndeleted != NULL)
		*ndeleted = count;
	return rc;
}

/* The public calls: one thread at a time on an RPC connection. */
int guest_pool_ensure(struct guest_host *h, const char *pool, const char *path,
		      long min_free_mb, char *err, size_t errlen)
{
	int rc;

	guest_rpc_enter(h);
	rc = pool_ensure(h, pool, path, min_free_mb, err, errlen);
	guest_rpc_leave(h);
	return rc;
}

int guest_vol_upload(struct guest_host *h, const char *pool, const char *name,
		     const char *local, char *path, size_t pathlen,
		     const atomic_int *cancel, char *err, size_t errlen)
{
	int rc;

	guest_rpc_enter(h);
	rc = vol_upload(h, pool, name, local, path, pathlen, cancel, err,
			errlen);
	guest_rpc_leave(h);
	return rc;
}

int guest_vol_delete(struct guest_host *h, const char *pool, const char *name,
		     char *err, size_t errlen)
{
	int rc;

	guest_rpc_enter(h);
	rc = vol_delete(h, pool, name, err, errlen);
	guest_rpc_leave(h);
	return rc;
}

int guest_vol_delete_prefix(struct guest_host *h, const char *pool,
			    const char *prefix, int *ndeleted, char *err,
			    size_t errlen)
{
	int rc;

	guest_rpc_enter(h);
	rc = vol_delete_prefix(h, pool, prefix, ndeleted, err, errlen);
	guest_rpc_leave(h);
	return rc;
}
