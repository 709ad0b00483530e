/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * catalogue.h - the suite's tests, one row each: what it checks, what its
 * failure means and which upstream fixes it models, written once for the
 * agent, the daemon (GET /api/v1/tests, reports linking a failing test's
 * entry) and docs/agent.md, and how the agent runs it.
 *
 * Like protocol.h it includes nothing and defines no storage: it is one
 * X-macro, RCGATE_TEST_TABLE(X, T), and the rule that maps a result's
 * name to its row's (rcgate_catalogue_family_len); the rows are
 *
 *   T(X, name, filesystems, checks, failure, fixes, kind, args...)
 *
 * name         the test's name, or the family name of tests called
 *              <name>_<block size> (write_seq covers write_seq_512 and
 *              write_seq_4096); a KTAP result "xfs.write_seq_512" belongs
 *              to the row whose name is "write_seq"
 * filesystems  where it runs ("ext4 xfs btrfs"); elsewhere it is a SKIP
 *              with the reason
 * checks       what it checks, one sentence
 * failure      what a failure means for a user of the kernel
 * fixes        upstream commits (12 hex digits and subject) of bugs it
 *              models or was proven on (bench/corpus.sh), "" if none yet
 * kind, args   the agent's row(s) of the test (agent/table.c): its
 *              function and parameters; names only the agent defines, so
 *              only the agent expands them. PER_BS (512 and 4096 bytes)
 *              and PER_BS_64K (and 65536) are a family of tests
 *              <name>_<block size>; AT_BS and DIO_AT_BS one test
 *              <name>_<block size>; ROW and DIO one test <name> of the
 *              file suite; BDEV one of the block device's suite; EXER
 *              and EXER_BDEV an exerciser row (agent/exer.c: profile,
 *              seeds, operations per seed) of either; PROMISE a
 *              power-cut promise (crash.c), in no table.
 *
 * The daemon sees the first five columns through RCGATE_TEST_CATALOGUE(X):
 *
 *   #define ROW(n, f, c, w, x) { n, f, c, w, x },
 *   static const struct entry cat[] = { RCGATE_TEST_CATALOGUE(ROW) };
 *
 * A new test is a row here (and at most a new function in a family file of
 * agent/). The order of the rows is the order of the suite's results
 * (agent/table.c says how the block-size families interleave).
 * tests/unit/agent_suite.c checks that every test of the suite has exactly
 * one row and every row a test (or the crash test).
 */
#ifndef RCGATE_AGENT_CATALOGUE_H
#define RCGATE_AGENT_CATALOGUE_H

#define RCGATE_ALL_FS "ext4 xfs btrfs"

/* A test name without its filesystem: the length of its family's name,
 * "write_seq_4096" -> 9 ("write_seq"); a name without a "_<digits>" tail
 * is its own family (its whole length). A row named exactly as the test
 * wins over its family's row. */
static inline unsigned long rcgate_catalogue_family_len(const char *test)
{
	unsigned long len = 0, cut;

	while (test[len] != '\0')
		len++;
	cut = len;
	while (cut > 0 && test[cut - 1] >= '0' && test[cut - 1] <= '9')
		cut--;
	if (cut == len || cut < 2 || test[cut - 1] != '_')
		return len;
	return cut - 1;
}

/* A row's first five columns, for RCGATE_TEST_CATALOGUE. */
#define RCGATE_CATALOGUE_TEXT(X, name, filesystems, checks, failure, fixes, ...) \
	X(name, filesystems, checks, failure, fixes)
#define RCGATE_TEST_CATALOGUE(X) RCGATE_TEST_TABLE(X, RCGATE_CATALOGUE_TEXT)

