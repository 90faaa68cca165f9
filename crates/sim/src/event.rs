//! The event queue: arrivals ordered by `(time, sequence number)`, so ties are FIFO and runs are
//! deterministic. Engine steps are not queued: one replica runs one step at a time, so the
//! simulation loop tracks the step in flight itself.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A request about to arrive: from the open-loop stream, or from closed-loop user `user`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrival {
    /// Simulated time, seconds.
    pub time_s: f64,
    /// Closed-loop user, or [`OPEN_LOOP`].
    pub user: u32,
}

/// The `user` of an open-loop arrival.
pub const OPEN_LOOP: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Entry {
    time_s: f64,
    seq: u64,
    user: u32,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so the max-heap pops the earliest time, then the lowest sequence number.
    fn cmp(&self, other: &Self) -> Ordering {
        other.time_s.total_cmp(&self.time_s).then_with(|| other.seq.cmp(&self.seq))
    }
}

/// A min-queue of arrivals by `(time, insertion order)`.
#[derive(Clone, Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    /// Schedules an arrival.
    pub fn push(&mut self, arrival: Arrival) {
        self.heap.push(Entry { time_s: arrival.time_s, seq: self.next_seq, user: arrival.user });
        self.next_seq += 1;
    }

    /// The time of the earliest arrival.
    pub fn peek_time(&self) -> Option<f64> {
        self.heap.peek().map(|e| e.time_s)
    }

    /// Removes and returns the earliest arrival if it is due at or before `t`.
    pub fn pop_due(&mut self, t: f64) -> Option<Arrival> {
        match self.heap.peek() {
            Some(e) if e.time_s <= t => self.heap.pop().map(|e| Arrival { time_s: e.time_s, user: e.user }),
            _ => None,
        }
    }

    /// Pending arrivals.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_ties_in_insertion_order() {
        let mut q = EventQueue::default();
        for (t, u) in [(2.0, 0), (1.0, 1), (1.0, 2), (0.5, 3), (1.0, 4)] {
            q.push(Arrival { time_s: t, user: u });
        }
        let mut order = vec![];
        while let Some(a) = q.pop_due(f64::INFINITY) {
            order.push(a.user);
        }
        assert_eq!(order, [3, 1, 2, 4, 0]);
    }

    #[test]
    fn pop_due_respects_the_horizon() {
        let mut q = EventQueue::default();
        q.push(Arrival { time_s: 1.0, user: 0 });
        assert!(q.pop_due(0.999).is_none());
        assert!(q.pop_due(1.0).is_some());
    }
}
