//! The replica's state and its scheduler: running and waiting requests, the KV cache, and how
//! one step is formed (vLLM V1's policy, see design.md "Engine semantics").

use std::collections::VecDeque;

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
    /// Requests in the step with their token counts, in running order.
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

/// The replica: request slots, the running batch, the waiting queue and the KV cache.
#[derive(Clone, Debug)]
pub struct Batch {
    /// Request storage; `free` lists unused slots.
    pub slots: Vec<Request>,
    free: Vec<u32>,
    /// Running requests in admission order.
    pub running: Vec<u32>,
    /// Waiting requests, FCFS (preempted requests go back to the front).
    pub waiting: VecDeque<u32>,
    /// KV blocks in use.
    pub kv_used: u64,
    engine: Engine,
}

impl Batch {
    /// An empty replica.
    pub fn new(engine: Engine) -> Self {
        Batch { slots: Vec::new(), free: Vec::new(), running: Vec::new(), waiting: VecDeque::new(), kv_used: 0, engine }
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

    /// Frees a finished request's KV blocks and slot.
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

    /// Forms the next step at time `now_s` into `plan`.
    ///
    /// 1. Running requests in admission order take their tokens: one to decode, or a prefill
    ///    chunk of what the budget leaves. If the KV cache cannot hold them, the most recently
    ///    admitted running request is preempted (freed, reset, back to the front of the queue).
    /// 2. Only if nothing was preempted, waiting requests are admitted FCFS while there are
    ///    seats, budget and KV blocks; without chunked prefill a prompt must fit whole (else
    ///    admission stops: head-of-line blocking).
    pub fn form_step(&mut self, now_s: f64, plan: &mut StepPlan) {
        plan.scheduled.clear();
        plan.tokens = 0;
        plan.context = 0;
        plan.admitted = 0;
        plan.preempted = 0;
        let mut budget = self.engine.max_num_batched_tokens;
        let mut all_decode = true;
        let mut i = 0;
        'running: while i < self.running.len() {
            let slot = self.running[i];
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
                let victim = self.running.pop().expect("the request being scheduled is running");
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
                let r = &mut self.slots[slot as usize];
                r.blocks = need as u32;
                if r.first_scheduled_s.is_nan() {
                    r.first_scheduled_s = now_s;
                }
                self.kv_used += need;
                budget -= n;
                plan.tokens += n as u64;
                plan.scheduled.push(Scheduled { slot, tokens: n });
                plan.admitted += 1;
                self.running.push(slot);
            }
        }
        plan.pure_decode = all_decode
            && plan.admitted == 0
            && plan.preempted == 0
            && !plan.scheduled.is_empty()
            && plan.scheduled.len() == self.running.len();
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
