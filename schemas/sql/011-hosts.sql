-- SPDX-License-Identifier: GPL-2.0-only
-- 011: the hypervisor host an attempt ran on (issue 16: [host NAME]
-- sections, hosts.c). NULL for jobs from before, or not placed yet.
ALTER TABLE job ADD COLUMN host TEXT;
