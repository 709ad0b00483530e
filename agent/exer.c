// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exerciser's engine: runs a seed's operations (exer_gen.c draws them,
 * exer_ops.c issues them), holds each answer to the syscall's contract,
 * keeps the model of what the file must hold and checks the file against
 * it after every step (size, position, the range touched read back
 * through another path) and in full every few steps (buffered, direct and
 * mmap reads, the page past EOF). The first broken promise ends the seed;
 * the sequence up to it is then shrunk to the fewest operations that
 * still break one, and that trace is the diagnostic.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <stdarg.h>

#include <linux/fs.h>

#include "testio.h"
#include "exer_internal.h"

#define VERIFY_EVERY 16

static const char *const way_names[3] = { "buffered", "direct", "mmap" };

struct run {
	const struct suite_env *env;
	struct exer_io *io;
	struct exer_model m;
	unsigned int step;
	unsigned char *expect; /* a write's source bytes, EXER_MAX_IO */
	unsigned char *back;   /* read-back, EXER_MAX_SIZE + a page */
	struct exer_outcome o;
	FILE *trace;
	unsigned int seed;
	int full;  /* the filesystem was filled before the first op */
	int btrfs; /* copy-on-write: most writes need new space */
	int fill_fd;
	char fill_path[4200];
};

static void fail(struct run *rn, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct run *rn, const char *fmt, ...)
{
	va_list ap;

	if (rn->o.failed)
		return;
	rn->o.failed = 1;
	rn->o.fail_step = rn->step;
	va_start(ap, fmt);
	vsnprintf(rn->o.why, sizeof(rn->o.why), fmt, ap);
	va_end(ap);
}

static long long clamp_len(long long size, long long off, long long len)
{
	long long n = size - off;

	if (n < 0)
		return 0;
	return n < len ? n : len;
}

static const char *err_text(long long res)
{
	return res < 0 ? strerror((int)-res) : "";
}

/* ---- checks against the model ---- */

static int compare_model(struct run *rn, const char *how,
			 const unsigned char *have, long long off, long long n)
{
	const unsigned char *want = rn->m.data + off;
	long long i, first = -1, wrong = 0;

	for (i = 0; i < n; i++) {
		if (have[i] != want[i]) {
			if (first < 0)
				first = i;
			wrong++;
		}
	}
	if (wrong == 0)
		return 0;
	fail(rn, "%s: byte at %lld is %02x, expected %02x (%lld of %lld bytes wrong)",
	     how, off + first, have[first], want[first], wrong, n);
	return -1;
}

/* Read [lo, hi) back through way and hold it to the model. */
static int check_range(struct run *rn, int way, long long lo, long long hi,
		       const char *when)
{
	long long want, n;
	char how[96];

	if (lo < 0)
		lo = 0;
	if (hi > EXER_MAX_SIZE)
		hi = EXER_MAX_SIZE;
	if (way == 2 && hi > rn->m.size)
		hi = rn->m.size;
	if (hi <= lo)
		return 0;
	want = clamp_len(rn->m.size, lo, hi - lo);
	n = exer_io_readback(rn->io, way, lo, hi - lo, rn->back);
	snprintf(how, sizeof(how), "%s, %s read of %lld at %lld", when,
		 way_names[way], hi - lo, lo);
	if (n < 0) {
		fail(rn, "%s: %s", how, strerror((int)-n));
		return -1;
	}
	if (n != want) {
		fail(rn, "%s: %lld bytes, expected %lld (model size %lld)", how,
		     n, want, rn->m.size);
		return -1;
	}
	return compare_model(rn, how, rn->back, lo, n);
}

static int check_st_size(struct run *rn, const char *when)
{
	long long s;

	if (exer_io_is_bdev(rn->io))
		return 0;
	s = exer_io_size(rn->io);
	if (s != rn->m.size) {
		fail(rn, "%s: st_size %lld, expected %lld", when, s, rn->m.size);
		return -1;
	}
	return 0;
}

/* Everything the file holds, every way, and the page past EOF. */
static int check_all(struct run *rn, const char *when)
{
	long long hi = rn->m.size + 8192, g;
	int way;

	if (check_st_size(rn, when) != 0)
		return -1;
	for (way = 0; way < 3; way++)
		if (check_range(rn, way, 0, hi, when) != 0)
			return -1;
	g = exer_io_tail_garbage(rn->io, rn->m.size);
	if (g >= 0) {
		fail(rn, "%s: mmap of the last page: byte at %lld past EOF %lld is not zero",
		     when, g, rn->m.size);
		return -1;
	}
	return 0;
}

