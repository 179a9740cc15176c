/**
 * Queues this process has added to `asynq:queues` recently, so enqueue can skip that SADD (asynq
 * does the same with its `queuesPublished` map). Unlike asynq's, an entry is only trusted for
 * `refreshMs` (default 60 s): when an operator deletes a queue while this process keeps enqueuing
 * to it, the queue is listed again within that time instead of never.
 */
export class KnownQueues {
  private readonly seen = new Map<string, number>()
  constructor(readonly refreshMs: number = 60_000) {}
  /** Whether `queue` was registered less than `refreshMs` before `nowMs`. */
  has(queue: string, nowMs: number): boolean {
    const at = this.seen.get(queue)
    return at !== undefined && nowMs - at < this.refreshMs && nowMs >= at
  }
  add(queue: string, nowMs: number): void {
    this.seen.set(queue, nowMs)
  }
  /** Forget a queue (it was deleted here). */
  delete(queue: string): void {
    this.seen.delete(queue)
  }
}
