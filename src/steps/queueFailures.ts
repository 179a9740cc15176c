/**
 * Per-queue isolation for the steps that visit many queues (dequeueLease, forward, recover,
 * janitor; the aggregate pass): one queue's error (Redis refuses its keys, its cluster shard is
 * unreachable) is recorded for that queue and the step goes on with the others. The step fails
 * as a whole only when every queue it visited failed (e.g. Redis is down), with the first error,
 * so a caller that retries on failure (the fetch loop's back-off) still sees an outage.
 */
import * as Effect from "effect/Effect"

/** A queue a multi-queue step could not serve in this call; the other queues went on. */
export interface QueueFailure {
  readonly queue: string
  /** What went wrong, as the error said it. */
  readonly error: string
}

/** The failures of one step call, queue by queue, and the errors behind them. */
export interface QueueFailures<E> {
  /** One entry per failed queue visit, in visiting order. */
  readonly failedQueues: Array<QueueFailure>
  /**
   * Runs one queue's part of the step: its failure is recorded for `queue` and the part yields
   * undefined instead (what it did before failing stays done).
   */
  readonly isolate: <A, R>(queue: string, part: Effect.Effect<A, E, R>) => Effect.Effect<A | undefined, never, R>
  /** Records a failure for `queue` (a part that goes on after it, e.g. the other tasks of that queue). */
  readonly record: (queue: string, error: E) => void
  /** Fails with the first recorded error when every one of `visited` failed; succeeds otherwise. */
  readonly unlessAllFailed: (visited: ReadonlyArray<string>) => Effect.Effect<void, E>
}

export const queueFailures = <E extends { readonly message: string }>(): QueueFailures<E> => {
  const failedQueues: Array<QueueFailure> = []
  const errors: Array<E> = []
  const record = (queue: string, error: E) => {
    failedQueues.push({ queue, error: error.message })
    errors.push(error)
  }
  return {
    failedQueues,
    record,
    isolate: (queue, part) =>
      Effect.catch(part, (error) =>
        Effect.sync(() => {
          record(queue, error)
          return undefined
        })
      ),
    unlessAllFailed: (visited) => {
      if (errors.length === 0) return Effect.void
      const failed = new Set(failedQueues.map((f) => f.queue))
      return visited.every((q) => failed.has(q)) ? Effect.fail(errors[0]!) : Effect.void
    }
  }
}