/* ---- contracts ---- */

/* Why a transfer may legitimately stop short or fail. */
struct allowance {
	int misaligned; /* direct, off the alignment: EINVAL, nothing done */
	int nowait;     /* EAGAIN or EOPNOTSUPP, nothing done; or short */
	long long fault_at; /* buffer faults there: EFAULT or short to it */
	long long fault_len; /* for this long (then readable again) */
	int short_ok;   /* the interface may return short (copy, splice) */
	int enospc;     /* a device write at or past its end */
	int nospace;    /* the filesystem is full and this op needs space:
			 * ENOSPC, or short, with what it did adopted */
	long long asked; /* the length the transfer was given */
	int async_dev;  /* AIO or io_uring on a block device */
};

static int op_direct(const struct run *rn, const struct exer_op *op)
{
	return op->fd != XF_BUFFERED || exer_io_is_bdev(rn->io);
}

/* Whether every unit [off, off+len) meets is in state a or b. */
static int units_all(const struct exer_model *m, long long off, long long len,
		     uint8_t a, uint8_t b)
{
	long long u;

	for (u = off / EXER_UNIT; u * EXER_UNIT < off + len && u < EXER_UNITS; u++)
		if (m->unit[u] != a && m->unit[u] != b)
			return 0;
	return 1;
}

/*
 * On a full filesystem, which ops may fail with ENOSPC: those that need
 * new blocks. What must not is a write into blocks the file already has
 * (written, or preallocated: fstests generic/274, the bug class of
 * 27dd43854227, 84e1e99f112d, f0bfa76a11e9); on btrfs, copy-on-write,
 * only a direct write into preallocated blocks.
 */
static int may_enospc(const struct run *rn, const struct exer_op *op,
		      long long at)
{
	int in_place;

	if (!rn->full)
		return 0;
	if (!exer_kind_is_write(op->kind))
		return op->kind == XO_FALLOCATE || rn->btrfs;
	if (op->kind >= XO_SENDFILE && op->kind <= XO_CLONE)
		return 1;
	in_place = at + op->len <= rn->m.size &&
		   exer_model_allocated(&rn->m, at, op->len);
	if (rn->btrfs) {
		long long al = exer_io_align(rn->io);

		/* A misaligned direct write falls back to a buffered one. */
		return !(in_place && op_direct(rn, op) && op->buf != XB_MISALIGNED &&
			 at % al == 0 && op->len % al == 0 &&
			 units_all(&rn->m, at, op->len, XL_UNWRITTEN, XL_UNWRITTEN));
	}
	return !in_place;
}

static void allowance_of(const struct run *rn, const struct exer_op *op,
			 const struct exer_result *r, long long at,
			 struct allowance *a)
{
	long long al = exer_io_align(rn->io);

	memset(a, 0, sizeof(*a));
	/* The offset passed counts too: xfs checks it before an append
	 * moves it to EOF. */
	a->misaligned = op_direct(rn, op) &&
			(at % al != 0 || op->off % al != 0 || op->len % al != 0 ||
			 op->buf == XB_MISALIGNED ||
			 (op->kind >= XO_SPLICE_READ && op->kind <= XO_CLONE));
	a->nowait = (op->rwf & RWF_NOWAIT) != 0;
	a->fault_at = r->fault_at;
	a->fault_len = r->fault_len;
	a->short_ok = op->kind == XO_COPY_RANGE || op->kind == XO_SPLICE_READ;
	a->nospace = may_enospc(rn, op, at);
	a->async_dev = exer_io_is_bdev(rn->io) && op->kind >= XO_AIO_WRITE &&
		       op->kind <= XO_URING_LINKED;
}

/* The allowance of the piece [st, st+ln) of the buffer. */
static void part_fault(struct allowance *a, long long st, long long ln)
{
	if (a->fault_at < 0)
		return;
	if (st + ln <= a->fault_at || st >= a->fault_at + a->fault_len)
		a->fault_at = -1;
	else
		a->fault_at = a->fault_at > st ? a->fault_at - st : 0;
}

