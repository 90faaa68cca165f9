//! The replica's state and its scheduler: running and waiting requests, the KV cache, and how
//! one step is formed (vLLM V1's policy, see design.md "Engine semantics").
//!
//! Requests that are decoding (one token a step) form a [`Cohort`] whose progress is counted
//! lazily: one step counter for all of them, a sum for the attention context, members counted by
//! where their next KV block starts, and a heap of when each finishes. So a step costs
//! O(what changes) (a prefill chunk, an admission, a finish), not O(running requests). Only a
//! step whose decodes would not fit the KV cache (a preemption) dissolves the cohort and is formed
//! request by request, exactly as before.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::scenario::Engine;

/// One request in the system.
#[derive(Clone, Debug)]
pub struct Request {
    /// Arrival index (0-based), which also picks its sizes from the size stream.
    pub id: u64,
    /// Closed-loop user, or `event::OPEN_LOOP`.
    pub user: u32,
    /// Arrival time.
    pub arrival_s: f64,
    /// Prompt tokens.
    pub prompt: u32,
    /// Output tokens to generate.
    pub output: u32,
    /// Tokens whose KV is in the cache.
    pub computed: u32,
    /// Output tokens emitted so far (kept across preemption, as vLLM does).
    pub emitted: u32,
    /// KV blocks held.
    pub blocks: u32,
    /// When it was first scheduled into a step (NaN before).
    pub first_scheduled_s: f64,
    /// When its first token came out (NaN before).
    pub first_token_s: f64,
    /// When its latest token came out.
    pub last_token_s: f64,
    /// Whether statistics count it.
    pub measured: bool,
    /// Whether its token times are traced for the timeline chart.
    pub traced: bool,
    /// Its place in the running order (set when it is admitted; a readmission gets a new one).
    pub seq: u64,
    /// Where its entry is in [`Running`]'s order while it runs (kept up to date as the order is
    /// swept), so leaving finds it without a search.
    pub running_at: u32,
    /// Whether it is a [`Cohort`] member: then `computed` and `emitted` are as of `join_d`, and
    /// `blocks` and `last_token_s` are stale (see [`Batch::materialize`]).
    pub in_cohort: bool,
    /// The cohort's step counter when it joined.
    pub join_d: u64,
}

impl Request {
    /// Tokens that must be in the KV cache before the next token can be emitted: the prompt and
    /// every token emitted so far (each decode step computes the previous token's KV).
    #[inline]
    pub fn target(&self) -> u32 {
        self.prompt + self.emitted
    }

    /// Tokens still to compute before the next emission (1 while decoding).
    #[inline]
    pub fn remaining(&self) -> u32 {
        self.target() - self.computed
    }

    /// Whether it is past its (re)prefill and generating one token per step.
    #[inline]
    pub fn is_decoding(&self) -> bool {
        self.emitted > 0 && self.remaining() == 1
    }

    /// Output tokens still to emit.
    #[inline]
    pub fn remaining_output(&self) -> u64 {
        (self.output - self.emitted) as u64
    }
}

/// A token a request emitted at the end of a step.
#[derive(Clone, Copy, Debug)]
pub struct Emitted {
    /// When its previous token came (`None` for its first token).
    pub previous_token_s: Option<f64>,
    /// Whether it was its last.
    pub last: bool,
}

/// A request's share of one step.
#[derive(Clone, Copy, Debug)]
pub struct Scheduled {
    /// Slot of the request.
    pub slot: u32,
    /// Tokens it computes in this step.
    pub tokens: u32,
}

/// What one formed step contains.
#[derive(Clone, Debug, Default)]
pub struct StepPlan {
    /// Cohort members in the step, one token each (they come first in running order).
    pub decoders: u64,
    /// The other requests in the step with their token counts, in running order.
    pub scheduled: Vec<Scheduled>,
    /// Tokens computed (prefill chunks plus one per decode).
    pub tokens: u64,
    /// Tokens already in the KV cache of the step's sequences (what attention reads).
    pub context: u64,
    /// Requests admitted from the waiting queue.
    pub admitted: u32,
    /// Requests preempted while forming it.
    pub preempted: u32,
    /// Whether every running request decodes one token and nothing else happens, so the next
    /// steps are the same until something changes.
    pub pure_decode: bool,
}

