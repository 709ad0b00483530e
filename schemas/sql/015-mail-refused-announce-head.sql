-- SPDX-License-Identifier: GPL-2.0-only
-- 015 (issue 28, second round).
-- refused: why a mail rcgate composed did not go out by SMTP (public_url
-- or mail_from not public, no smtp_url), NULL when it was queued. The row
-- still makes the mail "done" (the unique index), so a later config that
-- allows mail never sends it after the fact; and since nobody received
-- it, no follow-up threads under its Message-ID and no lore link names it.
ALTER TABLE mail ADD COLUMN refused TEXT;

-- The head of the announcement's body as the list quotes it in replies
-- ("This is the start of the stable review cycle ..." down to "Anything
-- received after that time might be too late."), capped at intake.
ALTER TABLE release ADD COLUMN announce_head TEXT;

-- What a reader needs to build a job's kernel the same way (a build
-- from source or git): the compiler its .config names, and what git
-- describe --tags says of the commit built. The .config itself is in the
-- job's directory (GET /api/v1/jobs/{id}/config).
ALTER TABLE job ADD COLUMN compiler TEXT;
ALTER TABLE job ADD COLUMN git_describe TEXT;

-- The patches of an rc's series, as they reach intake (replies to the
-- announcement from its sender): a culprit the bisection names as patch
-- <number> of the series is linked as https://lore.kernel.org/r/<message_id>/.
CREATE TABLE series_patch (
	release_id	INTEGER NOT NULL REFERENCES release(id),
	number		INTEGER NOT NULL,
	total		INTEGER NOT NULL,
	subject		TEXT NOT NULL,
	message_id	TEXT NOT NULL,
	PRIMARY KEY (release_id, number)
);
