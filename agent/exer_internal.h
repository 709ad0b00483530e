/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the exerciser's files share beyond exer.h: the PRNG, the model and
 * the generator (exer_gen.c).
 */
#ifndef RCGATE_AGENT_EXER_INTERNAL_H
#define RCGATE_AGENT_EXER_INTERNAL_H

#include "exer.h"

#define EXER_UNITS (EXER_MAX_SIZE / EXER_UNIT)
/* Allocation is tracked per 512-byte sector (the smallest block). */
#define EXER_SECTOR 512L
#define EXER_SECTORS (EXER_MAX_SIZE / EXER_SECTOR)

struct exer_rng {
	uint64_t s;
};

void exer_rng_seed(struct exer_rng *r, unsigned int seed);

/* What the file (or device window) must hold. Bytes at and past size are
 * always zero in data; unit[] is the layout per EXER_UNIT (enum
 * exer_layout, never XL_MIXED or XL_PAST_EOF). data is NULL in the
 * generator's shadow. */
struct exer_model {
	unsigned char *data;
	long long size;
	long long pos[XF_NFDS];
	uint8_t unit[EXER_UNITS];
	/* 1: the file surely has a block under this sector (written or
	 * preallocated, not shared): never more than it has, so a full
	 * filesystem's contract (exer.c may_enospc) errs to the lenient
	 * side. */
	uint8_t alloc[EXER_SECTORS];
};

int exer_model_init(struct exer_model *m, long long size, int with_data);
void exer_model_free(struct exer_model *m);
/* n bytes of src land at at (src NULL: the shadow); grows: the size
 * follows (not on a device). */
void exer_model_write(struct exer_model *m, long long at, long long n,
		      const unsigned char *src, int grows);
void exer_model_zero(struct exer_model *m, long long off, long long len);
void exer_model_resize(struct exer_model *m, long long size);
void exer_model_falloc(struct exer_model *m, unsigned int variant,
		       long long off, long long len);
/* The layout [off, off+len) has in m (enum exer_layout). */
/* 1 when every sector [off, off+len) meets is allocated. */
int exer_model_allocated(const struct exer_model *m, long long off,
			 long long len);
/* Sectors [off, off+len) lose (0) or surely have (1) their blocks:
 * whole: only sectors inside the range, else every one it touches. */
void exer_model_alloc(struct exer_model *m, long long off, long long len,
		      int allocated, int whole);
unsigned int exer_layout_of(const struct exer_model *m, long long off,
			    long long len);
/* Whether a fallocate op is well-formed against m (collapse and insert
 * have preconditions; an op whose preconditions fail is not issued). */
int exer_falloc_valid(const struct exer_model *m, const struct exer_op *op,
		      unsigned int fs_block);

/* What a seed's operations are drawn for. */
struct exer_gen {
	unsigned int profile;
	unsigned int align;    /* direct I/O offset alignment */
	unsigned int fs_block; /* collapse, insert, clone granularity */
	int bdev;
};

void exer_gen_op(struct exer_rng *r, const struct exer_gen *g,
		 const struct exer_model *m, struct exer_op *op);
void exer_gen_assume(struct exer_model *m, const struct exer_op *op,
		     const struct exer_gen *g);

/* The operation x buffer x layout cells a run can reach. */
#define EXER_CELLS (XO_NKINDS * XB_NKINDS * XL_NLAYOUTS)

/* What one run of a sequence came to (exer.c). */
struct exer_outcome {
	int failed;
	unsigned int fail_step; /* the op whose check failed */
	char why[DIAG_LEN];
	unsigned int skipped;   /* ops not issued (unsupported, invalid) */
	unsigned char cells[EXER_CELLS / 8 + 1];
};

/* Draw seed's first nops operations for env. */
void exer_draw(unsigned int seed, const struct suite_env *env,
	       struct exer_op *ops, unsigned int nops);
/* Run ops (those keep says, all when keep is NULL) on a fresh file.
 * Returns 1 when a check failed (out says which), 0 when all held, -1
 * when the file could not be set up (d says why). */
int exer_run_ops(const struct suite_env *env, unsigned int seed,
		 const struct exer_op *ops, unsigned int nops,
		 const unsigned char *keep, FILE *trace,
		 struct exer_outcome *out, struct diag *d);

int exer_kind_is_read(unsigned int kind);
int exer_kind_is_write(unsigned int kind);
const char *exer_kind_name(unsigned int kind);
const char *exer_buf_name(unsigned int buf);

#endif
