//! Versioned schema migrations for the PostgreSQL store.
//!
//! Each migration is a numbered SQL file applied once, in order, inside one
//! transaction, and recorded in `dsh_schema_migrations`. Two hosts starting
//! at once are serialized by a session-level advisory lock on the
//! migrating connection (released when it closes). A database whose schema
//! is newer than this dsh knows is refused rather than written to.

use super::why;

/// `(version, name, sql)`, in order.
pub(crate) const MIGRATIONS: &[(i32, &str, &str)] = &[(
    1,
    "sessions and events",
    include_str!("migrations/0001_sessions.sql"),
)];

/// Advisory lock key serializing migrations (`dsh` + `mig` in ASCII).
const MIGRATION_LOCK: i64 = 0x0064_7368_006d_6967;

/// The newest schema version this dsh knows.
pub fn latest() -> i32 {
    MIGRATIONS.last().map_or(0, |m| m.0)
}

/// What a migration run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// The schema version before.
    pub from: i32,
    /// Migrations applied now, `(version, name)`.
    pub applied: Vec<(i32, String)>,
}

/// Applies every pending migration on `client` (a connection of its own:
/// the lock lives until it closes).
pub(crate) async fn migrate(client: &mut tokio_postgres::Client) -> Result<Migrated, String> {
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(|e| format!("cannot take the migration lock: {}", why(&e)))?;
    let result = apply(client).await;
    let _ = client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .await;
    result
}

async fn apply(client: &mut tokio_postgres::Client) -> Result<Migrated, String> {
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS dsh_schema_migrations (
                version    integer PRIMARY KEY,
                name       text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )",
        )
        .await
        .map_err(|e| format!("cannot create dsh_schema_migrations: {}", why(&e)))?;
    let tx = client
        .transaction()
        .await
        .map_err(|e| format!("cannot begin: {}", why(&e)))?;
    let done: Vec<i32> = tx
        .query(
            "SELECT version FROM dsh_schema_migrations ORDER BY version",
            &[],
        )
        .await
        .map_err(|e| format!("cannot read dsh_schema_migrations: {}", why(&e)))?
        .iter()
        .map(|row| row.get(0))
        .collect();
    let from = done.iter().copied().max().unwrap_or(0);
    if from > latest() {
        return Err(format!(
            "the database's schema is version {from}, newer than this dsh knows ({}); upgrade dsh",
            latest()
        ));
    }
    let mut applied = Vec::new();
    for (version, name, sql) in MIGRATIONS {
        if done.contains(version) {
            continue;
        }
        tx.batch_execute(sql)
            .await
            .map_err(|e| format!("migration {version} ({name}) failed: {}", why(&e)))?;
        tx.execute(
            "INSERT INTO dsh_schema_migrations (version, name) VALUES ($1, $2)",
            &[version, name],
        )
        .await
        .map_err(|e| format!("cannot record migration {version}: {}", why(&e)))?;
        applied.push((*version, (*name).to_string()));
    }
    tx.commit()
        .await
        .map_err(|e| format!("cannot commit the migrations: {}", why(&e)))?;
    Ok(Migrated { from, applied })
}