impl StepPlan {
    /// Sequences in the step.
    #[inline]
    pub fn seqs(&self) -> u64 {
        self.decoders + self.scheduled.len() as u64
    }
}

/// The decoding requests, advanced together: each step every member computes and emits one
/// token, so a member's progress is its progress when it joined plus the steps since.
#[derive(Clone, Debug, Default)]
pub struct Cohort {
    /// Steps the cohort has decoded so far (a jump of `k` counts `k`).
    d: u64,
    /// Members.
    n: u64,
    /// Members whose statistics count.
    measured: u64,
    /// Sum over members of `computed - join_d`: the context of a step is this plus `n * d`.
    ctx_base: i64,
    /// Members by `(computed - join_d) mod block_size`: those whose next token opens a KV block
    /// at step `d` are `cross[(-d) mod block_size]`.
    cross: Vec<u64>,
    /// `(step at which it emits its last token, slot)`; entries of requests that left are
    /// skipped when they surface (one whose slot a new member took with the same last step reads
    /// as that member's, which [`Batch::pop_finished`] takes once).
    finish: BinaryHeap<Reverse<(u64, u32)>>,
    /// Traced members' slots.
    traced: Vec<u32>,
}

impl Cohort {
    fn key(&self, computed: u32, join_d: u64) -> usize {
        self.modulo(i64::from(computed) - join_d as i64)
    }

    /// `x mod block_size`, from 0: a power-of-two block size (vLLM's 16) by a mask, without a
    /// 64-bit division.
    #[inline]
    fn modulo(&self, x: i64) -> usize {
        let bs = self.cross.len();
        if bs.is_power_of_two() { (x as usize) & (bs - 1) } else { x.rem_euclid(bs as i64) as usize }
    }

    /// Members whose next token (at step `d`) opens a new KV block.
    #[inline]
    fn crossings_at(&self, d: u64) -> u64 {
        self.cross[self.at(d)]
    }

    /// `(-d) mod block_size`: where [`Cohort::crossings_at`] looks for step `d`.
    #[inline]
    fn at(&self, d: u64) -> usize {
        self.modulo((d as i64).wrapping_neg())
    }

    /// New KV blocks the members open in steps `d + 1 ..= d + k - 1` (the first step's were
    /// reserved when it was formed).
    fn crossings_after(&self, k: u64) -> u64 {
        let bs = self.cross.len() as u64;
        let more = k.saturating_sub(1);
        // Every member opens one block per `bs` steps.
        let mut total = (more / bs) * self.n;
        // crossings_at(d + j) for j = 1, 2, ...: each one place down the table, wrapping (no
        // division a step: a 64-bit one costs more than the rest of the loop).
        let mut i = self.at(self.d + 1);
        for _ in 0..more % bs {
            total += self.cross[i];
            i = if i == 0 { self.cross.len() - 1 } else { i - 1 };
        }
        total
    }
}

/// The running requests in admission order (`seq` ascending): pushed at the back, preempted from
/// the back, finished from anywhere (marked, then swept out once they are as many as the rest).
#[derive(Clone, Debug, Default)]
pub struct Running {
    order: Vec<(u64, u32)>,
    live: usize,
}

/// Batches of at most this many running requests are formed request by request: for a few
/// requests the cohort's bookkeeping costs more than it saves (and both ways give the same run).
pub const COHORT_MIN_RUNNING: usize = 4;

/// A finished request's place in [`Running::order`], until it is swept out.
const GONE: u32 = u32::MAX;

impl Running {
    /// Running requests.
    #[inline]
    pub fn len(&self) -> usize {
        self.live
    }

