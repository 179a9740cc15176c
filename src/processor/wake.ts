/**
 * Wake-up across processes. A worker that found its queues empty waits on a local Signal, raised
 * when a message arrives on the pub/sub channel {@link wakeChannel} (payload: the queue name) or
 * when `pollIntervalMs` passes (the bounded fallback for tasks pushed by Go asynq clients, which do
 * not publish). lua/enqueue.lua publishes when it makes a queue's pending list go from empty to
 * non-empty (LPUSH returned 1): edge-triggered, so a busy queue costs no messages, and no waiter
 * misses work, because a worker only waits after a fetch that saw its queues empty.
 */
import { wakeChannel } from "../wire/keys.js"

export { wakeChannel }

/**
 * Publishes a wake-up for each queue. For code paths that make tasks pending without the enqueue
 * script's own signal (forwarding, aggregation). Returns how many subscribers heard it.
 */
export { publishWake } from "../broker/wake.js"