/*
 * One transfer's answer res against want bytes: the bytes it moved (>= 0)
 * or -1 with the reason in rn. what names the transfer.
 */
static long long judge(struct run *rn, const struct allowance *a,
		       long long res, long long want, const char *what)
{
	int e = res < 0 ? (int)-res : 0;
	/* The kernel may touch the whole buffer it was given, past EOF too
	 * (a direct read zeroes the block's tail): a fault anywhere in it
	 * may end the transfer. */
	int faults = a->fault_at >= 0 && a->fault_at < a->asked;

	if (faults && res > a->fault_at) {
		fail(rn, "%s: moved %lld bytes, past the buffer's unmapped page at %lld",
		     what, res, a->fault_at);
		return -1;
	}
	if (res == want)
		return res;
	/* Nothing moved is never a short count: a read returning 0 says end
	 * of file (42c498c18a94's bug: a direct read of a hole into a
	 * read-only buffer returned 0, not EFAULT). */
	if (res == 0) {
		fail(rn, "%s: returned 0, expected %lld bytes%s", what, want,
		     faults ? " or EFAULT" : "");
		return -1;
	}
	if (res > want) {
		fail(rn, "%s: returned %lld, expected %lld", what, res, want);
		return -1;
	}
	if (res >= 0 && (a->nowait || a->short_ok || faults || a->nospace))
		return res;
	if ((e == EINVAL && a->misaligned) ||
	    ((e == EAGAIN || e == EOPNOTSUPP) && a->nowait) ||
	    (e == EFAULT && faults) ||
	    /* A device's async direct I/O fails a faulting buffer's bio
	     * after others went out as an I/O error (seen on the host). */
	    (e == EIO && faults && a->async_dev) ||
	    (e == ENOSPC && (a->enospc || a->nospace)))
		return 0;
	if (res < 0)
		fail(rn, "%s: %s, expected %lld bytes", what, err_text(res), want);
	else
		fail(rn, "%s: returned %lld of %lld", what, res, want);
	return -1;
}

/* The bytes a write of op puts down at at, as the model sees them. */
static void source_bytes(struct run *rn, const struct exer_op *op,
			 long long at, unsigned char *out)
{
	long long i;

	for (i = 0; i < op->len; i++) {
		switch (op->kind == XO_SENDFILE || op->kind == XO_COPY_RANGE ||
				op->kind == XO_CLONE ? XB_FILEMAP : op->buf) {
		case XB_FRESH:
			out[i] = 0;
			break;
		case XB_FILEMAP:
			out[i] = exer_byte(EXER_AUX_TAG, op->src + i);
			break;
		case XB_SELFMAP:
			out[i] = rn->m.data[op->src + i];
			break;
		default:
			out[i] = exer_byte(op->tag, at + i);
			break;
		}
	}
}

static long long write_at(const struct run *rn, const struct exer_op *op)
{
	if (exer_io_is_bdev(rn->io))
		return op->off;
	return op->fd == XF_APPEND || (op->rwf & RWF_APPEND) ? rn->m.size :
							       op->off;
}

struct span {
	long long lo, hi;
};

/*
 * After a write that stopped at its buffer's fault (EFAULT, or a count
 * short of the fault), the bytes between what it claimed and the fault
 * may hold the old data or the new (a direct write may have submitted
 * them), and the size may have grown up to the fault, never past it. The
 * same holds for a misaligned direct write's EINVAL: iomap checks the
 * alignment per extent, after earlier extents' bios went out. Anything
 * else there is a broken promise; what is there is adopted.
 */
