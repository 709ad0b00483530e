// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exerciser's hands: one function per family of operations, each
 * issuing the operation exactly as struct exer_op describes it (through
 * the descriptor, buffer and interface it names) and reporting what the
 * kernel answered in struct exer_result. Nothing here judges the answer:
 * exer.c holds the model and the contracts. Buffers that fault, mappings
 * of the files themselves and never-touched memory are made here, per
 * operation, and undone before it returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "testio.h"
#include "exer.h"

#define NVARIANTS 8
#define PIPE_MAX (64L * 1024)

struct exer_io {
	int fd[XF_NFDS];
	int aux;
	int bdev;
	long long base; /* the window's first byte on a device */
	unsigned int align;
	unsigned int fs_block;
	aio_context_t ctx;
	int aio_ok;
	struct ring ring;
	int ring_ok, ring_files, ring_bufs;
	unsigned char *buf;   /* source of writes, EXER_MAX_IO + 2 pages */
	unsigned char *rbuf;  /* reads land here, EXER_MAX_IO + 2 pages */
	unsigned char *fixed; /* the registered buffer, EXER_MAX_IO */
	unsigned char *back;  /* readbacks, EXER_MAX_SIZE + 2 pages */
	unsigned char unsup[XO_NKINDS][NVARIANTS];
	char auxpath[4200];
};

/* One operation's user buffer: where it starts, what to unmap, where it
 * stops being accessible. */
struct xbuf {
	unsigned char *p;
	void *map;
	size_t maplen;
	long long fault_at;
	long long fault_len;
};

static long long page_down(long long v)
{
	return v & ~(PAGE - 1);
}

static long long page_up(long long v)
{
	return (v + PAGE - 1) & ~(PAGE - 1);
}

unsigned char exer_byte(unsigned int tag, long long off)
{
	uint32_t x = (uint32_t)off * 0x9e3779b1u + tag * 0x85ebca6bu;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return (unsigned char)x;
}

static void fill(unsigned char *p, long long len, unsigned int tag,
		 long long off)
{
	long long i;

	for (i = 0; i < len; i++)
		p[i] = exer_byte(tag, off + i);
}

static unsigned char *page_alloc(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, PAGE, len) != 0)
		return NULL;
	memset(p, 0, len);
	return p;
}