    /// Their slots, in admission order.
    pub fn slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.order.iter().map(|&(_, slot)| slot).filter(|&slot| slot != GONE)
    }

    /// Appends the request admitted as `seq`; returns its place in the order.
    fn push(&mut self, seq: u64, slot: u32) -> u32 {
        debug_assert!(self.order.last().is_none_or(|&(last, _)| last < seq));
        self.order.push((seq, slot));
        self.live += 1;
        (self.order.len() - 1) as u32
    }

    /// The newest running request, taken out.
    fn pop_last(&mut self) -> Option<(u64, u32)> {
        while let Some(entry) = self.order.pop() {
            if entry.1 != GONE {
                self.live -= 1;
                return Some(entry);
            }
        }
        None
    }

    /// Takes out the request admitted as `seq`, whose entry was at `at` (found by a search if
    /// it is not there). Returns whether finished entries now outnumber the running ones, so the
    /// order is due a [`sweep`](Running::sweep).
    fn remove(&mut self, seq: u64, at: u32) -> bool {
        let i = match self.order.get(at as usize) {
            Some(&(s, _)) if s == seq => at as usize,
            // The place is kept right, and every test run fails if it is not; a release build
            // searches rather than mark another request's entry.
            _ => {
                debug_assert!(false, "request {seq}'s place {at} is stale");
                self.order.binary_search_by_key(&seq, |&(s, _)| s).expect("a running request's seq")
            }
        };
        debug_assert_ne!(self.order[i].1, GONE);
        self.order[i].1 = GONE;
        self.live -= 1;
        self.order.len() > 2 * self.live + 16
    }

    /// Drops the finished entries; `moved(slot, at)` hears each running request's new place.
    fn sweep(&mut self, mut moved: impl FnMut(u32, u32)) {
        self.order.retain(|&(_, slot)| slot != GONE);
        for (at, &(_, slot)) in self.order.iter().enumerate() {
            moved(slot, at as u32);
        }
    }
}

/// The replica: request slots, the running batch, the waiting queue and the KV cache. It keeps
/// its own books (KV blocks, each request's progress, the cohort); the simulation tells it what
/// a step did and reads requests back.
#[derive(Clone, Debug)]
pub struct Batch {
    /// Request storage; `free` lists unused slots.
    slots: Vec<Request>,
    free: Vec<u32>,
    /// Running requests, in admission order.
    running: Running,
    next_seq: u64,
    /// Running requests outside the cohort, in running order: a partly prefilled request (the
    /// last admitted), and, after a step that dissolved the cohort, everyone.
    explicit: Vec<u32>,
    /// The decoding requests.
    cohort: Cohort,
    /// Waiting requests, FCFS (preempted requests go back to the front).
    waiting: VecDeque<u32>,
    /// KV blocks in use.
    kv_used: u64,
    engine: Engine,
}

impl Batch {
    /// An empty replica.
    pub fn new(engine: Engine) -> Self {
        Batch {
            slots: Vec::new(),
            free: Vec::new(),
            running: Running::default(),
            next_seq: 0,
            explicit: Vec::new(),
            cohort: Cohort { cross: vec![0; engine.block_size_tokens as usize], ..Cohort::default() },
            waiting: VecDeque::new(),
            kv_used: 0,
            engine,
        }
    }

    /// The request in `slot`.
    #[inline]
    pub fn request(&self, slot: u32) -> &Request {
        &self.slots[slot as usize]
    }

    /// `num_requests_running`.
    #[inline]
    pub fn num_running(&self) -> usize {
        self.running.len()
    }

    /// `num_requests_waiting`.
    #[inline]
    pub fn num_waiting(&self) -> usize {
        self.waiting.len()
    }

