-- API keys. The secret is shown once at creation and stored only as its
-- SHA-256: secrets are 256 random bits, so a slow password hash buys nothing
-- and would cost every request.
CREATE TABLE api_key (
    id          TEXT    PRIMARY KEY,
    key         TEXT    NOT NULL UNIQUE,
    name        TEXT    NOT NULL,
    role        TEXT    NOT NULL CHECK (role IN ('admin', 'write', 'read')),
    secret_hash TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER,
    revoked_at  INTEGER
) STRICT;
