// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exerciser's generator and model. A seed draws its whole sequence of
 * operations up front, against a shadow of the file's size and layout that
 * assumes every operation succeeds: the sequence is a pure function of the
 * seed and the filesystem's alignments, so a replay (or a shrunk subset)
 * issues the same syscalls. The model (struct exer_model) is what the
 * file must hold; exer.c updates it from what the kernel answered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/falloc.h>
#include <linux/fs.h>

#include "testio.h"
#include "exer_internal.h"

static uint32_t rnd(struct exer_rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dULL) >> 32);
}

static long long rnd_in(struct exer_rng *r, long long lo, long long hi)
{
	if (hi <= lo)
		return lo;
	return lo + (long long)(rnd(r) % (uint64_t)(hi - lo));
}

static int chance(struct exer_rng *r, unsigned int pct)
{
	return rnd(r) % 100 < pct;
}

void exer_rng_seed(struct exer_rng *r, unsigned int seed)
{
	r->s = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)seed * 0xbf58476d1ce4e5b9ULL);
	if (r->s == 0)
		r->s = 1;
	(void)rnd(r);
}

/* Which kinds a profile draws, by weight. */
static const uint8_t weights[EXER_PROFILE_MAX + 1][XO_NKINDS] = {
	[EXER_PROFILE_SYNC] = {
		[XO_WRITE] = 8, [XO_PWRITE] = 10, [XO_WRITEV] = 6,
		[XO_PWRITEV] = 6, [XO_PWRITEV2] = 12, [XO_READ] = 3,
		[XO_PREAD] = 4, [XO_READV] = 2, [XO_PREADV] = 2,
		[XO_PREADV2] = 5, [XO_FALLOCATE] = 12, [XO_TRUNCATE] = 6,
		[XO_SYNC] = 3, [XO_DROP] = 2, [XO_SEEK] = 4, [XO_MMAP_READ] = 2,
		[XO_COPY_RANGE] = 2, [XO_CLONE] = 2,
	},
	[EXER_PROFILE_ASYNC] = {
		[XO_AIO_WRITE] = 16, [XO_AIO_READ] = 8, [XO_URING_WRITE] = 16,
		[XO_URING_READ] = 8, [XO_URING_LINKED] = 5, [XO_PWRITE] = 4,
		[XO_PREAD] = 3, [XO_FALLOCATE] = 8, [XO_TRUNCATE] = 4,
		[XO_SYNC] = 3, [XO_DROP] = 2, [XO_MMAP_READ] = 3, [XO_SEEK] = 2,
	},
	[EXER_PROFILE_MIXED] = {
		[XO_PWRITE] = 8, [XO_WRITE] = 4, [XO_PWRITEV2] = 6,
		[XO_PREAD] = 4, [XO_PREADV2] = 3, [XO_AIO_WRITE] = 5,
		[XO_AIO_READ] = 3, [XO_URING_WRITE] = 5, [XO_URING_READ] = 3,
		[XO_MMAP_WRITE] = 6, [XO_MMAP_READ] = 4, [XO_SPLICE_READ] = 4,
		[XO_SPLICE_WRITE] = 4, [XO_SENDFILE] = 4, [XO_COPY_RANGE] = 5,
		[XO_CLONE] = 5, [XO_FALLOCATE] = 8, [XO_TRUNCATE] = 5,
		[XO_SYNC] = 3, [XO_DROP] = 3, [XO_SEEK] = 3,
	},
	/* Preallocate, then write into it with the filesystem full. */
	[EXER_PROFILE_FULL] = {
		[XO_PWRITE] = 12, [XO_PWRITEV2] = 8, [XO_WRITE] = 4,
		[XO_AIO_WRITE] = 6, [XO_URING_WRITE] = 6, [XO_PREAD] = 3,
		[XO_FALLOCATE] = 20, [XO_TRUNCATE] = 3, [XO_SYNC] = 3,
		[XO_DROP] = 2, [XO_SEEK] = 2, [XO_COPY_RANGE] = 2,
	},
	[EXER_PROFILE_BDEV] = {
		[XO_WRITE] = 5, [XO_PWRITE] = 8, [XO_PWRITEV2] = 16,
		[XO_PWRITEV] = 4,
		[XO_PREAD] = 5, [XO_PREADV2] = 6, [XO_AIO_WRITE] = 8,
		[XO_AIO_READ] = 5, [XO_URING_WRITE] = 14, [XO_URING_READ] = 6,
		[XO_URING_LINKED] = 3, [XO_MMAP_WRITE] = 3, [XO_MMAP_READ] = 3,
		[XO_SPLICE_READ] = 3, [XO_SPLICE_WRITE] = 3, [XO_FALLOCATE] = 4,
		[XO_SYNC] = 3, [XO_DROP] = 2, [XO_BLKZERO] = 4,
	},
};

