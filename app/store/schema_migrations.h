#pragma once
// The conversation database's schema as numbered migrations. PRAGMA user_version holds the
// number of migrations applied; opening a database applies the missing ones in order, each in
// its own transaction. Never edit a released migration: add the next one.
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

namespace strata::app {

// migrations()[i] brings a database from version i to version i + 1.
const QList<QStringList>& schemaMigrations();
int latestSchemaVersion();

int schemaVersion(QSqlDatabase& db);
// Applies what is missing; false (and `error` says why) if a step fails or the database is
// newer than this app.
bool migrateSchema(QSqlDatabase& db, QString* error);

}  // namespace strata::app