static int aux_create(struct exer_io *io, const char *path, struct diag *d)
{
	long long done;

	snprintf(io->auxpath, sizeof(io->auxpath), "%s.src", path);
	io->aux = open(io->auxpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (io->aux < 0) {
		diag_add(d, "open %s: %s", io->auxpath, strerror(errno));
		return -1;
	}
	for (done = 0; done < EXER_AUX_SIZE; done += EXER_TYPICAL_IO) {
		fill(io->buf, EXER_TYPICAL_IO, EXER_AUX_TAG, done);
		if (pwrite(io->aux, io->buf, EXER_TYPICAL_IO, done) !=
		    EXER_TYPICAL_IO) {
			diag_add(d, "writing the source file: %s", strerror(errno));
			return -1;
		}
	}
	if (fsync(io->aux) != 0) {
		diag_add(d, "fsync of the source file: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void ring_setup(struct exer_io *io)
{
	struct iovec iov = { io->fixed, EXER_MAX_IO };

	if (ring_open(&io->ring, 16) != 0)
		return;
	io->ring_ok = 1;
	io->ring_files = syscall(__NR_io_uring_register, io->ring.fd,
				 IORING_REGISTER_FILES, io->fd, XF_NFDS) == 0;
	io->ring_bufs = syscall(__NR_io_uring_register, io->ring.fd,
				IORING_REGISTER_BUFFERS, &iov, 1) == 0;
}

static int open_fds(struct exer_io *io, const char *path,
		    const struct suite_env *env, struct diag *d)
{
	static const int flags[XF_NFDS] = {
		[XF_DIRECT] = O_RDWR | O_DIRECT,
		[XF_BUFFERED] = O_RDWR,
		[XF_APPEND] = O_RDWR | O_DIRECT | O_APPEND,
	};
	int create = env->bdev ? 0 : O_CREAT | O_TRUNC;
	unsigned int i;

	for (i = 0; i < XF_NFDS; i++) {
		io->fd[i] = open(path, flags[i] | O_CLOEXEC | (i == 0 ? create : 0),
				 0644);
		if (io->fd[i] < 0) {
			diag_add(d, "open %s: %s", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

struct exer_io *exer_io_open(const char *path, const struct suite_env *env,
			     long long base, struct diag *d)
{
	struct exer_io *io = calloc(1, sizeof(*io));
	struct statfs sf;
	unsigned int i;

	if (io == NULL) {
		diag_add(d, "out of memory");
		return NULL;
	}
	for (i = 0; i < XF_NFDS; i++)
		io->fd[i] = -1;
	io->aux = -1;
	io->ring.fd = -1;
	io->bdev = env->bdev;
	io->base = base;
	io->align = env->dio_offset_align >= 512 ? env->dio_offset_align : 512;
	io->buf = page_alloc(EXER_MAX_IO + 2 * PAGE);
	io->rbuf = page_alloc(EXER_MAX_IO + 2 * PAGE);
	io->fixed = page_alloc(EXER_MAX_IO);
	io->back = page_alloc(EXER_MAX_SIZE + 2 * PAGE);
	if (io->buf == NULL || io->rbuf == NULL || io->fixed == NULL ||
	    io->back == NULL) {
		diag_add(d, "out of memory");
		goto fail;
	}
	if (open_fds(io, path, env, d) != 0)
		goto fail;
	io->fs_block = fstatfs(io->fd[XF_BUFFERED], &sf) == 0 && sf.f_bsize > 0 ?
			       (unsigned int)sf.f_bsize : 4096;
	if (io->bdev)
		io->fs_block = io->align;
	else if (aux_create(io, path, d) != 0)
		goto fail;
	io->aio_ok = syscall(__NR_io_setup, 8, &io->ctx) == 0;
	ring_setup(io);
	return io;
fail:
	exer_io_close(io);
	return NULL;
}

void exer_io_close(struct exer_io *io)
{
	unsigned int i;

	if (io == NULL)
		return;
	if (io->aio_ok)
		syscall(__NR_io_destroy, io->ctx);
	if (io->ring_ok)
		ring_close(&io->ring);
	for (i = 0; i < XF_NFDS; i++)
		if (io->fd[i] >= 0)
			close(io->fd[i]);
	if (io->aux >= 0) {
		close(io->aux);
		unlink(io->auxpath);
	}
	free(io->buf);
	free(io->rbuf);
	free(io->fixed);
	free(io->back);
	free(io);
}

unsigned int exer_io_align(const struct exer_io *io)
{
	return io->align;
}

unsigned int exer_io_fs_block(const struct exer_io *io)
{
	return io->fs_block;
}

int exer_io_is_bdev(const struct exer_io *io)
{
	return io->bdev;
}

int exer_io_unsupported(const struct exer_io *io, unsigned int kind,
			unsigned int variant)
{
	return io->unsup[kind % XO_NKINDS][variant % NVARIANTS];
}

void exer_io_mark_unsupported(struct exer_io *io, unsigned int kind,
			      unsigned int variant)
{
	io->unsup[kind % XO_NKINDS][variant % NVARIANTS] = 1;
}

long long exer_io_size(struct exer_io *io)
{
	struct stat st;

	if (fstat(io->fd[XF_BUFFERED], &st) != 0)
		return -errno;
	return st.st_size;
}

/* ---- buffers ---- */

static int anon_map(struct xbuf *b, long long len, int prot)
{
	b->maplen = (size_t)page_up(len + PAGE);
	b->map = mmap(NULL, b->maplen, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->map == MAP_FAILED) {
		b->map = NULL;
		return -1;
	}
	b->p = b->map;
	return 0;
}

/* A buffer of len bytes whose page in the middle is PROT_NONE. */
static int hole_map(struct xbuf *b, long long len, int fill_tag,
		    long long file_off)
{
	long long pages;

	if (anon_map(b, len, PROT_READ | PROT_WRITE) != 0)
		return -1;
	if (fill_tag >= 0)
		fill(b->p, len, (unsigned int)fill_tag, file_off);
	pages = page_up(len) / PAGE;
	b->fault_at = (pages / 2) * PAGE;
	if (b->fault_at >= len || b->fault_at == 0)
		b->fault_at = PAGE;
	b->fault_len = PAGE;
	mprotect(b->p + b->fault_at, PAGE, PROT_NONE);
	return 0;
}

static int file_map(struct xbuf *b, int fd, long long src, long long len,
		    long long base)
{
	long long start = page_down(base + src);

	b->maplen = (size_t)(page_up(base + src + len) - start);
	b->map = mmap(NULL, b->maplen, PROT_READ, MAP_SHARED, fd, start);
	if (b->map == MAP_FAILED) {
		b->map = NULL;
		return -1;
	}
	b->p = (unsigned char *)b->map + (base + src - start);
	/* Fault in only the first page (fstests generic/708's shape). */
	(void)*(volatile unsigned char *)b->p;
	return 0;
}

/* The source of a write of op->len bytes landing at file offset at. */
static int write_buffer(struct exer_io *io, const struct exer_op *op,
			long long at, struct xbuf *b)
{
	memset(b, 0, sizeof(*b));
	b->fault_at = -1;
	switch (op->buf) {
	case XB_MISALIGNED:
		b->p = io->buf + 1 + op->tag % 511;
		fill(b->p, op->len, op->tag, at);
		return 0;
	case XB_FRESH:
		return anon_map(b, op->len, PROT_READ | PROT_WRITE);
	case XB_HOLE:
		return hole_map(b, op->len, op->tag, at);
	case XB_FILEMAP:
		return file_map(b, io->aux, op->src, op->len, 0);
	case XB_SELFMAP:
		return file_map(b, io->fd[XF_BUFFERED], op->src, op->len,
				io->base);
	default:
		b->p = io->buf;
		fill(b->p, op->len, op->tag, at);
		return 0;
	}
}

static int read_buffer(struct exer_io *io, const struct exer_op *op,
		       struct xbuf *b)
{
	memset(b, 0, sizeof(*b));
	b->fault_at = -1;
	switch (op->buf) {
	case XB_MISALIGNED:
		b->p = io->rbuf + 1 + op->tag % 511;
		return 0;
	case XB_FRESH:
		return anon_map(b, op->len, PROT_READ | PROT_WRITE);
	case XB_HOLE:
		return hole_map(b, op->len, -1, 0);
	case XB_RDONLY:
		if (anon_map(b, op->len, PROT_READ) != 0)
			return -1;
		b->fault_at = 0;
		b->fault_len = (long long)b->maplen;
		return 0;
	default:
		b->p = io->rbuf;
		return 0;
	}
}

/* Copy what a read brought into a stable copy (the engine compares it)
 * and undo the buffer. The inaccessible page is made readable first: it
 * holds nothing the kernel put there, but pieces after it may. */
static void buffer_done(struct exer_io *io, struct xbuf *b, int is_read,
			long long len, struct exer_result *r)
{
	if (is_read && b->p != NULL) {
		if (b->fault_at >= 0 && b->fault_len == PAGE)
			mprotect(b->p + b->fault_at, PAGE, PROT_READ);
		if (b->p != io->back)
			memmove(io->back, b->p, (size_t)len);
		r->data = io->back;
	}
	if (b->map != NULL)
		munmap(b->map, b->maplen);
	b->map = NULL;
}

/* Split [0, len) into n pieces, each a multiple of unit (the last takes
 * the rest). */
void exer_pieces(long long len, unsigned int n, long long unit,
		 long long *start, long long *plen)
{
	long long each = len / n / unit * unit;
	unsigned int i;

	if (each == 0)
		each = unit;
	for (i = 0; i < n; i++) {
		start[i] = i * each < len ? i * each : len;
		plen[i] = i + 1 == n ? len - start[i] :
			  (start[i] + each <= len ? each : len - start[i]);
	}
}

/* ---- the read/write syscall families ---- */

/*
 * A write's iovecs of one page each, page k of the file from page perm(k)
 * of the buffer (a stride coprime with the count): no two neighbours
 * are neighbours in memory, so a bio holds one page per segment. The
 * buffer is filled to match. Returns the count.
 */
static unsigned int page_iovecs(const struct exer_op *op, unsigned char *p,
				long long at, struct iovec *iov)
{
	unsigned int n = (unsigned int)(op->len / PAGE), k, stride = 101;

	while (n > 1 && (n % stride == 0 || stride % n == 0))
		stride += 2;
	for (k = 0; k < n; k++) {
		unsigned char *page = p + (size_t)((k * stride) % n) * PAGE;

		fill(page, PAGE, op->tag, at + (long long)k * PAGE);
		iov[k].iov_base = page;
		iov[k].iov_len = PAGE;
	}
	return n;
}

static long long sys_rw(struct exer_io *io, const struct exer_op *op,
			unsigned char *p, int is_read, long long at)
{
	int fd = io->fd[op->fd];
	long long off = io->base + op->off;
	static struct iovec iov[EXER_MAX_IO / PAGE];
	long long st[EXER_MAX_IOV], ln[EXER_MAX_IOV];
	unsigned int n = op->niov ? op->niov : 1, i;
	ssize_t r;

	exer_pieces(op->len, n, io->align, st, ln);
	for (i = 0; i < n; i++) {
		iov[i].iov_base = p + st[i];
		iov[i].iov_len = (size_t)ln[i];
	}
	if ((op->variant & EXER_PAGE_IOVECS) && !is_read && op->len % PAGE == 0)
		n = page_iovecs(op, p, at, iov);
	switch (op->kind) {
	case XO_WRITE:
	case XO_READ:
		lseek(fd, off, SEEK_SET);
		r = is_read ? read(fd, p, op->len) : write(fd, p, op->len);
		break;
	case XO_PWRITE:
	case XO_PREAD:
		r = is_read ? pread(fd, p, op->len, off) : pwrite(fd, p, op->len, off);
		break;
	case XO_WRITEV:
	case XO_READV:
		lseek(fd, off, SEEK_SET);
		r = is_read ? readv(fd, iov, n) : writev(fd, iov, n);
		break;
	case XO_PWRITEV:
	case XO_PREADV:
		r = is_read ? preadv(fd, iov, n, off) : pwritev(fd, iov, n, off);
		break;
	default:
		if (op->use_pos)
			lseek(fd, off, SEEK_SET);
		r = is_read ? preadv2(fd, iov, n, op->use_pos ? -1 : off, op->rwf) :
			      pwritev2(fd, iov, n, op->use_pos ? -1 : off, op->rwf);
		break;
	}
	return r < 0 ? -errno : r;
}

/* ---- native AIO: the pieces in one io_submit, last piece first ---- */

static void aio_rw(struct exer_io *io, const struct exer_op *op,
		   unsigned char *p, int is_read, struct exer_result *r)
{
	struct iocb cbs[EXER_MAX_AIO], *list[EXER_MAX_AIO];
	struct io_event ev[EXER_MAX_AIO];
	long long st[EXER_MAX_AIO], ln[EXER_MAX_AIO];
	unsigned int n = op->niov ? op->niov : 1, i, got = 0;
	long s;

	if (!io->aio_ok) {
		r->skipped = "no native AIO (io_setup failed)";
		return;
	}
	exer_pieces(op->len, n, io->align, st, ln);
	for (i = 0; i < n; i++) {
		struct iocb *cb = &cbs[n - 1 - i];

		memset(cb, 0, sizeof(*cb));
		cb->aio_fildes = (uint32_t)io->fd[op->fd];
		cb->aio_lio_opcode = is_read ? IOCB_CMD_PREAD : IOCB_CMD_PWRITE;
		cb->aio_buf = (uint64_t)(uintptr_t)(p + st[i]);
		cb->aio_nbytes = (uint64_t)ln[i];
		cb->aio_offset = io->base + op->off + st[i];
		cb->aio_rw_flags = (int)op->rwf;
		cb->aio_data = i;
		list[n - 1 - i] = cb;
		r->parts[i] = -ETIMEDOUT;
	}
	r->nparts = n;
	s = syscall(__NR_io_submit, io->ctx, (long)n, list);
	if (s < 0) {
		r->res = -errno;
		r->nparts = 0;
		return;
	}
	while (got < (unsigned int)s) {
		long k = aio_getevents(io->ctx, 1, (long)(s - got), ev);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			r->res = -errno;
			return;
		}
		for (i = 0; i < (unsigned int)k; i++)
			if (ev[i].data < n)
				r->parts[ev[i].data] = ev[i].res;
		got += (unsigned int)k;
	}
	/* Pieces io_submit did not take (it took the first s of list, the
	 * last pieces) stay -ETIMEDOUT: the engine reports them. */
	r->res = (long long)s;
}

/* ---- io_uring ---- */

static struct io_uring_sqe *sqe_next(struct ring *rg, uint32_t *tail)
{
	uint32_t idx = *tail & *ring_u32(rg->sq, rg->p.sq_off.ring_mask);
	struct io_uring_sqe *sqe = &rg->sqes[idx];

	memset(sqe, 0, sizeof(*sqe));
	ring_u32(rg->sq, rg->p.sq_off.array)[idx] = idx;
	(*tail)++;
	return sqe;
}

static int uring_submit_wait(struct exer_io *io, uint32_t tail, unsigned int n,
			     struct exer_result *r, unsigned int nparts)
{
	struct io_uring_cqe c;
	unsigned int i;
	long s;

	__atomic_store_n(ring_u32(io->ring.sq, io->ring.p.sq_off.tail), tail,
			 __ATOMIC_RELEASE);
	s = syscall(__NR_io_uring_enter, io->ring.fd, n, 0, 0, NULL, 0);
	if (s < 0) {
		r->res = -errno;
		return -1;
	}
	for (i = 0; i < (unsigned int)s; i++) {
		if (ring_wait_cqe(&io->ring, &c) != 0) {
			r->res = -errno;
			return -1;
		}
		if (c.user_data < nparts)
			r->parts[c.user_data] = c.res;
	}
	r->res = s;
	return 0;
}

/* Variants: 0 IORING_OP_READ/WRITE, 1 READV/WRITEV (niov segments, one
 * sqe), 2 READ/WRITE_FIXED from the registered buffer, 3 a registered
 * file. Pieces (niov of them) are sqes of one io_uring_enter. */
static void uring_rw(struct exer_io *io, const struct exer_op *op,
		     unsigned char *p, int is_read, struct exer_result *r)
{
	unsigned char *out = p;
	static const uint8_t ops[2][4] = {
		{ IORING_OP_WRITE, IORING_OP_WRITEV, IORING_OP_WRITE_FIXED,
		  IORING_OP_WRITE },
		{ IORING_OP_READ, IORING_OP_READV, IORING_OP_READ_FIXED,
		  IORING_OP_READ },
	};
	struct iovec iov[EXER_MAX_IOV];
	long long st[EXER_MAX_IOV], ln[EXER_MAX_IOV];
	unsigned int n = op->niov ? op->niov : 1, i, v = op->variant % 4;
	uint32_t tail = *ring_u32(io->ring.sq, io->ring.p.sq_off.tail);

	if (!io->ring_ok || (v == 2 && !io->ring_bufs) ||
	    (v == 3 && !io->ring_files)) {
		r->skipped = "no io_uring (or its registration) here";
		return;
	}
	if (v == 2) {
		if (!is_read)
			memcpy(io->fixed, p, (size_t)op->len);
		p = io->fixed;
	}
	exer_pieces(op->len, n, io->align, st, ln);
	if (v == 1) {
		for (i = 0; i < n; i++) {
			iov[i].iov_base = p + st[i];
			iov[i].iov_len = (size_t)ln[i];
		}
		st[0] = 0;
		ln[0] = op->len;
		n = 1;
	}
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = sqe_next(&io->ring, &tail);

		sqe->opcode = ops[is_read][v];
		sqe->fd = v == 3 ? (int)op->fd : io->fd[op->fd];
		sqe->flags = v == 3 ? IOSQE_FIXED_FILE : 0;
		sqe->addr = (uint64_t)(uintptr_t)(v == 1 ? (void *)iov : p + st[i]);
		sqe->len = v == 1 ? (uint32_t)op->niov : (uint32_t)ln[i];
		sqe->off = (uint64_t)(io->base + op->off + st[i]);
		sqe->rw_flags = (__kernel_rwf_t)op->rwf;
		sqe->buf_index = 0;
		sqe->user_data = i;
		r->parts[i] = -ETIMEDOUT;
	}
	r->nparts = n;
	uring_submit_wait(io, tail, n, r, n);
	if (v == 2 && is_read)
		memcpy(out, io->fixed, (size_t)op->len);
}

/* A write linked (IOSQE_IO_LINK) to a read of the same range: the read
 * must see what the write put down. parts[0] the write, parts[1] the read. */
static void uring_linked(struct exer_io *io, const struct exer_op *op,
			 struct exer_result *r)
{
	uint32_t tail;
	struct io_uring_sqe *w, *rd;

	if (!io->ring_ok) {
		r->skipped = "no io_uring here";
		return;
	}
	fill(io->buf, op->len, op->tag, op->off);
	tail = *ring_u32(io->ring.sq, io->ring.p.sq_off.tail);
	w = sqe_next(&io->ring, &tail);
	w->opcode = IORING_OP_WRITE;
	w->fd = io->fd[op->fd];
	w->flags = IOSQE_IO_LINK;
	w->addr = (uint64_t)(uintptr_t)io->buf;
	w->len = (uint32_t)op->len;
	w->off = (uint64_t)(io->base + op->off);
	w->user_data = 0;
	rd = sqe_next(&io->ring, &tail);
	rd->opcode = IORING_OP_READ;
	rd->fd = io->fd[op->fd];
	rd->addr = (uint64_t)(uintptr_t)io->rbuf;
	rd->len = (uint32_t)op->len;
	rd->off = (uint64_t)(io->base + op->off);
	rd->user_data = 1;
	r->parts[0] = r->parts[1] = -ETIMEDOUT;
	r->nparts = 2;
	uring_submit_wait(io, tail, 2, r, 2);
	memcpy(io->back, io->rbuf, (size_t)op->len);
	r->data = io->back;
}

/* ---- mappings, pipes, copies ---- */

static void mmap_rw(struct exer_io *io, const struct exer_op *op, int is_read,
		    struct exer_result *r)
{
	long long start = page_down(io->base + op->off);
	size_t maplen = (size_t)(page_up(io->base + op->off + op->len) - start);
	unsigned char *m = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED,
				io->fd[XF_BUFFERED], start);
	unsigned char *p;

	if (m == MAP_FAILED) {
		r->res = -errno;
		return;
	}
	p = m + (io->base + op->off - start);
	if (is_read) {
		memcpy(io->back, p, (size_t)op->len);
		r->data = io->back;
	} else {
		long long i;

		for (i = 0; i < op->len; i++)
			p[i] = exer_byte(op->tag, op->off + i);
		if (op->variant & 1)
			msync(m, maplen, MS_SYNC);
	}
	munmap(m, maplen);
	r->res = op->len;
}

static void splice_rw(struct exer_io *io, const struct exer_op *op,
		      int is_read, struct exer_result *r)
{
	int p[2];
	loff_t off = io->base + op->off;
	ssize_t s;

	if (pipe2(p, O_CLOEXEC) != 0) {
		r->res = -errno;
		return;
	}
	if (is_read) {
		s = splice(io->fd[op->fd], &off, p[1], NULL, (size_t)op->len, 0);
		r->res = s < 0 ? -errno : s;
		if (s > 0 && read(p[0], io->back, (size_t)s) != s)
			r->res = -EIO;
		r->data = io->back;
	} else {
		fill(io->buf, op->len, op->tag, op->off);
		if (write(p[1], io->buf, (size_t)op->len) != op->len) {
			r->skipped = "the pipe did not take the data";
		} else {
			s = splice(p[0], NULL, io->fd[op->fd], &off, (size_t)op->len, 0);
			r->res = s < 0 ? -errno : s;
		}
	}
	close(p[0]);
	close(p[1]);
}

static void copy_ops(struct exer_io *io, const struct exer_op *op,
		     struct exer_result *r)
{
	int fd = io->fd[op->fd];
	loff_t src = op->src, dst = op->off;
	long long s;

	switch (op->kind) {
	case XO_SENDFILE: {
		off_t so = (off_t)op->src;

		lseek(fd, op->off, SEEK_SET);
		s = sendfile(fd, io->aux, &so, (size_t)op->len);
		break;
	}
	case XO_COPY_RANGE:
		s = copy_file_range(io->aux, &src, fd, &dst, (size_t)op->len, 0);
		break;
	default: {
		struct file_clone_range fcr = {
			.src_fd = io->aux, .src_offset = (uint64_t)op->src,
			.src_length = (uint64_t)op->len,
			.dest_offset = (uint64_t)op->off,
		};

		s = ioctl(fd, FICLONERANGE, &fcr);
		if (s == 0)
			s = op->len;
		break;
	}
	}
	r->res = s < 0 ? -errno : s;
}

/* ---- ranges, sizes, syncs ---- */

static const int falloc_modes[] = {
	0,
	FALLOC_FL_KEEP_SIZE,
	FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	FALLOC_FL_ZERO_RANGE,
	FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
	FALLOC_FL_COLLAPSE_RANGE,
	FALLOC_FL_INSERT_RANGE,
};

int exer_falloc_mode(unsigned int variant)
{
	return falloc_modes[variant % (sizeof(falloc_modes) /
				       sizeof(falloc_modes[0]))];
}

static void range_ops(struct exer_io *io, const struct exer_op *op,
		      struct exer_result *r)
{
	int fd = io->fd[op->fd];
	long long s;

	switch (op->kind) {
	case XO_FALLOCATE:
		s = fallocate(fd, exer_falloc_mode(op->variant),
			      io->base + op->off, op->len);
		break;
	case XO_TRUNCATE:
		s = ftruncate(fd, op->off);
		break;
	case XO_SYNC:
		switch (op->variant % 4) {
		case 0:
			s = fsync(fd);
			break;
		case 1:
			s = fdatasync(fd);
			break;
		case 2:
			s = sync_file_range(fd, io->base + op->off, op->len,
					    SYNC_FILE_RANGE_WAIT_BEFORE |
					    SYNC_FILE_RANGE_WRITE |
					    SYNC_FILE_RANGE_WAIT_AFTER);
			break;
		default:
			s = syncfs(fd);
			break;
		}
		break;
	case XO_DROP:
		s = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		r->res = -s;
		return;
	case XO_SEEK:
		s = lseek(fd, op->off, op->variant & 1 ? SEEK_HOLE : SEEK_DATA);
		break;
	default: {
		uint64_t range[2] = { (uint64_t)(io->base + op->off),
				      (uint64_t)op->len };

		s = ioctl(fd, BLKZEROOUT, range);
		break;
	}
	}
	r->res = s < 0 ? -errno : s;
}

static int kind_is_read(unsigned int kind)
{
	return (kind >= XO_READ && kind <= XO_PREADV2) || kind == XO_AIO_READ ||
	       kind == XO_URING_READ;
}

void exer_io_run(struct exer_io *io, const struct exer_op *op,
		 long long model_size, struct exer_result *r)
{
	struct xbuf b;
	int is_read = kind_is_read(op->kind);
	long long at = op->fd == XF_APPEND || (op->rwf & RWF_APPEND) ?
			       model_size : op->off;

	memset(r, 0, sizeof(*r));
	r->fault_at = -1;
	if (op->kind <= XO_URING_READ) {
		if ((is_read ? read_buffer(io, op, &b) :
			       write_buffer(io, op, at, &b)) != 0) {
			r->skipped = "the buffer could not be mapped";
			return;
		}
		r->fault_at = b.fault_at;
		r->fault_len = b.fault_len;
		if (op->kind <= XO_PREADV2)
			r->res = sys_rw(io, op, b.p, is_read, at);
		else if (op->kind <= XO_AIO_READ)
			aio_rw(io, op, b.p, is_read, r);
		else
			uring_rw(io, op, b.p, is_read, r);
		buffer_done(io, &b, is_read, op->len, r);
	} else if (op->kind == XO_URING_LINKED) {
		uring_linked(io, op, r);
	} else if (op->kind <= XO_MMAP_READ) {
		mmap_rw(io, op, op->kind == XO_MMAP_READ, r);
	} else if (op->kind <= XO_SPLICE_WRITE) {
		splice_rw(io, op, op->kind == XO_SPLICE_READ, r);
	} else if (op->kind <= XO_CLONE) {
		copy_ops(io, op, r);
	} else {
		range_ops(io, op, r);
	}
	r->pos_after = lseek(io->fd[op->fd], 0, SEEK_CUR) - io->base;
}

/* ---- reading back ---- */

static long long read_full(int fd, unsigned char *p, long long len,
			   long long off)
{
	long long done = 0;

	while (done < len) {
		ssize_t n = pread(fd, p + done, (size_t)(len - done), off + done);

		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

long long exer_io_readback(struct exer_io *io, int way, long long off,
			   long long len, unsigned char *out)
{
	long long a0, a1, n, start;
	unsigned char *m;
	size_t maplen;

	off += io->base;
	switch (way) {
	case 0:
		return read_full(io->fd[XF_BUFFERED], out, len, off);
	case 1:
		a0 = off / io->align * io->align;
		a1 = (off + len + io->align - 1) / io->align * io->align;
		n = read_full(io->fd[XF_DIRECT], io->back, a1 - a0, a0);
		if (n < 0)
			return n;
		n -= off - a0;
		if (n <= 0)
			return 0;
		if (n > len)
			n = len;
		memcpy(out, io->back + (off - a0), (size_t)n);
		return n;
	default:
		start = page_down(off);
		maplen = (size_t)(page_up(off + len) - start);
		m = mmap(NULL, maplen, PROT_READ, MAP_SHARED, io->fd[XF_BUFFERED],
			 start);
		if (m == MAP_FAILED)
			return -errno;
		memcpy(out, m + (off - start), (size_t)len);
		munmap(m, maplen);
		return len;
	}
}

/* The bytes of the last page past EOF, through a mapping: must be zero.
 * Returns the offset of the first that is not, or -1. */
long long exer_io_tail_garbage(struct exer_io *io, long long size)
{
	long long start = page_down(size), i;
	unsigned char *m;

	if (io->bdev || size % PAGE == 0)
		return -1;
	m = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, io->fd[XF_BUFFERED], start);
	if (m == MAP_FAILED)
		return -1;
	for (i = size - start; i < PAGE; i++)
		if (m[i] != 0)
			break;
	munmap(m, PAGE);
	return i < PAGE ? start + i : -1;
}