static unsigned int pick_kind(struct exer_rng *r, unsigned int profile)
{
	const uint8_t *w = weights[profile];
	unsigned int total = 0, i, x;

	for (i = 0; i < XO_NKINDS; i++)
		total += w[i];
	x = rnd(r) % total;
	for (i = 0; i < XO_NKINDS; i++) {
		if (x < w[i])
			return i;
		x -= w[i];
	}
	return XO_PWRITE;
}

/* ---- the model ---- */

int exer_model_init(struct exer_model *m, long long size, int with_data)
{
	memset(m, 0, sizeof(*m));
	if (with_data) {
		m->data = calloc(1, EXER_MAX_SIZE);
		if (m->data == NULL)
			return -1;
	}
	m->size = size;
	return 0;
}

void exer_model_free(struct exer_model *m)
{
	free(m->data);
	m->data = NULL;
}

static void units_set(struct exer_model *m, long long off, long long len,
		      uint8_t state, int whole_only)
{
	long long u0, u1, u;

	if (len <= 0)
		return;
	u0 = whole_only ? (off + EXER_UNIT - 1) / EXER_UNIT : off / EXER_UNIT;
	u1 = whole_only ? (off + len) / EXER_UNIT :
			  (off + len + EXER_UNIT - 1) / EXER_UNIT;
	for (u = u0; u < u1 && u < EXER_UNITS; u++)
		m->unit[u] = state;
}

static void units_from_hole(struct exer_model *m, long long off, long long len)
{
	long long u;

	for (u = off / EXER_UNIT; u * EXER_UNIT < off + len && u < EXER_UNITS; u++)
		if (m->unit[u] == XL_HOLE)
			m->unit[u] = XL_UNWRITTEN;
}

void exer_model_alloc(struct exer_model *m, long long off, long long len,
		      int allocated, int whole)
{
	long long s0, s1, s;

	if (len <= 0)
		return;
	s0 = whole ? (off + EXER_SECTOR - 1) / EXER_SECTOR : off / EXER_SECTOR;
	s1 = whole ? (off + len) / EXER_SECTOR :
		     (off + len + EXER_SECTOR - 1) / EXER_SECTOR;
	for (s = s0 < 0 ? 0 : s0; s < s1 && s < EXER_SECTORS; s++)
		m->alloc[s] = (uint8_t)allocated;
}

int exer_model_allocated(const struct exer_model *m, long long off,
			 long long len)
{
	long long s;

	for (s = off / EXER_SECTOR;
	     s * EXER_SECTOR < off + len && s < EXER_SECTORS; s++)
		if (!m->alloc[s])
			return 0;
	return off + len <= EXER_MAX_SIZE;
}

void exer_model_write(struct exer_model *m, long long at, long long n,
		      const unsigned char *src, int grows)
{
	if (n <= 0)
		return;
	exer_model_alloc(m, at, n, 1, 0);
	if (m->data != NULL && src != NULL)
		memcpy(m->data + at, src, (size_t)n);
	units_set(m, at, n, XL_WRITTEN, 0);
	if (grows && at + n > m->size)
		m->size = at + n;
}

void exer_model_zero(struct exer_model *m, long long off, long long len)
{
	if (off >= m->size || len <= 0)
		return;
	if (off + len > m->size)
		len = m->size - off;
	if (m->data != NULL)
		memset(m->data + off, 0, (size_t)len);
}

void exer_model_resize(struct exer_model *m, long long size)
{
	if (size < m->size) {
		if (m->data != NULL)
			memset(m->data + size, 0, (size_t)(m->size - size));
		units_set(m, size, m->size - size + EXER_UNIT, XL_HOLE, 1);
		/* Blocks past the new EOF are freed (preallocated ones too). */
		exer_model_alloc(m, size, EXER_MAX_SIZE - size, 0, 1);
	}
	m->size = size;
}

