-- People (issue 35, docs/team.md): accounts that sign in with a name and a
-- password, their sessions, and the failures that slow guessing down.
--
-- user_account.password is an Argon2id PHC string ($argon2id$v=19$m=...,t=...,p=...$salt$hash),
-- so the parameters of each hash travel with it and can be raised later.
-- session.token_hash is the SHA-256 of the cookie's 256 random bits, as API
-- key secrets are kept: the cookie is a bearer secret, not a password.
-- api_key.user_seq: the person a key belongs to (NULL for keys made before
-- people existed, which act with their own role as before).

CREATE TABLE user_account (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    name        TEXT    NOT NULL UNIQUE COLLATE NOCASE CHECK (length(name) BETWEEN 1 AND 64),
    password    TEXT    NOT NULL,
    role        TEXT    NOT NULL CHECK (role IN ('admin', 'write', 'read')),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    disabled_at INTEGER
) STRICT;

CREATE TABLE session (
    token_hash   TEXT    PRIMARY KEY,
    user_seq     INTEGER NOT NULL REFERENCES user_account (seq) ON DELETE CASCADE,
    csrf         TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL -- absolute end; idle ends come from last_seen_at
) STRICT, WITHOUT ROWID;

CREATE INDEX session_user ON session (user_seq);

-- who: "user:<lower-case name>" or "addr:<ip>"; a success clears the name's row.
CREATE TABLE login_failure (
    who      TEXT    PRIMARY KEY,
    failures INTEGER NOT NULL,
    last_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

ALTER TABLE api_key ADD COLUMN user_seq INTEGER REFERENCES user_account (seq);