    /// The running requests' slots, in admission order.
    pub fn running_slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.running.slots()
    }

    /// The waiting requests' slots, front of the queue first.
    pub fn waiting_slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.waiting.iter().copied()
    }

    /// KV blocks in use.
    #[inline]
    pub fn kv_used(&self) -> u64 {
        self.kv_used
    }

    /// Cohort members whose statistics count.
    #[inline]
    pub fn cohort_measured(&self) -> u64 {
        self.cohort.measured
    }

    /// Traced cohort members' slots.
    #[inline]
    pub fn cohort_traced(&self) -> &[u32] {
        &self.cohort.traced
    }

    /// New KV blocks the cohort's members open in the `k - 1` steps after the next one.
    pub fn cohort_crossings_after(&self, k: u64) -> u64 {
        self.cohort.crossings_after(k)
    }

    /// The cohort decodes `k` steps (the step just formed and `k - 1` like it): each member
    /// emits `k` tokens, and takes the KV blocks the later steps open.
    pub fn advance_cohort(&mut self, k: u64) {
        if k > 1 {
            self.kv_used += self.cohort.crossings_after(k);
        }
        self.cohort.d += k;
    }

    /// A decoder outside the cohort runs `k` decode steps ending at `end_s`, emitting a token in
    /// each; returns whether it emitted its last.
    pub fn decode(&mut self, slot: u32, k: u32, end_s: f64) -> bool {
        let block = self.engine.block_size_tokens;
        let r = &mut self.slots[slot as usize];
        r.computed += k;
        r.emitted += k;
        r.last_token_s = end_s;
        let blocks = r.computed.div_ceil(block);
        self.kv_used += (blocks - r.blocks) as u64;
        r.blocks = blocks;
        r.emitted == r.output
    }

    /// A scheduled request computed `tokens` in a step ending at `end_s`: the token it emitted
    /// then, or `None` for a prefill chunk that emits none.
    pub fn compute(&mut self, slot: u32, tokens: u32, end_s: f64) -> Option<Emitted> {
        let r = &mut self.slots[slot as usize];
        r.computed += tokens;
        if r.computed < r.target() {
            return None;
        }
        let previous_token_s = if r.emitted == 0 {
            r.first_token_s = end_s;
            None
        } else {
            Some(r.last_token_s)
        };
        r.emitted += 1;
        r.last_token_s = end_s;
        Some(Emitted { previous_token_s, last: r.emitted == r.output })
    }

    /// Moves every request outside the cohort that now decodes one token a step into it, if the
    /// batch is big enough to gain from it.
    pub fn join_decoders(&mut self) {
        if self.running.len() <= COHORT_MIN_RUNNING {
            return;
        }
        let mut i = 0;
        while i < self.explicit.len() {
            let slot = self.explicit[i];
            let r = &self.slots[slot as usize];
            if r.is_decoding() && r.emitted < r.output {
                self.explicit.remove(i);
                self.join(slot);
            } else {
                i += 1;
            }
        }
    }

    /// Adds the requests outside the cohort that have emitted their last token to `finishing`
    /// (which holds the cohort's, from [`Batch::pop_finished`]) as `(seq, slot)`, and puts them
    /// all in running order.
    pub fn collect_finished(&mut self, finishing: &mut Vec<(u64, u32)>) {
        let slots = &self.slots;
        self.explicit.retain(|&slot| {
            let r = &slots[slot as usize];
            let done = r.emitted >= r.output;
            if done {
                finishing.push((r.seq, slot));
            }
            !done
        });
        // Running order; a handful at most, so an insertion sort (no sort code in the wasm).
        for i in 1..finishing.len() {
            let mut j = i;
            while j > 0 && finishing[j - 1].0 > finishing[j].0 {
                finishing.swap(j - 1, j);
                j -= 1;
            }
        }
    }

    /// A finished request leaves the running batch (a cohort member with its progress written
    /// back: its last token came at `end_s`); it keeps its slot and KV until [`Batch::release`].
    pub fn leave(&mut self, seq: u64, slot: u32, end_s: f64) {
        if self.slots[slot as usize].in_cohort {
            self.materialize(slot, end_s);
        }
        if self.running.remove(seq, self.slots[slot as usize].running_at) {
            let slots = &mut self.slots;
            self.running.sweep(|slot, at| slots[slot as usize].running_at = at);
        }
    }

    /// Blocks needed to hold `tokens` tokens.
    #[inline]
    pub fn blocks_for(&self, tokens: u32) -> u32 {
        tokens.div_ceil(self.engine.block_size_tokens)
    }

    /// Free KV blocks.
    #[inline]
    pub fn kv_free(&self) -> u64 {
        self.engine.kv_blocks - self.kv_used
    }

    /// Stores a new request at the back of the waiting queue; returns its slot.
    pub fn enqueue(&mut self, request: Request) -> u32 {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = request;
                slot
            }
            None => {
                self.slots.push(request);
                (self.slots.len() - 1) as u32
            }
        };
        self.waiting.push_back(slot);
        slot
    }

    /// Frees a finished request's KV blocks and slot (it has left the cohort and the running set).
    pub fn release(&mut self, slot: u32) {
        let r = &mut self.slots[slot as usize];
        self.kv_used -= r.blocks as u64;
        r.blocks = 0;
        self.free.push(slot);
    }

    /// Requests in the system (running and waiting).
    pub fn in_system(&self) -> usize {
        self.running.len() + self.waiting.len()
    }

    /// A member's tokens computed and emitted now.
    #[inline]
    pub fn progress(&self, r: &Request) -> (u32, u32) {
        if r.in_cohort {
            let steps = (self.cohort.d - r.join_d) as u32;
            (r.computed + steps, r.emitted + steps)
        } else {
            (r.computed, r.emitted)
        }
    }

    /// Puts a decoding request into the cohort (at the end of a step in which it emitted).
    fn join(&mut self, slot: u32) {
        let d = self.cohort.d;
        let r = &mut self.slots[slot as usize];
        debug_assert!(!r.in_cohort && r.is_decoding() && r.emitted < r.output);
        r.in_cohort = true;
        r.join_d = d;
        let (computed, finish, measured, traced) =
            (r.computed, d + (r.output - r.emitted) as u64, r.measured, r.traced);
        let c = &mut self.cohort;
        c.n += 1;
        c.measured += u64::from(measured);
        c.ctx_base += i64::from(computed) - d as i64;
        let key = c.key(computed, d);
        c.cross[key] += 1;
        c.finish.push(Reverse((finish, slot)));
        if traced {
            c.traced.push(slot);
        }
    }

    /// Takes a member out of the cohort, writing its progress back (`last_token_s`: when its
    /// latest token came, the end of the last step).
    fn materialize(&mut self, slot: u32, last_token_s: f64) {
        let r = &self.slots[slot as usize];
        debug_assert!(r.in_cohort);
        let (computed, emitted) = self.progress(r);
        let (join_computed, join_d, measured, traced) = (r.computed, r.join_d, r.measured, r.traced);
        let blocks = self.blocks_for(computed);
        let c = &mut self.cohort;
        c.n -= 1;
        c.measured -= u64::from(measured);
        c.ctx_base -= i64::from(join_computed) - join_d as i64;
        let key = c.key(join_computed, join_d);
        c.cross[key] -= 1;
        if traced {
            c.traced.retain(|&s| s != slot);
        }
        let r = &mut self.slots[slot as usize];
        r.in_cohort = false;
        r.computed = computed;
        r.emitted = emitted;
        r.blocks = blocks;
        r.last_token_s = last_token_s;
    }

    /// The fewest steps until a member emits its last token (`None` without members).
    pub fn next_finish(&mut self) -> Option<u64> {
        while let Some(&Reverse((finish, slot))) = self.cohort.finish.peek() {
            if self.is_member_entry(finish, slot) {
                return Some(finish - self.cohort.d);
            }
            self.cohort.finish.pop();
        }
        None
    }

    /// Members that have emitted their last token by now, by slot (they are still members).
    pub fn pop_finished(&mut self, into: &mut Vec<(u64, u32)>) {
        while let Some(&Reverse((finish, slot))) = self.cohort.finish.peek() {
            if finish > self.cohort.d {
                break;
            }
            self.cohort.finish.pop();
            if self.is_member_entry(finish, slot) && !into.iter().any(|&(_, s)| s == slot) {
                into.push((self.slots[slot as usize].seq, slot));
            }
        }
    }

    fn is_member_entry(&self, finish: u64, slot: u32) -> bool {
        let r = &self.slots[slot as usize];
        r.in_cohort && r.join_d + (r.output - r.emitted) as u64 == finish
    }

    /// Every member back to explicit bookkeeping, in running order (their latest token came at
    /// `now_s`, the end of the last step).
    fn dissolve(&mut self, now_s: f64) {
        let members: Vec<u32> = self.running.slots().filter(|&s| self.slots[s as usize].in_cohort).collect();
        for &slot in &members {
            self.materialize(slot, now_s);
        }
        self.cohort.finish.clear();
        self.explicit = self.running.slots().collect();
    }

    /// Forms the next step at time `now_s` into `plan`.
    ///
    /// 1. Running requests in admission order take their tokens: one to decode, or a prefill
    ///    chunk of what the budget leaves. If the KV cache cannot hold them, the most recently
    ///    admitted running request is preempted (freed, reset, back to the front of the queue).
    /// 2. Only if nothing was preempted, waiting requests are admitted FCFS while there are
    ///    seats, budget and KV blocks; without chunked prefill a prompt must fit whole (else
    ///    admission stops: head-of-line blocking).
    ///
    /// The cohort's members come first in running order and take one token each; their new KV
    /// blocks are counted at once. Only if those do not fit is the cohort dissolved and the step
    /// formed request by request.
    pub fn form_step(&mut self, now_s: f64, plan: &mut StepPlan) {
        plan.scheduled.clear();
        plan.decoders = 0;
        plan.tokens = 0;
        plan.context = 0;
        plan.admitted = 0;
        plan.preempted = 0;
        let mut budget = self.engine.max_num_batched_tokens;
        let n = self.cohort.n;
        if n > 0 {
            let need = self.cohort.crossings_at(self.cohort.d);
            if need > self.kv_free() || n > u64::from(budget) || self.running.len() <= COHORT_MIN_RUNNING {
                self.dissolve(now_s);
            } else {
                self.kv_used += need;
                budget -= n as u32;
                plan.decoders = n;
                plan.tokens += n;
                plan.context += (self.cohort.ctx_base + (n * self.cohort.d) as i64) as u64;
            }
        }
        let mut all_decode = true;
        let mut i = 0;
        'running: while i < self.explicit.len() {
            let slot = self.explicit[i];
            let (computed, remaining, blocks) = {
                let r = &self.slots[slot as usize];
                (r.computed, r.remaining(), r.blocks)
            };
            let n = remaining.min(budget);
            if n == 0 {
                // Budget spent: only a prefilling request, last in line, can be left out.
                all_decode = false;
                i += 1;
                continue;
            }
            // Most steps stay inside the request's last block: skip the division then.
            let need = if computed + n <= blocks * self.engine.block_size_tokens {
                0
            } else {
                (self.blocks_for(computed + n) - blocks) as u64
            };
            while need > self.kv_free() {
                let (_, victim) = self.running.pop_last().expect("the request being scheduled is running");
                debug_assert_eq!(
                    self.explicit.last(),
                    Some(&victim),
                    "the newest running request is outside the cohort"
                );
                self.explicit.pop();
                self.preempt(victim);
                plan.preempted += 1;
                if victim == slot {
                    break 'running;
                }
            }
            let r = &mut self.slots[slot as usize];
            all_decode &= r.is_decoding();
            r.blocks += need as u32;
            self.kv_used += need;
            budget -= n;
            plan.tokens += n as u64;
            plan.context += computed as u64;
            plan.scheduled.push(Scheduled { slot, tokens: n });
            i += 1;
        }

        if plan.preempted == 0 {
            while self.running.len() < self.engine.max_num_seqs as usize && budget > 0 {
                let Some(&slot) = self.waiting.front() else {
                    break;
                };
                let remaining = self.slots[slot as usize].remaining();
                let n = if self.engine.chunked_prefill {
                    remaining.min(budget)
                } else if remaining <= budget {
                    remaining
                } else {
                    break;
                };
                let need = self.blocks_for(n) as u64;
                if need > self.kv_free() {
                    break;
                }
                self.waiting.pop_front();
                let seq = self.next_seq;
                self.next_seq += 1;
                let r = &mut self.slots[slot as usize];
                r.blocks = need as u32;
                r.seq = seq;
                if r.first_scheduled_s.is_nan() {
                    r.first_scheduled_s = now_s;
                }
                self.kv_used += need;
                budget -= n;
                plan.tokens += n as u64;
                plan.scheduled.push(Scheduled { slot, tokens: n });
                plan.admitted += 1;
                self.slots[slot as usize].running_at = self.running.push(seq, slot);
                self.explicit.push(slot);
            }
        }
        plan.pure_decode = all_decode
            && plan.admitted == 0
            && plan.preempted == 0
            && plan.seqs() > 0
            && plan.seqs() == self.running.len() as u64;
    }

    /// Recompute preemption: free the KV, forget the progress, keep the emitted tokens, and put
    /// the request at the front of the queue.
    fn preempt(&mut self, slot: u32) {
        let r = &mut self.slots[slot as usize];
        self.kv_used -= r.blocks as u64;
        r.blocks = 0;
        r.computed = 0;
        self.waiting.push_front(slot);
    }
}