static int adopt(struct run *rn, long long lo, long long hi,
		 const unsigned char *fresh, int op_fd_buffered,
		 const char *what)
{
	long long size = exer_io_is_bdev(rn->io) ? rn->m.size :
						   exer_io_size(rn->io);
	long long n, i, fresh_end = hi;

	if (size > rn->m.size) {
		/* A buffered copy stops inside the page cache page that holds
		 * the fault and may commit that page's copied part: the size
		 * may reach that page's end, with zeros where nothing came. */
		if (size > hi && size <= ((hi + PAGE - 1) & ~(PAGE - 1)) &&
		    op_fd_buffered)
			hi = size;
		if (size > hi) {
			fail(rn, "%s: st_size %lld after it stopped short (fault or EINVAL), expected <= %lld",
			     what, size, hi);
			return -1;
		}
		rn->m.size = size;
	}
	if (hi > rn->m.size)
		hi = rn->m.size;
	if (hi <= lo)
		return 0;
	n = exer_io_readback(rn->io, 1, lo, hi - lo, rn->back);
	if (n != hi - lo) {
		fail(rn, "%s: direct read after the fault: %lld of %lld bytes", what,
		     n, hi - lo);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (rn->back[i] != rn->m.data[lo + i] &&
		    (lo + i >= fresh_end || rn->back[i] != fresh[i])) {
			fail(rn, "%s: byte at %lld past what it claimed is %02x, expected the old %02x or the new %02x",
			     what, lo + i, rn->back[i], rn->m.data[lo + i],
			     lo + i < fresh_end ? fresh[i] : 0);
			return -1;
		}
		rn->m.data[lo + i] = rn->back[i];
	}
	return 0;
}

/* A write's answer, part by part, into the model. */
static int apply_write(struct run *rn, const struct exer_op *op,
		       const struct exer_result *r, long long at,
		       const char *what)
{
	struct allowance a;
	long long st[EXER_MAX_AIO + 1], ln[EXER_MAX_AIO + 1], n;
	struct span loose[EXER_MAX_AIO + 1];
	unsigned int i, parts = r->nparts ? r->nparts : 1, nloose = 0;
	int bdev = exer_io_is_bdev(rn->io);

	allowance_of(rn, op, r, at, &a);
	if (r->nparts)
		exer_pieces(op->len, op->kind == XO_URING_LINKED ? 1 : parts,
			    exer_io_align(rn->io), st, ln);
	else {
		st[0] = 0;
		ln[0] = op->len;
	}
	if (op->kind == XO_URING_LINKED)
		parts = 1;
	for (i = 0; i < parts; i++) {
		long long want = ln[i], res = r->nparts ? r->parts[i] : r->res;
		struct allowance ai = a;

		part_fault(&ai, st[i], ln[i]);
		ai.asked = ln[i];
		if (bdev) {
			want = clamp_len(rn->m.size, at + st[i], ln[i]);
			ai.enospc = want == 0;
		}
		n = judge(rn, &ai, res, want, what);
		if (n < 0)
			return -1;
		exer_model_write(&rn->m, at + st[i], n, rn->expect + st[i], !bdev);
		if (op->kind == XO_CLONE)
			memset(rn->m.unit + (at + st[i]) / EXER_UNIT, XL_SHARED,
			       (size_t)(n / EXER_UNIT));
		/* A clone or a copy may share blocks: a write there copies. */
		if (op->kind == XO_CLONE || op->kind == XO_COPY_RANGE)
			exer_model_alloc(&rn->m, at + st[i], n, 0, 0);
		/* What a stopped transfer may have done past its count. */
		if ((res == -EINVAL && ai.misaligned) ||
		    (ai.nospace && n < want))
			loose[nloose++] = (struct span){ st[i] + n, st[i] + ln[i] };
		else if (ai.fault_at >= 0 && ai.fault_at < ln[i])
			loose[nloose++] = (struct span){
				st[i] + n, st[i] + (n > ai.fault_at ? n : ai.fault_at) };
		/* Pieces after a short one are not contiguous with it. */
		if (n < want && r->nparts == 0)
			break;
	}
	for (i = 0; i < nloose; i++)
		if (adopt(rn, at + loose[i].lo, at + loose[i].hi,
			  rn->expect + loose[i].lo, !op_direct(rn, op), what) != 0)
			return -1;
	return 0;
}

static int apply_read(struct run *rn, const struct exer_op *op,
		      const struct exer_result *r, const char *what)
{
	struct allowance a;
	long long st[EXER_MAX_AIO + 1], ln[EXER_MAX_AIO + 1], n;
	unsigned int i, parts = r->nparts ? r->nparts : 1;
	char how[DIAG_LEN + 64];

	allowance_of(rn, op, r, op->off, &a);
	if (r->nparts)
		exer_pieces(op->len, parts, exer_io_align(rn->io), st, ln);
	else {
		st[0] = 0;
		ln[0] = op->len;
	}
	for (i = 0; i < parts; i++) {
		long long want = clamp_len(rn->m.size, op->off + st[i], ln[i]);
		struct allowance ai = a;

		part_fault(&ai, st[i], ln[i]);
		ai.asked = ln[i];
		n = judge(rn, &ai, r->nparts ? r->parts[i] : r->res, want, what);
		if (n < 0)
			return -1;
		snprintf(how, sizeof(how), "%.200s, what it read", what);
		if (n > 0 && r->data != NULL &&
		    compare_model(rn, how, r->data + st[i], op->off + st[i], n) != 0)
			return -1;
	}
	return 0;
}