static void shift_units(struct exer_model *m, long long off, long long len,
			int collapse)
{
	long long uo = off / EXER_UNIT, ul = len / EXER_UNIT;

	if (collapse)
		memmove(m->unit + uo, m->unit + uo + ul,
			(size_t)(EXER_UNITS - uo - ul));
	else
		memmove(m->unit + uo + ul, m->unit + uo,
			(size_t)(EXER_UNITS - uo - ul));
	if (!collapse)
		memset(m->unit + uo, XL_HOLE, (size_t)ul);
}

/* Apply a successful fallocate of variant (exer_falloc_mode). */
void exer_model_falloc(struct exer_model *m, unsigned int variant,
		       long long off, long long len)
{
	int mode = exer_falloc_mode(variant);
	long long old = m->size;

	if (mode & FALLOC_FL_COLLAPSE_RANGE) {
		memmove(m->alloc + off / EXER_SECTOR,
			m->alloc + (off + len) / EXER_SECTOR,
			(size_t)(EXER_SECTORS - (off + len) / EXER_SECTOR));
		if (m->data != NULL)
			memmove(m->data + off, m->data + off + len,
				(size_t)(old - off - len));
		shift_units(m, off, len, 1);
		exer_model_resize(m, old - len);
		return;
	}
	if (mode & FALLOC_FL_INSERT_RANGE) {
		memmove(m->alloc + (off + len) / EXER_SECTOR,
			m->alloc + off / EXER_SECTOR,
			(size_t)(EXER_SECTORS - (off + len) / EXER_SECTOR));
		memset(m->alloc + off / EXER_SECTOR, 0, (size_t)(len / EXER_SECTOR));
		if (m->data != NULL) {
			memmove(m->data + off + len, m->data + off,
				(size_t)(old - off));
			memset(m->data + off, 0, (size_t)len);
		}
		shift_units(m, off, len, 0);
		m->size = old + len;
		return;
	}
	if (mode & FALLOC_FL_PUNCH_HOLE) {
		exer_model_zero(m, off, len);
		units_set(m, off, len, XL_HOLE, 1);
		exer_model_alloc(m, off, len, 0, 1);
		return;
	}
	exer_model_alloc(m, off, len, 1, 0);
	if (mode & FALLOC_FL_ZERO_RANGE) {
		exer_model_zero(m, off, len);
		units_set(m, off, len, XL_UNWRITTEN, 1);
	} else {
		units_from_hole(m, off, len);
	}
	if (!(mode & FALLOC_FL_KEEP_SIZE) && off + len > m->size)
		m->size = off + len;
}

unsigned int exer_layout_of(const struct exer_model *m, long long off,
			    long long len)
{
	long long u;
	unsigned int seen = 0, st = XL_HOLE;

	if (off >= m->size)
		return XL_PAST_EOF;
	for (u = off / EXER_UNIT;
	     u * EXER_UNIT < off + (len > 0 ? len : 1) && u < EXER_UNITS; u++) {
		st = m->unit[u];
		seen |= 1u << st;
	}
	return (seen & (seen - 1)) ? XL_MIXED : st;
}

/* ---- drawing one operation ---- */

/* A place worth hitting: EOF, a layout change, an extent-ish boundary. */
/* Inside a run of preallocated (unwritten) units, or -1 (the full
 * profile's writes go there: a write into preallocated space must not
 * fail for lack of space). */
static long long inside_unwritten(struct exer_rng *r, const struct exer_model *m)
{
	long long u, tries;

	for (tries = 0; tries < 32; tries++) {
		u = rnd_in(r, 0, EXER_UNITS);
		if (m->unit[u] == XL_UNWRITTEN && u * EXER_UNIT < m->size)
			return u * EXER_UNIT + rnd_in(r, 0, EXER_UNIT);
	}
	return -1;
}

