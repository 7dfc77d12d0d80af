-- The conversation database as schema version 1 wrote it (before full-text search), with two
-- conversations. test_app_store migrates it to the latest version.
CREATE TABLE conversations (id INTEGER PRIMARY KEY, title TEXT NOT NULL, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL);
CREATE TABLE messages (id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE, role TEXT NOT NULL, content TEXT NOT NULL, thinking TEXT NOT NULL DEFAULT '', created_ms INTEGER NOT NULL);
CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
INSERT INTO conversations VALUES (1, 'Old trip', 1000, 2000);
INSERT INTO conversations VALUES (2, 'Old maths', 1500, 2500);
INSERT INTO messages VALUES (1, 1, 'user', 'Where should I go in Portugal?', '', 1000);
INSERT INTO messages VALUES (2, 1, 'assistant', 'Lisbon and Porto are lovely in spring.', '', 1100);
INSERT INTO messages VALUES (3, 2, 'user', 'What is 12 times 12?', '', 1500);
INSERT INTO messages VALUES (4, 2, 'assistant', '144', 'twelve twelves', 1600);
PRAGMA user_version = 1;
