//! [`EventFeed`]: a session's live events for its subscribers (the ACP
//! forwarder, `dsh prompt`, tests), with back-pressure instead of loss.
//!
//! Every event the log appends, and every live-only `stream/*` event, is
//! published in order. Each [`EventStream`] reads every event published
//! after it subscribed; nothing is ever skipped. Publishing never blocks
//! (it happens under the log's lock, and from plugin threads), so a slow
//! reader holds events in memory instead; the turn then waits at its next
//! step or tool call ([`EventFeed::room`]) until every reader is within
//! [`FEED_CAPACITY`] events of the end. A reader that goes away (dropped)
//! stops counting at once.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::session::LoggedEvent;

/// How far a reader may fall behind before the turn waits for it.
pub const FEED_CAPACITY: usize = 1024;

#[derive(Default)]
struct FeedState {
    /// Sequence number of `items[0]`.
    base: u64,
    items: VecDeque<Arc<LoggedEvent>>,
    /// Next sequence number each reader reads.
    readers: HashMap<u64, u64>,
    next_reader: u64,
    closed: bool,
}

impl FeedState {
    fn end(&self) -> u64 {
        self.base + self.items.len() as u64
    }

    /// Forgets what every reader has read.
    fn trim(&mut self) {
        let oldest = self.readers.values().copied().min().unwrap_or(self.end());
        while self.base < oldest && self.items.pop_front().is_some() {
            self.base += 1;
        }
    }

    fn has_room(&self, capacity: usize) -> bool {
        let end = self.end();
        self.readers
            .values()
            .all(|next| end - next < capacity as u64)
    }
}

/// One session's live events.
pub struct EventFeed {
    state: Mutex<FeedState>,
    readable: Notify,
    room: Notify,
    capacity: usize,
}

impl EventFeed {
    /// A feed whose readers may fall `capacity` events behind.
    pub(crate) fn new(capacity: usize) -> Arc<EventFeed> {
        Arc::new(EventFeed {
            state: Mutex::new(FeedState::default()),
            readable: Notify::new(),
            room: Notify::new(),
            capacity: capacity.max(1),
        })
    }

    fn state(&self) -> MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Publishes one event to every reader; never blocks, never drops.
    pub(crate) fn publish(&self, event: LoggedEvent) {
        let mut state = self.state();
        if state.readers.is_empty() {
            // Nobody subscribed: readers only see what comes after them.
            state.base += 1;
            return;
        }
        state.items.push_back(Arc::new(event));
        drop(state);
        self.readable.notify_waiters();
    }

    /// Ends every stream once it has read what was published.
    pub(crate) fn close(&self) {
        self.state().closed = true;
        self.readable.notify_waiters();
    }

    /// A stream of every event published from now on.
    pub fn subscribe(self: &Arc<Self>) -> EventStream {
        let mut state = self.state();
        let id = state.next_reader;
        state.next_reader += 1;
        let end = state.end();
        state.readers.insert(id, end);
        EventStream {
            feed: self.clone(),
            id,
        }
    }

    /// Waits until every reader is less than the capacity behind.
    pub(crate) async fn room(&self) {
        loop {
            let notified = self.room.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.state().has_room(self.capacity) {
                return;
            }
            notified.await;
        }
    }
}

/// One reader of an [`EventFeed`].
pub struct EventStream {
    feed: Arc<EventFeed>,
    id: u64,
}

impl EventStream {
    /// The next event, if one is there now.
    pub fn try_recv(&mut self) -> Option<Arc<LoggedEvent>> {
        let mut state = self.feed.state();
        let next = *state.readers.get(&self.id)?;
        let at = usize::try_from(next.checked_sub(state.base)?).ok()?;
        let event = state.items.get(at)?.clone();
        state.readers.insert(self.id, next + 1);
        state.trim();
        drop(state);
        self.feed.room.notify_waiters();
        Some(event)
    }

    /// The next event; `None` once the session is gone and every event
    /// was read.
    pub async fn recv(&mut self) -> Option<Arc<LoggedEvent>> {
        let feed = self.feed.clone();
        loop {
            let notified = feed.readable.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(event) = self.try_recv() {
                return Some(event);
            }
            if self.feed.state().closed {
                return None;
            }
            notified.await;
        }
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        let mut state = self.feed.state();
        state.readers.remove(&self.id);
        state.trim();
        drop(state);
        self.feed.room.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::session::SessionEvent;

    fn step(n: u32) -> LoggedEvent {
        LoggedEvent::live(SessionEvent::StepStart { step: n })
    }

    #[tokio::test]
    async fn a_reader_far_behind_loses_nothing_and_holds_the_producer() {
        let feed = EventFeed::new(4);
        let mut slow = feed.subscribe();
        for n in 0..10 {
            feed.publish(step(n));
        }
        // Ten behind a capacity of four: the producer has no room.
        let room = feed.room();
        tokio::pin!(room);
        assert!(futures::poll!(room.as_mut()).is_pending());
        let mut seen = Vec::new();
        while let Some(e) = slow.try_recv() {
            seen.push(e.event.clone());
        }
        assert_eq!(seen, (0..10).map(|n| step(n).event).collect::<Vec<_>>());
        assert!(futures::poll!(room.as_mut()).is_ready());
        drop(slow);
        feed.close();
    }
}
