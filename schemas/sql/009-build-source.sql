-- SPDX-License-Identifier: GPL-2.0-only
-- 009: releases built from source (issue 14). An artifact of kind 'source'
-- is what a build starts from: url/sha256 the release tarball, patch_url/
-- patch_sha256 the rc's stable-review patch (NULL for a release). The job
-- records the image it built and how long the build took.
ALTER TABLE artifact ADD COLUMN patch_url TEXT;
ALTER TABLE artifact ADD COLUMN patch_sha256 TEXT;
ALTER TABLE job ADD COLUMN built_sha256 TEXT;
ALTER TABLE job ADD COLUMN build_seconds REAL;
-- An announced rc whose source source.c tried to resolve (when, and why it
-- could not; NULL: it made the jobs).
ALTER TABLE release ADD COLUMN source_tried TEXT;
ALTER TABLE release ADD COLUMN source_error TEXT;