#define RCGATE_TEST_TABLE(X, T)                                                 \
	T(X, "write_seq", RCGATE_ALL_FS,                                       \
	  "Extends a new file with one O_DIRECT write() per block; checks the return value, file position and st_size after each and every byte read back.", \
	  "Direct writes land at the wrong offset or leave the position behind: the next write overwrites data (file corruption).", \
	  "936e114a245b iomap: update ki_pos a little later in iomap_dio_complete", \
	  PER_BS_64K, test_extend, 1, 0, OP_WRITE, RD_PREAD, SYNC_NONE, 0) \
	T(X, "writev_seq", RCGATE_ALL_FS,                                      \
	  "As write_seq with two blocks per writev() call.",                   \
	  "Vectored direct writes land at the wrong offset or leave the position behind (file corruption).", \
	  "936e114a245b iomap: update ki_pos a little later in iomap_dio_complete", \
	  PER_BS_64K, test_extend, 2, 0, OP_WRITEV, RD_PREADV, SYNC_NONE, 0) \
	T(X, "pwrite_seq", RCGATE_ALL_FS,                                      \
	  "Extends a file with positional pwrite() calls; the file position must stay 0, read() must advance it.", \
	  "Positional direct writes move the file position or land in the wrong place.", "", \
	  PER_BS, test_extend, 1, 0, OP_PWRITE, RD_READ, SYNC_NONE, 0) \
	T(X, "pwritev_seq", RCGATE_ALL_FS,                                     \
	  "As pwrite_seq with two blocks per pwritev() call.",                 \
	  "Positional vectored direct writes move the file position or land in the wrong place.", "", \
	  PER_BS_64K, test_extend, 2, 0, OP_PWRITEV, RD_READ, SYNC_NONE, 0) \
	T(X, "write_osync", RCGATE_ALL_FS,                                     \
	  "write_seq on an O_SYNC descriptor.",                                \
	  "O_SYNC direct writes misplace data or report a wrong size.",        \
	  "91562895f803 ext4: properly sync file size update after O_SYNC direct IO", \
	  PER_BS, test_extend, 1, O_SYNC, OP_WRITE, RD_PREAD, SYNC_NONE, 0) \
	T(X, "write_odsync", RCGATE_ALL_FS,                                    \
	  "write_seq on an O_DSYNC descriptor.",                               \
	  "O_DSYNC direct writes misplace data or report a wrong size.", "", \
	  PER_BS, test_extend, 1, O_DSYNC, OP_WRITE, RD_PREAD, SYNC_NONE, 0) \
	T(X, "writev_osync", RCGATE_ALL_FS,                                    \
	  "writev_seq on an O_SYNC descriptor.",                               \
	  "O_SYNC vectored direct writes misplace data or report a wrong size.", \
	  "91562895f803 ext4: properly sync file size update after O_SYNC direct IO", \
	  PER_BS, test_extend, 2, O_SYNC, OP_WRITEV, RD_PREADV, SYNC_NONE, 0) \
	T(X, "write_fsync", RCGATE_ALL_FS,                                     \
	  "write_seq with an fsync() after every write.",                      \
	  "fsync after direct writes changes the size or the data.", "", \
	  PER_BS, test_extend, 1, 0, OP_WRITE, RD_PREAD, SYNC_FSYNC, 0) \
	T(X, "write_fdatasync", RCGATE_ALL_FS,                                 \
	  "write_seq with an fdatasync() after every write.",                  \
	  "fdatasync after direct writes changes the size or the data.", "", \
	  PER_BS, test_extend, 1, 0, OP_WRITE, RD_PREAD, SYNC_FDATASYNC, 0) \
	T(X, "write_append", RCGATE_ALL_FS,                                    \
	  "write() on an O_APPEND|O_DIRECT descriptor after seeking to 0: every block must land at EOF.", \
	  "Direct appends land at the position instead of EOF, or leave the position wrong.", "", \
	  PER_BS, test_extend, 1, O_APPEND, OP_WRITE, RD_PREAD, SYNC_NONE, 0) \
	T(X, "write_overwrite", RCGATE_ALL_FS,                                 \
	  "Overwrites every block of an allocated file with write(); st_size must not change.", \
	  "Direct overwrites misplace data or change the file size.", "", \
	  PER_BS, test_overwrite, 1, 0, OP_WRITE, RD_PREAD, SYNC_NONE, 0) \
	T(X, "write_reopen", RCGATE_ALL_FS,                                    \
	  "write_seq, then fsync, close and reopen before the readback.",      \
	  "The size or data seen by a new open differs from what the writes returned.", "", \
	  PER_BS, test_extend, 1, 0, OP_WRITE, RD_PREAD, SYNC_NONE, ST_REOPEN) \
	T(X, "subblock_write", RCGATE_ALL_FS,                                  \
	  "512-byte write() at offsets inside 4 KiB blocks, leaving a hole: the rest of each block must read as zeros.", \
	  "Sub-block direct writes expose stale data or misplace bytes.", "", \
	  AT_BS, 512, test_subblock, 1, 0, OP_WRITE, RD_PREAD, SYNC_NONE, 0) \
	T(X, "subblock_pwrite", RCGATE_ALL_FS,                                 \
	  "As subblock_write with pwrite().",                                  \
	  "Sub-block positional direct writes expose stale data or misplace bytes.", "", \
	  AT_BS, 512, test_subblock, 1, 0, OP_PWRITE, RD_PREAD, SYNC_NONE, 0) \
	T(X, "unaligned_buffer", RCGATE_ALL_FS,                                \
	  "A direct write from a misaligned buffer must fail with EINVAL or write exactly the right bytes.", \
	  "A misaligned direct write corrupts the file or fails with an unexpected error.", "", \
	  ROW, test_unaligned, 4096, 1, 0, OP_PWRITE, RD_PREAD, SYNC_NONE, MIS_BUFFER, 0) \
	T(X, "unaligned_offset", RCGATE_ALL_FS,                                \
	  "A direct write at a misaligned offset must fail with EINVAL or write exactly the right bytes.", \
	  "A misaligned direct write corrupts neighbouring data.", "", \
	  ROW, test_unaligned, 4096, 1, 0, OP_PWRITE, RD_PREAD, SYNC_NONE, MIS_OFFSET, 0) \
	T(X, "unaligned_length", RCGATE_ALL_FS,                                \
	  "A direct write of a misaligned length must fail with EINVAL or write exactly the right bytes.", \
	  "A misaligned direct write corrupts the file or its size.", "", \
	  ROW, test_unaligned, 4096, 1, 0, OP_PWRITE, RD_PREAD, SYNC_NONE, MIS_LENGTH, 0) \
	T(X, "pwritev2_offsets", RCGATE_ALL_FS,                                \
	  "pwritev2() of uneven iovecs at three offsets of a sparse file and at offset -1, read back by preadv2() with another segmentation.", \
	  "Vectored direct I/O at offsets misplaces segments, moves the position or returns a wrong count.", "", \
	  DIO, test_rwf_offsets, 4096, 0, 0) \
	T(X, "pwritev2_dsync", RCGATE_ALL_FS,                                  \
	  "pwritev2_offsets with RWF_DSYNC.",                                  \
	  "RWF_DSYNC direct writes misplace data or return a wrong count.", "", \
	  DIO, test_rwf_offsets, 4096, 0, RWF_DSYNC) \
	T(X, "pwritev2_sync", RCGATE_ALL_FS,                                   \
	  "pwritev2_offsets with RWF_SYNC.",                                   \
	  "RWF_SYNC direct writes misplace data or return a wrong count.", "", \
	  DIO, test_rwf_offsets, 4096, 0, RWF_SYNC) \
	T(X, "pwritev2_hipri", RCGATE_ALL_FS,                                  \
	  "pwritev2_offsets with RWF_HIPRI on writes and reads (polled I/O where the queue polls, else ignored).", \
	  "RWF_HIPRI direct I/O hangs, misplaces data or returns a wrong count.", "", \
	  DIO, test_rwf_offsets, 4096, 0, RWF_HIPRI) \
	T(X, "nowait", RCGATE_ALL_FS,                                          \
	  "RWF_NOWAIT direct writes over data, into a hole, past and across EOF, and over [written][hole] in the clock tick of a blocking write (so the time update does not EAGAIN first; up to 200 tries): each completes or fails with EAGAIN, and EAGAIN leaves bytes and st_size untouched; RWF_NOWAIT reads likewise.", \
	  "Non-blocking direct I/O (io_uring, AIO users) writes data while reporting EAGAIN, so a retry duplicates or corrupts it.", \
	  "883a790a8440 xfs: don't allow NOWAIT DIO across extent boundaries; ca93e44bfb5f btrfs: fallback to blocking mode when doing async dio over multiple extents", \
	  DIO, test_nowait, 4096, 0, RWF_NOWAIT) \
	T(X, "append_flags", RCGATE_ALL_FS,                                    \
	  "pwritev2(RWF_APPEND) at offset 0 and -1 and pwrite() on an O_APPEND descriptor must all land at EOF (and -1 must move the position there).", \
	  "Per-call append overwrites data at the given offset instead of appending, or leaves the position behind.", \
	  "936e114a245b iomap: update ki_pos a little later in iomap_dio_complete", \
	  DIO, test_append_flags, 4096, 0, RWF_APPEND) \
	T(X, "aio_rw", RCGATE_ALL_FS,                                          \
	  "Linux native AIO: four extending direct writes submitted out of order in one io_submit, then four reads; every event's res is the full length and the bytes are right.", \
	  "Asynchronous direct I/O (databases, QEMU) completes with a wrong result or misplaces data.", "", \
	  DIO, test_aio, 4096, 0, 0) \
	T(X, "uring_rw", RCGATE_ALL_FS,                                        \
	  "io_uring: four extending writev sqes out of order in one io_uring_enter, then four readv; every cqe's res is the full length and the bytes are right.", \
	  "io_uring direct I/O completes with a wrong result or misplaces data, or a read across extents comes back short.", \
	  "ca93e44bfb5f btrfs: fallback to blocking mode when doing async dio over multiple extents", \
	  DIO, test_uring, 4096, 0, 0) \
	T(X, "efault_buffer", RCGATE_ALL_FS,                                   \
	  "Direct write and read with a buffer whose third page is unmapped: EFAULT or a short count of at most the mapped part, with the file exactly as the count says; a read into a read-only buffer fails with EFAULT, a write from one works.", \
	  "A faulting user buffer makes direct I/O report data it did not write, extend the file with garbage, or report end of file in the middle of one.", \
	  "42c498c18a94 iomap: Fix iomap_dio_rw return value for user copies; ff66fe666233 btrfs: fix incorrect buffered IO fallback for append direct writes", \
	  DIO, test_efault, 4096, 0, 0) \
	T(X, "fresh_mmap_read", RCGATE_ALL_FS,                                 \
	  "A 256 KiB direct read into a freshly mmap'd, never-touched buffer: the kernel must fault every page in.", \
	  "Direct reads into untouched memory return short or wrong data.",   \
	  "51bd9563b678 btrfs: fix deadlock due to page faults during direct IO reads and writes", \
	  DIO, test_mmap_buffer, 4096, MB_FRESH_READ, 0) \
	T(X, "mmap_src_write", RCGATE_ALL_FS,                                  \
	  "A 256 KiB direct write from another file's mmap with only the first page touched (fstests generic/708): all of it lands, byte for byte.", \
	  "A direct write whose buffer faults half-way leaves a gap of zeros or a short file.", \
	  "b73a6fd1b1ef btrfs: split partial dio bios before submit", \
	  DIO, test_mmap_buffer, 4096, MB_FILE_SRC, 0) \
	T(X, "mmap_src_append", RCGATE_ALL_FS,                                 \
	  "As mmap_src_write on an O_APPEND descriptor onto existing data (fstests generic/362): size, position and bytes exact.", \
	  "A direct append whose buffer faults half-way gives a wrong file size or misplaced data.", \
	  "939b656bc8ab btrfs: fix corruption after buffer fault in during direct IO append write; 936e114a245b iomap: update ki_pos a little later in iomap_dio_complete", \
	  DIO, test_mmap_buffer, 4096, MB_FILE_APPEND, 0) \
	T(X, "mmap_same_file", RCGATE_ALL_FS,                                  \
	  "A direct write from an mmap of the first half of the same file into its second half.", \
	  "Direct I/O with a buffer mapped from the file itself deadlocks or copies the wrong bytes.", \
	  "51bd9563b678 btrfs: fix deadlock due to page faults during direct IO reads and writes", \
	  DIO, test_mmap_buffer, 4096, MB_SAME_FILE, 0) \
	T(X, "many_iovecs", RCGATE_ALL_FS,                                     \
	  "One pwritev() of 256 segments of 512 bytes scattered over memory in shuffled order, read back by a preadv() in another order.", \
	  "Bios built from many small segments reorder or drop segments.", "", \
	  DIO_AT_BS, 512, test_many_iovecs, 0, 0) \
	T(X, "large_io", RCGATE_ALL_FS,                                        \
	  "One 4 MiB direct write and read at 1 MiB + 4 KiB, several bios each.", \
	  "Direct I/O split into several bios loses or reorders a part.", "", \
	  DIO, test_large_io, 4096, 0, 0) \
	T(X, "mixed_extents", RCGATE_ALL_FS,                                   \
	  "A file of [written][hole][unwritten][written] read whole by one direct read, then one direct write across all four, then a write past EOF into KEEP_SIZE preallocation; checks bytes through direct, buffered and mmap reads and st_blocks.", \
	  "Direct I/O across extent types returns stale data instead of zeros, or misplaces data at an extent boundary.", "", \
	  DIO, test_mixed_extents, 4096, 0, 0) \
	T(X, "eof_cross", RCGATE_ALL_FS,                                       \
	  "Around an EOF inside a block: a read across it is short, one beyond it returns 0, a write across it extends the file, a write past it leaves zeros.", \
	  "Direct I/O near EOF returns bytes past it, a wrong count or stale data in the gap.", "", \
	  DIO, test_eof, 4096, 0, 0) \
	T(X, "truncate_updown", RCGATE_ALL_FS,                                 \
	  "Truncate to 10000 bytes and back up to 96 KiB: the cut block's tail and all after it read as zeros through every path; direct writes afterwards land right.", \
	  "Stale data reappears after truncate (a data exposure) or direct writes after truncate are misplaced.", "", \
	  DIO, test_truncate, 4096, 0, 0) \
	T(X, "punch_zero_collapse", RCGATE_ALL_FS,                             \
	  "Punch a hole and zero a range in written data, write into the hole, collapse a range (ext4, xfs): zeros and shifted bytes exactly where expected.", \
	  "fallocate mode changes and direct I/O disagree: stale data, lost writes or wrong size.", "", \
	  DIO, test_punch, 4096, 0, 0) \
	T(X, "reflink", "xfs btrfs",                                              \
	  "FICLONE a file and FICLONERANGE part of it, then direct writes into clone and source: each changes only itself.", \
	  "A direct write into shared extents changes the other file (broken copy on write).", "", \
	  DIO, test_reflink, 4096, 0, 0) \
	T(X, "reflink_nocow", "btrfs",                                        \
	  "A no-CoW (chattr +C) file of two 32 KiB extents, the second cloned into another file; one direct write over both: the clone keeps its bytes.", \
	  "A direct write into a no-CoW file overwrites blocks another file shares (a reflink or snapshot silently changes).", \
	  "7833b865953c btrfs: fix iomap_begin length for nocow writes", \
	  DIO, test_reflink_nocow, 4096, 0, 0) \
	T(X, "btrfs_compressed", "btrfs",                                      \
	  "chattr +c, buffered writes and fsync make compressed extents; a direct read, a direct overwrite inside them and an extending direct write must give the right bytes.", \
	  "Direct I/O on compressed extents returns compressed or stale bytes or loses a write.", "", \
	  DIO, test_btrfs_extents, 4096, 0, 0) \
	T(X, "btrfs_inline", "btrfs",                                          \
	  "A 100-byte file (an inline extent) read with O_DIRECT, extended and overwritten by direct writes.", \
	  "Direct I/O on inline extents returns a wrong count or corrupts the small file.", "", \
	  DIO, test_btrfs_extents, 4096, ST_INLINE, 0) \
	T(X, "coherence", RCGATE_ALL_FS,                                       \
	  "A direct write over cached and mapped pages is seen by buffered reads and the old mapping; a direct read sees bytes dirtied by a buffered write and through a mapping.", \
	  "The page cache and the disk disagree after direct I/O: readers see old data or direct reads miss recent writes.", "", \
	  DIO, test_coherence, 4096, 0, 0) \
	T(X, "race_append_read", RCGATE_ALL_FS,                                \
	  "A process appends 256 blocks with O_DIRECT|O_APPEND while another reads the file's end as it grows; no byte below the st_size it saw may be missing (reports the iteration).", \
	  "st_size runs ahead of the data: a concurrent reader sees zeros or stale bytes (a race; the iteration count tells flaky from reproduced).", "", \
	  DIO, test_race_append, 4096, 0, 0) \
	T(X, "race_truncate", RCGATE_ALL_FS,                                  \
	  "Direct writes and reads of one pattern over 64 KiB while another process truncates the file down and up, up to 20 times per round (100 rounds): every byte read is the pattern or zero, no direct write is short (reports the iteration; a pass, how many rounds the two met).", \
	  "Direct I/O racing truncate exposes stale blocks or loses a write (a race; the iteration count tells flaky from reproduced).", "", \
	  DIO, test_race, 4096, RACE_TRUNCATE, 0) \
	T(X, "race_punch", RCGATE_ALL_FS,                                     \
	  "As race_truncate, the other process punching 16 KiB holes (FALLOC_FL_PUNCH_HOLE).", \
	  "Direct I/O racing hole punching exposes stale or freed blocks (a race; the iteration count tells flaky from reproduced).", "", \
	  DIO, test_race, 4096, RACE_PUNCH, 0) \
	T(X, "race_zero", RCGATE_ALL_FS,                                      \
	  "As race_truncate, the other process zeroing 16 KiB ranges (FALLOC_FL_ZERO_RANGE).", \
	  "Direct I/O racing zero range exposes stale blocks or unwritten extents read as data (a race; the iteration count tells flaky from reproduced).", "", \
	  DIO, test_race, 4096, RACE_ZERO, 0) \
	T(X, "race_collapse", "ext4 xfs",                                        \
	  "As race_truncate, the other process collapsing the file's first 52 KiB (FALLOC_FL_COLLAPSE_RANGE; the pattern repeats every 13 KiB, so moved data stays valid).", \
	  "Direct I/O racing collapse range exposes stale blocks or moves data wrongly (a race; the iteration count tells flaky from reproduced).", "", \
	  DIO, test_race, 4096, RACE_COLLAPSE, 0) \
	T(X, "race_buffered", RCGATE_ALL_FS,                                  \
	  "As race_truncate, the other process rewriting 16 KiB parts with buffered writes of the same pattern.", \
	  "Direct and buffered writes to one range leave stale page cache or mixed old blocks (a race; the iteration count tells flaky from reproduced).", "", \
	  DIO, test_race, 4096, RACE_BUFFERED, 0) \
	T(X, "race_aio_read", RCGATE_ALL_FS,                                  \
	  "24 native AIO direct writes of 1 MiB, each a new pattern, alternately into a punched hole and over written blocks; a buffered read caches their last 64 KiB while each is in flight (under SCHED_FIFO, so that the completion's work cannot preempt the read), and once io_getevents() reports it a buffered read and a new mmap must see only the new bytes (reports the round and how many rounds the read met the write).", \
	  "An asynchronous direct write leaves what the page cache read meanwhile (zeros of the unwritten extent, old data) in place: buffered readers and mmap see old data after the write completed, until the pages are evicted.", \
	  "332391a9935d fs: Fix page cache inconsistency when mixing buffered and AIO DIO", \
	  DIO, test_race_aio_read, 4096, 0, 0) \
	T(X, "full_prealloc", RCGATE_ALL_FS,                                  \
	  "Preallocates four extents, fills the filesystem with fallocate until ENOSPC, then direct writes into the preallocated blocks (one into the middle of an extent, which splits it) must succeed whole and read back (direct, buffered, mmap).", \
	  "A write that needs no new space fails with ENOSPC on a full filesystem: applications that preallocate (databases, VM images) get write errors.", \
	  "f0bfa76a11e9 btrfs: fix ENOSPC failure when attempting direct IO write into NOCOW range; " \
	  "84e1e99f112d [XFS] Prevent ENOSPC from aborting transactions that need to succeed; " \
	  "27dd43854227 ext4: introduce reserved space", \
	  DIO, test_full_prealloc, 4096, 0, 0) \
	T(X, "eof_pollute", RCGATE_ALL_FS,                                    \
	  "Garbage written through mmap past an unaligned EOF, inside its page, then the file grown over it (a buffered write 64 bytes past EOF in the same block, a direct write at the next page, a one-sector direct write in EOF's block, truncate up, fallocate beyond EOF, each on a fresh file): the gap reads as zeros through buffered read and mmap, and after fsync through O_DIRECT (fstests generic/363; ext4 before 6.13: SKIP, it lacks c7fc0366c656).", \
	  "Bytes a program wrote through a mapping past EOF, which are never file data, become part of the file when it grows: stale or foreign data appears in files.", \
	  "da2dccd7451d btrfs: fix hole expansion when writing at an offset beyond EOF", \
	  DIO, test_eof_pollute, 4096, 0, 0) \
	T(X, "aio_fallocate", RCGATE_ALL_FS,                                  \
	  "An extending 1 MiB direct write in flight (native AIO, or io_uring) while the same thread fallocates the block below it without KEEP_SIZE (plain, then ZERO_RANGE), 8 rounds on a fresh file: the write's result, st_size (one block + 1 MiB) and every byte through direct, buffered and mmap reads (fstests generic/586; says how many rounds the write had already completed).", \
	  "fallocate under an asynchronous extending write sets the file size it saw before the write completed: the end of data the application was told was written is cut off (corrupted VM images and databases).", \
	  "249bd9087a52 xfs: properly serialise fallocate against AIO+DIO", \
	  DIO, test_aio_fallocate, 4096, 0, 0) \
	T(X, "aio_close", RCGATE_ALL_FS,                                      \
	  "As aio_fallocate, the same thread closing another descriptor of the file (a file of one block written directly, no fallocate) while the extending write is in flight: the write's result, st_size and every byte (fstests generic/427).", \
	  "Closing a file while an asynchronous extending write is in flight frees the blocks it is writing: the file ends with a hole (zeros) where the application was told its data was written.", \
	  "e4229d6b0bc9 xfs: fix eofblocks race with file extending async dio writes", \
	  DIO, test_aio_close, 4096, 0, 0) \
	T(X, "splice_read", RCGATE_ALL_FS,                                    \
	  "splice() of 64 KiB from a file opened O_DIRECT into a pipe with room for less (one page, then four pages three of them full), to EOF: every call moves 1 byte to the room there is (never EAGAIN or an error on a blocking pipe), advances the offset by it, and the bytes drained are the file's (fstests generic/591).", \
	  "splice and sendfile from files opened O_DIRECT (file servers, copy tools) fail with EAGAIN or return wrong data when the pipe is partly full.", \
	  "3253d9d09337 splice: only read in as much information as there is pipe buffer space", \
	  DIO, test_splice_read, 4096, 0, 0) \
	T(X, "exer_sync", RCGATE_ALL_FS,                                       \
	  "Seeded random sequences of the read/write syscall families (every RWF flag, positional and not, direct, buffered and O_APPEND, faulting, never-touched and misaligned buffers), fallocate modes, truncate, SEEK_DATA/SEEK_HOLE and syncs, each answer held to its contract and the file checked against a model after every step; a failure is shrunk to the fewest operations that still fail.", \
	  "A data operation returned what its contract forbids or left the file differing from what the calls before it promised (wrong data, size or position): file corruption or a broken syscall.", "", \
	  EXER, EXER_PROFILE_SYNC, 3, EXER_DEFAULT_OPS) \
	T(X, "exer_async", RCGATE_ALL_FS,                                      \
	  "The exerciser over native AIO (several iocbs per submit, RWF_DSYNC and RWF_NOWAIT) and io_uring (plain, vectored, fixed buffers, registered files, a write linked to a read), with fallocate and truncate between them, checked against the model after every step.", \
	  "An asynchronous direct or buffered I/O completed with a wrong result or left wrong data, size or page cache: file corruption seen only by AIO/io_uring users (databases, QEMU).", "", \
	  EXER, EXER_PROFILE_ASYNC, 3, EXER_DEFAULT_OPS) \
	T(X, "exer_mixed", RCGATE_ALL_FS,                                      \
	  "The exerciser over every path at once: syscalls, AIO, io_uring, mmap stores and loads, splice both ways, sendfile, copy_file_range, FICLONERANGE, fallocate, truncate, writes from a mapping of the file itself or of another file, checked through buffered, direct and mmap reads.", \
	  "Two ways of reaching the same data disagree (page cache vs. disk, mapping vs. read) or a copy, clone or splice moved the wrong bytes: file corruption.", "", \
	  EXER, EXER_PROFILE_MIXED, 3, EXER_DEFAULT_OPS) \
	T(X, "exer_full", RCGATE_ALL_FS,                                       \
	  "The exerciser on a filesystem filled to its last 0.75-2.25 MiB: preallocation, writes into it and around it (direct, buffered, AIO, io_uring), truncate and syncs; an op that needs new blocks may fail with ENOSPC (what it did is adopted), a write into blocks the file already has (written or preallocated; on btrfs a direct write into preallocated ones) must not.", \
	  "A write into space the file already owns fails for lack of space, or a failed allocation leaves wrong data or size: applications that preallocate (databases, VM images, download managers) lose writes when the disk fills.", "", \
	  EXER, EXER_PROFILE_FULL, 2, 100) \
	T(X, "bdev_rw", "bdev",                                                \
	  "On a raw block device: direct writes of one sector at an odd sector, a page at a sector offset, 64 KiB, 1 MiB + 4 KiB (two bios) and 2 MiB + 1536 from a buffer 512 bytes into a page (every page partial), each read back directly into a buffer at another offset; write()/writev()/read()/readv() move the position by what they return; the whole window read back direct and buffered.", \
	  "Direct I/O to block devices (databases, VM images, LVM and RAID users) misplaces or loses sectors, or leaves the position wrong.", "", \
	  BDEV, test_bdev_rw, 0) \
	T(X, "bdev_vectored", "bdev",                                          \
	  "On a raw block device: one pwritev() of 300 segments of 1536 bytes each spanning two pages (600 partial pages, several bios) and one preadv() of 150 other segments; iovecs the device cannot take (lengths 1000 + 24, an address 8 bytes off) fail with EINVAL and write nothing, or write exactly their bytes.", \
	  "Bios built from partial pages and many segments drop, reorder or misalign sectors; a refused iovec writes part of itself.", "", \
	  BDEV, test_bdev_vectored, 6) \
	T(X, "bdev_nowait", "bdev",                                            \
	  "On a raw block device: RWF_NOWAIT direct writes and reads of a page, of 1 MiB + 8 KiB and of 264 pages in a shuffled iovec (more than one bio, with the device splitting at 64 KiB) complete whole or fail with EAGAIN, and EAGAIN leaves the device untouched; a RWF_NOWAIT direct read of a range with unwritten-back buffered data fails with EAGAIN or returns the new bytes, a blocking one returns them.", \
	  "Non-blocking direct I/O on block devices (io_uring, AIO) writes part of a request while reporting EAGAIN, or reads stale data under dirty page cache.", "", \
	  BDEV, test_bdev_nowait, 12) \
	T(X, "bdev_aio", "bdev",                                               \
	  "On a raw block device: native AIO writes of 1 MiB + 4 KiB, 512 bytes, 24 KiB from a buffer off the page and 64 KiB with RWF_DSYNC in one io_submit, then reads of them into buffers at other offsets in another; every res is the full length and every byte right.", \
	  "Asynchronous direct I/O on block devices completes with a wrong result or misplaces data.", "", \
	  BDEV, test_bdev_aio, 18) \
	T(X, "bdev_uring", "bdev",                                             \
	  "As bdev_aio through io_uring (IORING_OP_WRITE/READ with rw_flags, one io_uring_enter each).", \
	  "io_uring direct I/O on block devices completes with a wrong result or misplaces data.", "", \
	  BDEV, test_bdev_uring, 24) \
	T(X, "bdev_coherence", "bdev",                                         \
	  "On a raw block device: a direct read sees a buffered write not yet written back and bytes dirtied through a shared mapping; a buffered read and an old mapping see a direct write over pages they had cached.", \
	  "The block device's page cache and its direct I/O disagree: tools reading the device (backup, fsck, blkid) see old data or direct reads miss writes.", "", \
	  BDEV, test_bdev_coherence, 30) \
	T(X, "bdev_efault", "bdev",                                            \
	  "On a raw block device: a direct read into a read-only buffer fails with EFAULT and changes nothing; a direct write or read with a buffer whose third page is unmapped fails with EFAULT or stops short before it, and no sector past the hole is written.", \
	  "A faulting user buffer makes block device direct I/O report data it did not transfer or write sectors it was never given.", "", \
	  BDEV, test_bdev_efault, 36) \
	T(X, "bdev_eod", "bdev",                                               \
	  "At the end of a raw block device: a read across the end returns the bytes up to it (pread, preadv2, AIO, io_uring), at or past it 0; a write across the end writes and returns the part up to it and leaves the position at the end, at or past it fails with ENOSPC.", \
	  "Direct I/O near the end of a block device reads or writes past it, returns a wrong count or an error instead of a short count (partition and LVM tools, dd).", "", \
	  BDEV, test_bdev_eod, -6) \
	T(X, "exer_bdev", "bdev",                                              \
	  "The exerciser on the last 2 MiB of a raw block device: the syscall families, AIO, io_uring, mmap, splice, fallocate punch/zero and BLKZEROOUT, writes across the device's end (short, then ENOSPC), checked against a model after every step.", \
	  "The block layer returned a wrong count or left wrong data on the device (across its end, with RWF_NOWAIT, from a faulting buffer): raw device corruption.", "", \
	  EXER_BDEV, EXER_PROFILE_BDEV, 3, EXER_DEFAULT_OPS) \
	T(X, "crash_osync_extend", RCGATE_ALL_FS,                              \
	  "Two boots: 16 O_SYNC|O_DIRECT extending write()s on a disk of its own, power cut, then the size and bytes write() reported must be on disk.", \
	  "An O_SYNC direct write is not durable: a crash loses data the application was told was safe.", \
	  "91562895f803 ext4: properly sync file size update after O_SYNC direct IO", \
	  PROMISE, 0) \
	T(X, "crash_odsync_extend", RCGATE_ALL_FS,                             \
	  "Two boots: 16 O_DSYNC|O_DIRECT extending pwrite()s on a disk of its own, power cut, then the size and every byte must be on disk.", \
	  "An O_DSYNC direct write is not durable (databases' and journals' usual promise): a crash loses data or the file size.", \
	  "91562895f803 ext4: properly sync file size update after O_SYNC direct IO", \
	  PROMISE, 1) \
	T(X, "crash_fdatasync_extend", RCGATE_ALL_FS,                          \
	  "Two boots: four O_DIRECT pwritev()s extend a file to 64 KiB, fdatasync() returns, power cut, then the size and every byte must be on disk.", \
	  "fdatasync after direct writes does not persist the size they extended: a crash truncates the file.", "", \
	  PROMISE, 2) \
	T(X, "crash_aio_dsync", RCGATE_ALL_FS,                                 \
	  "Two boots: one io_submit of 16 RWF_DSYNC direct writes into blocks fallocated and fsynced before, every event complete, power cut, then every byte must be on disk.", \
	  "An asynchronous RWF_DSYNC direct write completes without its sync: a crash leaves the blocks unwritten (zeros) although the application was told they were durable.", \
	  "8184620ae212 btrfs: fix lost file sync on direct IO write with nowait and dsync iocb", \
	  PROMISE, 3) \
	T(X, "crash_uring_dsync", RCGATE_ALL_FS,                               \
	  "Two boots: 16 io_uring RWF_NOWAIT|RWF_DSYNC direct writes into blocks fallocated and fsynced before (one that would wait goes again without RWF_NOWAIT), power cut, then every byte must be on disk.", \
	  "An io_uring RWF_DSYNC direct write that completed without waiting is not durable: a crash loses data the application was told was safe.", \
	  "8184620ae212 btrfs: fix lost file sync on direct IO write with nowait and dsync iocb", \
	  PROMISE, 4) \
	T(X, "crash_fsync_append", RCGATE_ALL_FS,                              \
	  "Two boots: 16 O_APPEND|O_DIRECT write()s (position checked after each), fsync() returns, power cut, then the size and every byte must be on disk.", \
	  "fsync after direct appends (logs, WALs) does not persist them: a crash loses records the application had synced.", "", \
	  PROMISE, 5)

#endif