static int apply_linked(struct run *rn, const struct exer_op *op,
			const struct exer_result *r, const char *what)
{
	struct exer_result w = *r;
	char how[DIAG_LEN + 64];

	w.nparts = 0;
	w.res = r->parts[0];
	if (apply_write(rn, op, &w, op->off, what) != 0)
		return -1;
	snprintf(how, sizeof(how), "%.200s, the linked read", what);
	if (r->parts[1] != clamp_len(rn->m.size, op->off, op->len)) {
		fail(rn, "%s: res %lld, expected %lld", how, r->parts[1],
		     clamp_len(rn->m.size, op->off, op->len));
		return -1;
	}
	return compare_model(rn, how, r->data, op->off, r->parts[1]);
}

static int apply_seek(struct run *rn, const struct exer_op *op,
		      const struct exer_result *r, const char *what)
{
	long long i, end = r->res, lim;

	if (op->off >= rn->m.size) {
		if (r->res != -ENXIO) {
			fail(rn, "%s: %lld%s%s at or past EOF %lld, expected ENXIO",
			     what, r->res, r->res < 0 ? " " : "", err_text(r->res),
			     rn->m.size);
			return -1;
		}
		return 0;
	}
	if (r->res == -ENXIO && !(op->variant & 1))
		end = rn->m.size;
	else if (r->res < op->off || r->res > rn->m.size) {
		fail(rn, "%s: %lld%s%s, expected in [%lld, %lld]", what, r->res,
		     r->res < 0 ? " " : "", err_text(r->res), op->off, rn->m.size);
		return -1;
	} else {
		rn->m.pos[op->fd] = r->res;
	}
	/* SEEK_DATA skipped [off, end): a hole. SEEK_HOLE's hole at end
	 * must read as zeros to the end of its block. */
	i = op->variant & 1 ? end : op->off;
	lim = op->variant & 1 ? (end / exer_io_fs_block(rn->io) + 1) *
					exer_io_fs_block(rn->io) : end;
	for (; i < lim && i < rn->m.size; i++) {
		if (rn->m.data[i] != 0) {
			fail(rn, "%s: returned %lld%s, but byte %lld is %02x (data)",
			     what, r->res, r->res < 0 ? " (ENXIO)" : "", i,
			     rn->m.data[i]);
			return -1;
		}
	}
	return 0;
}

static int apply_range(struct run *rn, const struct exer_op *op,
		       const struct exer_result *r, const char *what)
{
	if (op->kind == XO_SEEK)
		return apply_seek(rn, op, r, what);
	if (r->res == -EOPNOTSUPP && (op->kind == XO_FALLOCATE ||
				      op->kind == XO_BLKZERO)) {
		exer_io_mark_unsupported(rn->io, op->kind, op->variant);
		return 0;
	}
	if (r->res == -ENOSPC && may_enospc(rn, op, op->off)) {
		/* It may have done part: a fallocate allocates (and moves the
		 * size) chunk by chunk, a zeroing zeroes some. */
		if (op->kind != XO_FALLOCATE)
			return 0;
		memset(rn->expect, 0, (size_t)op->len);
		return adopt(rn, op->off, op->off + op->len, rn->expect, 0, what);
	}
	if (r->res != 0) {
		fail(rn, "%s: %s%s", what, r->res < 0 ? "" : "returned ",
		     r->res < 0 ? err_text(r->res) : "nonzero");
		return -1;
	}
	if (op->kind == XO_FALLOCATE)
		exer_model_falloc(&rn->m, op->variant, op->off, op->len);
	else if (op->kind == XO_TRUNCATE)
		exer_model_resize(&rn->m, op->off);
	else if (op->kind == XO_BLKZERO)
		exer_model_zero(&rn->m, op->off, op->len);
	return 0;
}

/* ---- one step ---- */

/* Whether op can be issued against the model as it is (a shrunk trace
 * can leave an op without what it needs: then it is not issued). */