static long long anchor(struct exer_rng *r, const struct exer_model *m,
			long long a, unsigned int profile)
{
	long long u, tries;

	if (profile == EXER_PROFILE_FULL && chance(r, 50) &&
	    (u = inside_unwritten(r, m)) >= 0)
		return u;
	/* A device's last sectors: transfers across its end. */
	if (profile == EXER_PROFILE_BDEV && chance(r, 30))
		return m->size - rnd_in(r, 1, 65) * 512;

	switch (rnd(r) % 8) {
	case 0:
		return 0;
	case 1:
	case 2:
		return m->size + rnd_in(r, -2 * a, 2 * a + 1);
	case 3:
		return rnd_in(r, 1, 32) * 65536 + rnd_in(r, -a, a + 1);
	case 4:
		for (tries = 0; tries < 16; tries++) {
			u = rnd_in(r, 1, EXER_UNITS);
			if (m->unit[u] != m->unit[u - 1])
				return u * EXER_UNIT + rnd_in(r, -a, a + 1);
		}
		return rnd_in(r, 0, m->size + 65536);
	default:
		return rnd_in(r, 0, (m->size > 65536 ? m->size : 65536) + 65536);
	}
}

static long long length(struct exer_rng *r, long long a, unsigned int profile)
{
	/* A device's huge writes: more than one bio (RWF_NOWAIT must then
	 * fail whole or complete, 67d59247d4b5's class). */
	if (profile == EXER_PROFILE_BDEV && chance(r, 20))
		return 1024 * 1024 + rnd_in(r, 1, 33) * PAGE;
	switch (rnd(r) % 10) {
	case 0:
	case 1:
		return rnd_in(r, 1, a + 1);
	case 2:
	case 3:
	case 4:
	case 5:
		return rnd_in(r, 1, 9) * a;
	case 6:
	case 7:
	case 8:
		return rnd_in(r, 4096, 131072);
	default:
		return rnd_in(r, 131072, EXER_TYPICAL_IO + 1);
	}
}

static long long align_down(long long v, long long a)
{
	return v < 0 ? 0 : v / a * a;
}

/* Offset and length, aligned to a (0: as drawn), inside EXER_MAX_SIZE. */
static void place(struct exer_rng *r, const struct exer_model *m,
		  struct exer_op *op, long long a, long long align, long long cap,
		  unsigned int profile)
{
	long long off = anchor(r, m, a, profile), len = length(r, a, profile);

	if (len > cap)
		len = cap;
	if (align > 1) {
		off = align_down(off, align);
		len = align_down(len, align);
		if (len == 0)
			len = align;
	}
	if (off < 0)
		off = 0;
	if (off + len > EXER_MAX_SIZE) {
		off = EXER_MAX_SIZE - len;
		if (align > 1)
			off = align_down(off, align);
	}
	op->off = off;
	op->len = len;
}

static int is_direct_fd(const struct exer_gen *g, unsigned int fd)
{
	return fd != XF_BUFFERED || g->bdev;
}

static unsigned int pick_fd(struct exer_rng *r, const struct exer_gen *g,
			    unsigned int kind)
{
	unsigned int x = rnd(r) % 100;

	if (kind >= XO_MMAP_WRITE && kind != XO_SPLICE_READ &&
	    kind != XO_SPLICE_WRITE && kind != XO_SENDFILE &&
	    kind != XO_COPY_RANGE && kind != XO_SYNC)
		return XF_BUFFERED;
	if (x < 60)
		return XF_DIRECT;
	if (x < 88 || g->bdev || kind >= XO_AIO_WRITE || exer_kind_is_read(kind))
		return XF_BUFFERED;
	return XF_APPEND;
}

static unsigned int pick_rwf(struct exer_rng *r, unsigned int kind)
{
	static const uint32_t wflags[] = {
		0, 0, 0, RWF_DSYNC, RWF_SYNC, RWF_HIPRI, RWF_NOWAIT, RWF_APPEND,
		RWF_NOWAIT | RWF_DSYNC,
	};
	static const uint32_t rflags[] = { 0, 0, RWF_NOWAIT, RWF_HIPRI };
	static const uint32_t aflags[] = { 0, 0, 0, 0, RWF_DSYNC, RWF_NOWAIT };

	if (kind == XO_PWRITEV2)
		return wflags[rnd(r) % 9];
	if (kind == XO_PREADV2)
		return rflags[rnd(r) % 4];
	if (kind == XO_AIO_WRITE || kind == XO_URING_WRITE ||
	    kind == XO_AIO_READ || kind == XO_URING_READ)
		return aflags[rnd(r) % 6];
	return 0;
}

static unsigned int pick_buf(struct exer_rng *r, const struct exer_model *m,
			     struct exer_op *op, int direct)
{
	unsigned int x = rnd(r) % 100;
	int read = exer_kind_is_read(op->kind);

