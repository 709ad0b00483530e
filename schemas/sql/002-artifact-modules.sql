-- SPDX-License-Identifier: GPL-2.0-only
-- 002: kernel CI builders publish an image plus an optional modules tarball
-- instead of a .deb (kind 'image').
ALTER TABLE artifact ADD COLUMN modules_url TEXT;
ALTER TABLE artifact ADD COLUMN modules_sha256 TEXT;