static int op_valid(const struct run *rn, const struct exer_op *op)
{
	const struct exer_model *m = &rn->m;

	if (exer_io_unsupported(rn->io, op->kind, op->variant))
		return 0;
	if (exer_kind_is_write(op->kind) &&
	    write_at(rn, op) + op->len > EXER_MAX_SIZE &&
	    !(exer_io_is_bdev(rn->io) && op->kind <= XO_URING_READ))
		return 0;
	if ((op->kind == XO_MMAP_WRITE || op->kind == XO_MMAP_READ) &&
	    (op->len <= 0 || op->off + op->len > m->size))
		return 0;
	if (op->buf == XB_SELFMAP && exer_kind_is_write(op->kind) &&
	    (op->src + op->len > m->size ||
	     (op->src < op->off + op->len && op->off < op->src + op->len)))
		return 0;
	if (op->kind == XO_FALLOCATE &&
	    !exer_falloc_valid(m, op, exer_io_fs_block(rn->io)))
		return 0;
	/*
	 * Not issued: an io_uring buffered write from a buffer with a
	 * PROT_NONE page. Debian's 6.1.192 i386 and armv7 kernels spin for
	 * ever in their io-wq worker (generic_perform_write, state R; seed
	 * 2002 op 75), a kernel bug the exerciser found that every 32-bit
	 * baseline and rc share, so it is no regression and would only cost
	 * each such run a timeout. docs/agent.md says so.
	 */
	if (op->kind == XO_URING_WRITE && op->buf == XB_HOLE &&
	    op->fd == XF_BUFFERED)
		return 0;
	/* Full: a store into a hole would be SIGBUS, and a collapse or
	 * insert that fails half-way has no contract to hold it to. */
	if (rn->full && (op->kind == XO_MMAP_WRITE ||
			 (op->kind == XO_FALLOCATE && op->variant >= 5)))
		return 0;
	if (exer_io_is_bdev(rn->io) &&
	    (op->kind == XO_TRUNCATE || op->kind == XO_SEEK ||
	     (op->kind >= XO_SENDFILE && op->kind <= XO_CLONE)))
		return 0;
	return 1;
}

static void cover(struct run *rn, const struct exer_op *op)
{
	unsigned int c = ((unsigned int)op->kind * XB_NKINDS + op->buf) *
			 XL_NLAYOUTS + exer_layout_of(&rn->m, op->off, op->len);

	rn->o.cells[c / 8] |= (unsigned char)(1u << (c % 8));
}

static void update_position(struct run *rn, const struct exer_op *op,
			    const struct exer_result *r, long long at)
{
	long long moved = r->res > 0 ? r->res : 0;

	switch (op->kind) {
	case XO_WRITE:
	case XO_WRITEV:
	case XO_READ:
	case XO_READV:
	case XO_SENDFILE:
		rn->m.pos[op->fd] = r->res <= 0 ? op->off :
				    (exer_kind_is_write(op->kind) ? at : op->off) + moved;
		break;
	case XO_PWRITEV2:
	case XO_PREADV2:
		if (op->use_pos)
			rn->m.pos[op->fd] = r->res <= 0 ? op->off :
					    (op->kind == XO_PWRITEV2 ? at : op->off) + moved;
		break;
	}
}

static void step_trace(struct run *rn, const struct exer_result *r,
		       const char *text)
{
	if (rn->trace == NULL)
		return;
	if (r->skipped != NULL)
		fprintf(rn->trace, "# op %u: %s: not issued (%s)\n", rn->step,
			text, r->skipped);
	else {
		unsigned int i;

		fprintf(rn->trace, "# op %u: %s -> %lld%s%s", rn->step, text,
			r->res, r->res < 0 ? " " : "", err_text(r->res));
		for (i = 0; i < r->nparts; i++)
			fprintf(rn->trace, "%s%lld", i ? "," : " [", r->parts[i]);
		fprintf(rn->trace, "%s\n", r->nparts ? "]" : "");
	}
}

