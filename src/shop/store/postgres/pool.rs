//! A few connections to the shop's PostgreSQL, handed out one call at a time: a transaction
//! needs a connection of its own, and calls to one replica should not queue behind one.
//!
//! A connection the server dropped is not handed out again; a new one is made instead.

use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_postgres::{Client, Config, NoTls};

use super::super::model::{ShopError, pg_detail};

/// Connections one replica keeps at most.
const SIZE: usize = 8;

pub(super) struct Pool {
    config: Config,
    /// `host:port/database`, for messages (never the password).
    pub at: String,
    idle: Mutex<Vec<Client>>,
    permits: Semaphore,
}

/// A connection lent out; it goes back to the pool when dropped.
pub(super) struct Pooled<'a> {
    pool: &'a Pool,
    client: Option<Client>,
    _permit: SemaphorePermit<'a>,
}

impl Pool {
    pub fn new(config: Config, at: String) -> Self {
        Self {
            config,
            at,
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(SIZE),
        }
    }

    /// A connection of this call's own, waiting while all of them are lent out.
    pub async fn get(&self) -> Result<Pooled<'_>, ShopError> {
        let permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| ShopError::Corrupt("the connection pool was closed".into()))?;
        let idle = loop {
            let next = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
            match next {
                Some(client) if client.is_closed() => continue,
                other => break other,
            }
        };
        let client = match idle {
            Some(client) => client,
            None => self.connect().await?,
        };
        Ok(Pooled {
            pool: self,
            client: Some(client),
            _permit: permit,
        })
    }

    async fn connect(&self) -> Result<Client, ShopError> {
        let (client, connection) =
            self.config
                .connect(NoTls)
                .await
                .map_err(|e| ShopError::Unreachable {
                    at: self.at.clone(),
                    detail: pg_detail(&e),
                })?;
        // The connection does the socket's I/O for the client, until either is dropped.
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::warn!(error = %pg_detail(&error), "the shop's database connection ended");
            }
        });
        Ok(client)
    }
}

impl Deref for Pooled<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        self.client
            .as_ref()
            .expect("a lent connection is there until dropped")
    }
}

impl DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        self.client
            .as_mut()
            .expect("a lent connection is there until dropped")
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(client) = self.client.take().filter(|c| !c.is_closed()) {
            self.pool
                .idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(client);
        }
    }
}