	if (x < 55)
		return XB_HEAP;
	if (x < 63)
		return direct ? XB_MISALIGNED : XB_HEAP;
	if (x < 73)
		return XB_FRESH;
	if (x < 82)
		return op->len > 2 * PAGE ? XB_HOLE : XB_HEAP;
	if (read)
		return XB_RDONLY;
	if (x < 91) {
		op->src = align_down(rnd_in(r, 0, EXER_AUX_SIZE - op->len), 512);
		return XB_FILEMAP;
	}
	/* A mapping of the file itself: inside EOF, apart from the target. */
	if (op->fd != XF_APPEND && !(op->rwf & RWF_APPEND) &&
	    m->size >= op->len * 2 && op->off >= op->len) {
		op->src = align_down(rnd_in(r, 0, op->off - op->len + 1), 512);
		if (op->src + op->len <= m->size)
			return XB_SELFMAP;
	}
	return XB_HEAP;
}

/* What a kind needs beyond place(): fd, flags, buffer, variant, limits. */
static void shape(struct exer_rng *r, const struct exer_gen *g,
		  const struct exer_model *m, struct exer_op *op)
{
	long long a = g->align, b = g->fs_block;
	int direct;

	op->fd = (uint8_t)pick_fd(r, g, op->kind);
	op->rwf = pick_rwf(r, op->kind);
	if (g->bdev)
		op->rwf &= ~(uint32_t)RWF_APPEND; /* a device has no end to append at */
	direct = is_direct_fd(g, op->fd);
	/* One in twelve direct operations is deliberately misaligned. */
	place(r, m, op, a, direct && !chance(r, 8) ? a : (chance(r, 50) ? a : 1),
	      EXER_MAX_IO, g->profile);
	if (op->kind <= XO_URING_READ) {
		op->niov = (uint8_t)rnd_in(r, 1, (op->kind >= XO_AIO_WRITE ?
						  EXER_MAX_AIO : EXER_MAX_IOV) + 1);
		op->use_pos = op->kind == XO_PWRITEV2 || op->kind == XO_PREADV2 ?
				      chance(r, 25) : 0;
		op->buf = (uint8_t)pick_buf(r, m, op, direct);
	}
	switch (op->kind) {
	case XO_URING_WRITE:
	case XO_URING_READ:
		op->variant = (uint8_t)(rnd(r) % 4);
		if (op->variant == 2)
			op->buf = XB_HEAP;
		break;
	case XO_URING_LINKED:
		place(r, m, op, a, a, EXER_MAX_IO, g->profile);
		op->fd = chance(r, 70) ? XF_DIRECT : XF_BUFFERED;
		break;
	case XO_MMAP_WRITE:
	case XO_MMAP_READ:
		if (op->off + op->len > m->size)
			op->off = align_down(m->size - op->len, 1);
		op->variant = (uint8_t)(rnd(r) % 2);
		break;
	case XO_SPLICE_READ:
	case XO_SPLICE_WRITE:
		if (op->len > 65536)
			op->len = direct ? 65536 : rnd_in(r, 1, 65537);
		break;
	case XO_SENDFILE:
	case XO_COPY_RANGE:
	case XO_CLONE:
		place(r, m, op, a, op->kind == XO_CLONE || direct ? b : 1,
		      EXER_AUX_SIZE / 2, g->profile);
		op->src = align_down(rnd_in(r, 0, EXER_AUX_SIZE - op->len),
				     op->kind == XO_CLONE || direct ? b : 1);
		break;
	case XO_FALLOCATE:
		op->variant = (uint8_t)(g->bdev ? (chance(r, 50) ? 2 : 4) :
					g->profile == EXER_PROFILE_FULL && chance(r, 60) ?
						  rnd(r) % 2 :
						  rnd(r) % EXER_FALLOC_VARIANTS);
		place(r, m, op, a, op->variant >= 5 || g->bdev ? b : 1,
		      EXER_MAX_IO, g->profile);
		break;
	case XO_TRUNCATE:
		op->off = chance(r, 50) ? rnd_in(r, 0, m->size + 1) :
					  anchor(r, m, a, g->profile);
		op->off = op->off < 0 ? 0 : op->off % (EXER_MAX_SIZE + 1);
		break;
	case XO_SYNC:
		op->variant = (uint8_t)(rnd(r) % 4);
		break;
	case XO_SEEK:
		op->variant = (uint8_t)(rnd(r) % 2);
		break;
	case XO_BLKZERO:
		place(r, m, op, a, a, EXER_MAX_IO, g->profile);
		break;
	}
	/* On a device, transfers across its end (the window's): the part
	 * before it is done and returned, at the end a write is ENOSPC. */
	if (g->bdev && op->kind <= XO_URING_READ && chance(r, 35)) {
		op->off = EXER_MAX_SIZE - align_down(rnd_in(r, 0, op->len + 1), 512);
		op->niov = 1; /* one piece, so that it is the one across */
	}
	/* A huge vectored write on a device: a page per iovec, out of
	 * order, so that it takes more than one bio. */
	if (g->bdev && (op->kind == XO_PWRITEV2 || op->kind == XO_PWRITEV) &&
	    op->len >= 1024 * 1024 && chance(r, 70)) {
		op->variant |= EXER_PAGE_IOVECS;
		op->len = op->len / PAGE * PAGE;
		op->buf = XB_HEAP;
	}
	/* On a device, many writes RWF_NOWAIT: with a huge one, more than
	 * one bio must not be issued for it. */
	if (g->bdev && (op->kind == XO_PWRITEV2 || op->kind == XO_AIO_WRITE ||
			op->kind == XO_URING_WRITE) && chance(r, 20))
		op->rwf |= RWF_NOWAIT;
	if (op->fd == XF_APPEND && (op->kind == XO_SPLICE_WRITE ||
				    op->kind == XO_SENDFILE ||
				    op->kind == XO_COPY_RANGE))
		op->fd = XF_BUFFERED;
}