static int apply(struct run *rn, const struct exer_op *op,
		 const struct exer_result *r, long long at, const char *what)
{
	if (op->kind == XO_URING_LINKED)
		return apply_linked(rn, op, r, what);
	if (op->kind == XO_CLONE || op->kind == XO_COPY_RANGE) {
		if (r->res == -EOPNOTSUPP || r->res == -EXDEV) {
			exer_io_mark_unsupported(rn->io, op->kind, 0);
			return 0;
		}
	}
	if (exer_kind_is_write(op->kind))
		return apply_write(rn, op, r, at, what);
	if (exer_kind_is_read(op->kind))
		return apply_read(rn, op, r, what);
	return apply_range(rn, op, r, what);
}

static void run_step(struct run *rn, const struct exer_op *op)
{
	struct exer_result r;
	char text[160], what[DIAG_LEN + 64], when[DIAG_LEN + 64];
	long long at = write_at(rn, op), lo, hi;

	if (!op_valid(rn, op)) {
		rn->o.skipped++;
		return;
	}
	cover(rn, op);
	exer_op_text(op, text, sizeof(text));
	/* What the watchdog quotes if this op never returns. */
	if (suite_progress != NULL)
		snprintf(suite_progress, SUITE_PROGRESS_LEN, "seed %u op %u: %.96s",
			 rn->seed, rn->step, text);
	snprintf(what, sizeof(what), "%s", text);
	if (exer_kind_is_write(op->kind))
		source_bytes(rn, op, at, rn->expect);
	exer_io_run(rn->io, op, rn->m.size, &r);
	step_trace(rn, &r, text);
	if (r.skipped != NULL) {
		exer_io_mark_unsupported(rn->io, op->kind, op->variant);
		rn->o.skipped++;
		return;
	}
	if (r.res == -ENOSYS) {
		exer_io_mark_unsupported(rn->io, op->kind, op->variant);
		rn->o.skipped++;
		return;
	}
	if (apply(rn, op, &r, at, what) != 0)
		return;
	update_position(rn, op, &r, at);
	snprintf(when, sizeof(when), "after %s", text);
	if (check_st_size(rn, when) != 0)
		return;
	if (r.pos_after != rn->m.pos[op->fd]) {
		fail(rn, "%s: file position %lld, expected %lld", when,
		     r.pos_after, rn->m.pos[op->fd]);
		return;
	}
	lo = (op->kind == XO_FALLOCATE || op->kind == XO_TRUNCATE ? op->off : at) -
	     512;
	hi = op->kind == XO_FALLOCATE && op->variant >= 5 ? rn->m.size + 512 :
							    at + op->len + 512;
	if (op->kind == XO_TRUNCATE)
		hi = (op->off > rn->m.size ? op->off : rn->m.size) + 4096;
	if (check_range(rn, (int)(rn->step % 3), lo, hi, when) != 0)
		return;
	if (rn->step % VERIFY_EVERY == VERIFY_EVERY - 1)
		check_all(rn, when);
}

/* ---- a seed ---- */

/*
 * Fill the filesystem, then give back leave bytes: fallocate a filler in
 * halving chunks until nothing more fits, shorten it by leave, and sync
 * so a copy-on-write filesystem frees the blocks at once.
 */
static int fill_fs(struct run *rn, long long leave, struct diag *d)
{
	long long done = 0, chunk = 256LL << 20;
	int fd;

	snprintf(rn->fill_path, sizeof(rn->fill_path), "%s.fill", rn->env->path);
	fd = open(rn->fill_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		diag_add(d, "open %s: %s", rn->fill_path, strerror(errno));
		return -1;
	}
	rn->fill_fd = fd;
	while (chunk >= 65536) {
		if (fallocate(fd, 0, done, chunk) == 0)
			done += chunk;
		else if (errno == ENOSPC)
			chunk /= 2;
		else {
			diag_add(d, "filling the filesystem: fallocate: %s",
				 strerror(errno));
			return -1;
		}
	}
	if (ftruncate(fd, done > leave ? done - leave : 0) != 0 ||
	    syncfs(fd) != 0) {
		diag_add(d, "giving back %lld bytes: %s", leave, strerror(errno));
		return -1;
	}
	return 0;
}

