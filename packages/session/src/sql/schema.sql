-- The session store's tables. `switchyard_meta` holds the schema version. A session's history items
-- and journal entries are rows of their own, counted by `history_length` and `journal_length`, so a
-- commit writes only what changed.
CREATE TABLE IF NOT EXISTS switchyard_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS switchyard_sessions (
  id TEXT PRIMARY KEY, version INTEGER NOT NULL, lease TEXT, state TEXT, history_length INTEGER NOT NULL, journal_length INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS switchyard_history (session TEXT NOT NULL, idx INTEGER NOT NULL, item TEXT NOT NULL, PRIMARY KEY (session, idx)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS switchyard_journal (session TEXT NOT NULL, seq INTEGER NOT NULL, entry TEXT NOT NULL, PRIMARY KEY (session, seq)) WITHOUT ROWID;