void exer_gen_op(struct exer_rng *r, const struct exer_gen *g,
		 const struct exer_model *m, struct exer_op *op)
{
	memset(op, 0, sizeof(*op));
	op->kind = (uint8_t)pick_kind(r, g->profile);
	op->tag = (uint16_t)(rnd(r) & 0xffff);
	shape(r, g, m, op);
}

/* The shadow's view of a successful op (sizes and layout only). */
void exer_gen_assume(struct exer_model *m, const struct exer_op *op,
		     const struct exer_gen *g)
{
	long long at = op->fd == XF_APPEND || (op->rwf & RWF_APPEND) ?
			       m->size : op->off;

	if (exer_kind_is_write(op->kind)) {
		long long n = op->len;

		if (g->bdev && at + n > m->size)
			n = m->size - at;
		if (op->kind == XO_MMAP_WRITE && at + n > m->size)
			return;
		exer_model_write(m, at, n, NULL, !g->bdev);
		if (op->kind == XO_CLONE)
			units_set(m, at, n, XL_SHARED, 1);
	} else if (op->kind == XO_FALLOCATE) {
		if (exer_falloc_valid(m, op, g->fs_block))
			exer_model_falloc(m, op->variant, op->off, op->len);
	} else if (op->kind == XO_TRUNCATE && !g->bdev) {
		exer_model_resize(m, op->off);
	}
}

int exer_falloc_valid(const struct exer_model *m, const struct exer_op *op,
		      unsigned int fs_block)
{
	int mode = exer_falloc_mode(op->variant);

	if (op->off + op->len > EXER_MAX_SIZE)
		return 0;
	if (mode & FALLOC_FL_COLLAPSE_RANGE)
		return op->off % fs_block == 0 && op->len % fs_block == 0 &&
		       op->off + op->len < m->size;
	if (mode & FALLOC_FL_INSERT_RANGE)
		return op->off % fs_block == 0 && op->len % fs_block == 0 &&
		       op->off < m->size && m->size + op->len <= EXER_MAX_SIZE;
	return 1;
}

int exer_kind_is_read(unsigned int kind)
{
	return (kind >= XO_READ && kind <= XO_PREADV2) || kind == XO_AIO_READ ||
	       kind == XO_URING_READ || kind == XO_MMAP_READ ||
	       kind == XO_SPLICE_READ;
}

int exer_kind_is_write(unsigned int kind)
{
	return kind <= XO_PWRITEV2 ||
	       kind == XO_AIO_WRITE || kind == XO_URING_WRITE ||
	       kind == XO_URING_LINKED || kind == XO_MMAP_WRITE ||
	       (kind >= XO_SPLICE_WRITE && kind <= XO_CLONE);
}

/* ---- naming ---- */

