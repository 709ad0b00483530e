-- SPDX-License-Identifier: GPL-2.0-only
-- 004: facts about this installation, such as the instance id that names
-- its guests, so two rcgated on one libvirt never touch each other's.
CREATE TABLE meta (
	key	TEXT PRIMARY KEY,
	value	TEXT NOT NULL
);
