-- dsh session store, version 1: one row per session, one per event.
CREATE TABLE dsh_sessions (
    id          text PRIMARY KEY,
    header      jsonb NOT NULL,
    header_line text NOT NULL,
    cwd         text NOT NULL,
    host        text NOT NULL,
    status      text NOT NULL CHECK (status IN ('held', 'released')),
    holder      text,
    held_since  timestamptz,
    created_ms  bigint NOT NULL,
    events      bigint NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX dsh_sessions_created ON dsh_sessions (created_ms, id);

CREATE TABLE dsh_events (
    session_id text NOT NULL REFERENCES dsh_sessions (id) ON DELETE CASCADE,
    seq        bigint NOT NULL CHECK (seq >= 0),
    event      jsonb NOT NULL,
    line       text NOT NULL,
    stored_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, seq)
);

CREATE INDEX dsh_events_type ON dsh_events ((event ->> 'type'));