static const char *const kind_names[XO_NKINDS] = {
	"write", "pwrite", "writev", "pwritev", "pwritev2", "read", "pread",
	"readv", "preadv", "preadv2", "aio-write", "aio-read", "uring-write",
	"uring-read", "uring-write+read", "mmap-write", "mmap-read",
	"splice-read", "splice-write", "sendfile", "copy_file_range",
	"FICLONERANGE", "fallocate", "ftruncate", "sync", "fadvise-dontneed",
	"lseek", "BLKZEROOUT",
};
static const char *const fd_names[XF_NFDS] = { "direct", "buffered",
					       "direct|append" };
static const char *const buf_names[XB_NKINDS] = {
	"heap", "misaligned", "fresh-mmap", "partly-PROT_NONE", "read-only",
	"src-file-mmap", "own-mmap",
};
static const char *const falloc_names[EXER_FALLOC_VARIANTS] = {
	"alloc", "keep-size", "punch", "zero", "zero|keep-size", "collapse",
	"insert",
};
static const char *const sync_names[4] = { "fsync", "fdatasync",
					   "sync_file_range", "syncfs" };
static const char *const uring_names[4] = { "", "vectored ", "fixed-buf ",
					    "registered-file " };

const char *exer_kind_name(unsigned int kind)
{
	return kind < XO_NKINDS ? kind_names[kind] : "?";
}

const char *exer_buf_name(unsigned int buf)
{
	return buf < XB_NKINDS ? buf_names[buf] : "?";
}

static void rwf_text(uint32_t rwf, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s", rwf & RWF_DSYNC ? ",DSYNC" : "",
		 rwf & RWF_SYNC ? ",SYNC" : "", rwf & RWF_HIPRI ? ",HIPRI" : "",
		 rwf & RWF_NOWAIT ? ",NOWAIT" : "",
		 rwf & RWF_APPEND ? ",APPEND" : "");
}

void exer_op_text(const struct exer_op *op, char *buf, size_t len)
{
	char fl[48], what[128] = "";

	rwf_text(op->rwf, fl, sizeof(fl));
	switch (op->kind) {
	case XO_FALLOCATE:
		snprintf(what, sizeof(what), "(%s)",
			 falloc_names[op->variant % EXER_FALLOC_VARIANTS]);
		break;
	case XO_SYNC:
		snprintf(what, sizeof(what), "(%s)", sync_names[op->variant % 4]);
		break;
	case XO_SEEK:
		snprintf(what, sizeof(what), "(%s)",
			 op->variant & 1 ? "SEEK_HOLE" : "SEEK_DATA");
		return (void)snprintf(buf, len, "lseek%s from %lld", what,
				      op->off);
	case XO_TRUNCATE:
		return (void)snprintf(buf, len, "ftruncate to %lld", op->off);
	case XO_DROP:
	case XO_BLKZERO:
		break;
	default:
		snprintf(what, sizeof(what), "(%s%s%s%s, %u%s, %s)",
			 op->kind == XO_URING_WRITE || op->kind == XO_URING_READ ?
				 uring_names[op->variant % 4] : "",
			 fd_names[op->fd % XF_NFDS], fl,
			 op->use_pos ? ", at pos" : "",
			 op->niov ? op->niov : 1,
			 op->variant & EXER_PAGE_IOVECS ? " page-iov" :
			 op->kind >= XO_AIO_WRITE ? " parts" :
			 (op->kind == XO_WRITEV || op->kind == XO_PWRITEV ||
			  op->kind == XO_READV || op->kind == XO_PREADV ||
			  op->kind == XO_PWRITEV2 || op->kind == XO_PREADV2) ?
							" iov" : " call",
			 buf_names[op->buf % XB_NKINDS]);
	}
	if (op->kind >= XO_SENDFILE && op->kind <= XO_CLONE)
		snprintf(buf, len, "%s(%s) %lld from src %lld to %lld",
			 exer_kind_name(op->kind), fd_names[op->fd % XF_NFDS],
			 op->len, op->src, op->off);
	else if (op->buf == XB_SELFMAP || op->buf == XB_FILEMAP)
		snprintf(buf, len, "%s%s %lld at %lld (src %lld)",
			 exer_kind_name(op->kind), what, op->len, op->off,
			 op->src);
	else
		snprintf(buf, len, "%s%s %lld at %lld", exer_kind_name(op->kind),
			 what, op->len, op->off);
}
