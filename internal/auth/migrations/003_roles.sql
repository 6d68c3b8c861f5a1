-- The team's roles (issue 35, docs/team.md "Roles"): annotators and reviewers
-- beside admin, write (curator) and read (viewer), and the projects they are
-- members of.
--
-- SQLite cannot widen a CHECK in place, so user_account and api_key are
-- rebuilt. Foreign keys are on inside this transaction, and dropping a
-- parent would cascade (sessions) or break (keys), so the new tables refer
-- to user_account_new; each old table is dropped child first, and renaming
-- user_account_new to user_account rewrites those references.

CREATE TABLE user_account_new (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    name        TEXT    NOT NULL UNIQUE COLLATE NOCASE CHECK (length(name) BETWEEN 1 AND 64),
    password    TEXT    NOT NULL,
    role        TEXT    NOT NULL CHECK (role IN ('admin', 'write', 'read', 'annotator', 'reviewer')),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    disabled_at INTEGER
) STRICT;
INSERT INTO user_account_new SELECT seq, id, name, password, role, created_at, updated_at, disabled_at FROM user_account;

CREATE TABLE session_new (
    token_hash   TEXT    PRIMARY KEY,
    user_seq     INTEGER NOT NULL REFERENCES user_account_new (seq) ON DELETE CASCADE,
    csrf         TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL -- absolute end; idle ends come from last_seen_at
) STRICT, WITHOUT ROWID;
INSERT INTO session_new SELECT token_hash, user_seq, csrf, created_at, last_seen_at, expires_at FROM session;

-- A person's key acts with the person's role (Verify); role is what it was
-- made with, at most theirs.
CREATE TABLE api_key_new (
    id          TEXT    PRIMARY KEY,
    key         TEXT    NOT NULL UNIQUE,
    name        TEXT    NOT NULL,
    role        TEXT    NOT NULL CHECK (role IN ('admin', 'write', 'read', 'annotator', 'reviewer')),
    secret_hash TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER,
    revoked_at  INTEGER,
    user_seq    INTEGER REFERENCES user_account_new (seq)
) STRICT;
INSERT INTO api_key_new SELECT id, key, name, role, secret_hash, created_at, expires_at, revoked_at, user_seq FROM api_key;

DROP TABLE session;
DROP TABLE api_key;
DROP TABLE user_account;
ALTER TABLE user_account_new RENAME TO user_account;
ALTER TABLE session_new RENAME TO session;
ALTER TABLE api_key_new RENAME TO api_key;
CREATE INDEX session_user ON session (user_seq);

-- project_member: a person's role in one project. project_id is the
-- annotate package's project id as text (no foreign key across packages):
-- a member row grants only while its project exists, which web's
-- projectAccess checks on read, and DeleteProjectMembers removes a deleted
-- project's rows. A person's rows go with the person (ON DELETE CASCADE).
CREATE TABLE project_member (
    project_id TEXT    NOT NULL,
    user_seq   INTEGER NOT NULL REFERENCES user_account (seq) ON DELETE CASCADE,
    role       TEXT    NOT NULL CHECK (role IN ('annotator', 'reviewer')),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, user_seq)
) STRICT, WITHOUT ROWID;

CREATE INDEX project_member_user ON project_member (user_seq);