static int run_open(struct run *rn, const struct suite_env *env,
		    unsigned int seed, struct diag *d)
{
	long long base = 0, size = 0;
	struct statfs sf;

	memset(rn, 0, sizeof(*rn));
	rn->env = env;
	rn->seed = seed;
	rn->fill_fd = -1;
	rn->full = !env->bdev &&
		   seed / EXER_SEEDS_PER_PROFILE == EXER_PROFILE_FULL;
	if (env->bdev) {
		if (env->dev_size < 2 * EXER_MAX_SIZE) {
			diag_add(d, "device of %lld bytes: too small", env->dev_size);
			return -1;
		}
		/* The window ends at the device's end: writes across it are
		 * short, and reads stop there, as at a file's EOF. */
		base = (env->dev_size - EXER_MAX_SIZE) & ~(PAGE - 1);
		size = env->dev_size - base;
		if (size > EXER_MAX_SIZE)
			size = EXER_MAX_SIZE;
	}
	rn->expect = aligned(EXER_MAX_IO, d);
	rn->back = aligned(EXER_MAX_SIZE + 2 * PAGE, d);
	if (rn->expect == NULL || rn->back == NULL ||
	    exer_model_init(&rn->m, size, 1) != 0)
		return -1;
	rn->io = exer_io_open(env->path, env, base, d);
	if (rn->io == NULL)
		return -1;
	rn->btrfs = statfs(env->path, &sf) == 0 &&
		    (unsigned long)sf.f_type == 0x9123683eUL;
	/* Between 0.75 and 2.25 MiB left: less than the file may grow. */
	if (rn->full && fill_fs(rn, 786432 + (seed % 4) * 524288LL, d) != 0)
		return -1;
	if (env->bdev && exer_io_readback(rn->io, 1, 0, size, rn->m.data) != size) {
		diag_add(d, "reading the device window: short");
		return -1;
	}
	if (env->bdev) {
		unsigned int i;

		memset(rn->m.unit, XL_WRITTEN, sizeof(rn->m.unit));
		/* Positions are the device's, the model's the window's. */
		for (i = 0; i < XF_NFDS; i++)
			rn->m.pos[i] = -base;
	}
	return 0;
}

static void run_close(struct run *rn)
{
	exer_io_close(rn->io);
	exer_model_free(&rn->m);
	free(rn->expect);
	free(rn->back);
	rn->io = NULL;
	if (!rn->env->bdev)
		unlink(rn->env->path);
	if (rn->fill_fd >= 0) {
		close(rn->fill_fd);
		unlink(rn->fill_path);
	}
}

void exer_draw(unsigned int seed, const struct suite_env *env,
	       struct exer_op *ops, unsigned int nops)
{
	struct exer_gen g = {
		.profile = seed / EXER_SEEDS_PER_PROFILE,
		.align = env->dio_offset_align >= 512 ? env->dio_offset_align : 512,
		.fs_block = 4096,
		.bdev = env->bdev,
	};
	struct exer_model shadow;
	struct exer_rng r;
	unsigned int i;

	if (g.profile < 1 || g.profile > EXER_PROFILE_MAX)
		g.profile = EXER_PROFILE_MIXED;
	if (env->bdev)
		g.profile = EXER_PROFILE_BDEV;
	exer_model_init(&shadow, env->bdev ? EXER_MAX_SIZE : 0, 0);
	exer_rng_seed(&r, seed);
	for (i = 0; i < nops; i++) {
		exer_gen_op(&r, &g, &shadow, &ops[i]);
		exer_gen_assume(&shadow, &ops[i], &g);
	}
}

int exer_run_ops(const struct suite_env *env, unsigned int seed,
		 const struct exer_op *ops, unsigned int nops,
		 const unsigned char *keep, FILE *trace,
		 struct exer_outcome *out, struct diag *d)
{
	struct run *rn = calloc(1, sizeof(*rn));
	unsigned int i;
	int rc;

	if (rn == NULL) {
		diag_add(d, "out of memory");
		return -1;
	}
	if (run_open(rn, env, seed, d) != 0) {
		run_close(rn);
		free(rn);
		return -1;
	}
	rn->trace = trace;
	for (i = 0; i < nops && !rn->o.failed; i++) {
		rn->step = i;
		if (keep == NULL || keep[i])
			run_step(rn, &ops[i]);
	}
	if (!rn->o.failed) {
		struct exer_op drop = { .kind = XO_DROP, .fd = XF_BUFFERED };
		struct exer_result r;

		rn->step = nops;
		exer_io_run(rn->io, &drop, rn->m.size, &r);
		check_all(rn, "at the end, after dropping the page cache");
	}
	run_close(rn);
	*out = rn->o;
	rc = rn->o.failed;
	free(rn);
	return rc;
}
