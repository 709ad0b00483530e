/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ktap.h - the KTAP v1 parser: agent output in, plain result data out.
 *
 * Pure (no I/O, no globals), so it is unit-tested on golden logs and fuzzed.
 * The producer side of the contract is agent/, and agent/protocol.h spells
 * the rcgate lines for both sides; the format is KTAP v1 as in the kernel's
 * Documentation/dev-tools/ktap.rst plus two rcgate lines:
 *
 *   # rcgate-complete pass=P fail=F skip=S duration_ms=D
 *	the completeness marker: once, at indentation 0, after the last
 *	top-level result, terminated by a newline. Without it the output is
 *	incomplete (guest hung, panicked or was cut off): an infra error for
 *	the daemon, never a test failure. P counts PASS and XFAIL leaves, F
 *	FAIL leaves, S SKIP leaves; all must match what was parsed.
 *   # rcgate-infra: <reason>
 *	the agent could not run the suite; any indentation, anywhere.
 *
 * What the parser accepts beyond the strict contract, and why:
 *   - lines that are not KTAP (kernel log noise on a shared console, blank
 *     lines, wrongly indented text) are ignored and counted, as kunit_tool
 *     does; lines before the top-level header are always noise;
 *   - NUL bytes are dropped (serial ports emit them at reset), CR before LF
 *     is dropped, the last line needs no newline (except the marker);
 *   - nested levels may lack "KTAP version 1", "# Subtest:" or the plan
 *     (older kunit output); the top level needs both header and plan;
 *   - "TAP version 13/14" is accepted as a header, "ok 1 - name" as a result.
 * Everything stored (diagnostics, reasons) is printable ASCII: other bytes
 * become '?', so results can go into JSON, SQL and e-mail unescaped.
 */
#ifndef RCGATE_KTAP_H
#define RCGATE_KTAP_H

#include <stddef.h>

#define KTAP_MAX_INPUT (16u << 20)	/* bytes; more is an error */
#define KTAP_MAX_LINE 4096		/* bytes; longer lines are truncated */
#define KTAP_MAX_DEPTH 8		/* deepest indentation level allowed */
#define KTAP_MAX_RESULTS 100000		/* leaves and suites together */
#define KTAP_MAX_DIAG_LINES 64		/* per result; more are dropped */
#define KTAP_MAX_DIAG_BYTES 8192	/* per result; more are dropped */

enum ktap_status { KTAP_PASS, KTAP_FAIL, KTAP_SKIP, KTAP_XFAIL };

struct ktap_result {
	char *path;		/* "ext4.write_seq_512": suite names + name */
	enum ktap_status status;
	/*
	 * The "# " lines at this result's indentation since the previous
	 * result or plan there, without "# ", joined by '\n'; NULL if none.
	 */
	char *diagnostic;
	char *directive_reason;	/* text after "# SKIP" / "# TODO", or NULL */
	int is_suite;		/* closes a nested block */
	int depth;		/* indentation level, 0 = top */
	long number;		/* the test number on the line */
	long duration_ms;	/* "# rcgate-time-ms: N" before it; -1 if none */
	size_t line;		/* 1-based line number in the input */
};

struct ktap_report {
	struct ktap_result *results;	/* in input order: children first */
	size_t nresults;
	int complete;		/* marker seen, every plan satisfied, no error */
	/* Why not complete, with a line number; NULL iff complete. */
	char *error;
	char *infra_reason;	/* from "# rcgate-infra:", or NULL */
	char *agent_info;	/* text after "# rcgate-agent ", or NULL */
	char *uts_version;	/* text after "# rcgate-uts: " (uname -v), or NULL */
	long marker_pass, marker_fail, marker_skip, marker_duration_ms;
	size_t lines;		/* lines in the input */
	size_t ignored_lines;	/* noise, blank and unattached lines */
	size_t truncated_lines;	/* longer than KTAP_MAX_LINE */
	size_t nul_bytes;	/* dropped NUL bytes */
	size_t dropped_diag_lines;	/* over the per-result caps */
};

/*
 * Parse len bytes of agent output into out (which need not be initialised).
 * Returns 0 when the output is complete and well-formed, -1 otherwise: then
 * out->error says why (the first problem, with its line number), and out
 * still holds the results parsed up to that point, plus infra_reason if the
 * agent reported one anywhere. Parsing stops at the first error. A -1 never
 * means a test failed; failures are results with KTAP_FAIL. Either way the
 * caller releases out with ktap_report_free().
 */
int ktap_parse(const char *buf, size_t len, struct ktap_report *out);

/* Free everything out owns and clear it; safe on a cleared report. */
void ktap_report_free(struct ktap_report *out);

/* "PASS", "FAIL", "SKIP", "XFAIL"; "?" for an out-of-range value. */
const char *ktap_status_name(enum ktap_status status);

/* Leaves (is_suite == 0) with the given status. */
int ktap_count(const struct ktap_report *report, enum ktap_status status);

/* The first result whose path equals path, or NULL. */
const struct ktap_result *ktap_find(const struct ktap_report *report,
				    const char *path);

#endif
