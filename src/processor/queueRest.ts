/**
 * Resting queues that fail on a Redis Cluster. A queue whose shard is down (its master died and a
 * failover is under way) fails each dequeue only after the cluster client has tried for about a
 * second; visited by every fetch, it would hold up the tasks of every healthy queue for as long as
 * the failover lasts. So a queue that failed in a fetch (or whose task's outcome write failed:
 * writesAside.ts) rests: the fetches leave it out, and a
 * probe in the background (one cheap read on its slot: the earliest lease) asks after it, 250 ms
 * later and then up to 2 s apart, until it answers; then the fetches take it again. When every
 * queue of a fetch rests, the fetch visits them all (its own back-off applies).
 * Only on a Cluster: on a single node a failing queue fails at once (e.g. a key of the wrong type)
 * and the fetch visits it as before.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Broker } from "../broker/Broker.js"
import { earliestLeaseExpirySec } from "../broker/earliestLease.js"
import type { QueueFailure } from "../steps/queueFailures.js"

export const firstProbeMs = 250
export const maxProbeGapMs = 2000

export interface QueueRest {
  /** `order` without the resting queues; all of `order` when every queue in it rests. */
  readonly usable: (order: ReadonlyArray<string>) => ReadonlyArray<string>
  /** Rests the queues that failed in a fetch; each is probed in the background (in the scope) until it answers. */
  readonly failed: (failures: ReadonlyArray<QueueFailure>) => Effect.Effect<void, never, Broker | Scope.Scope>
}

export const makeQueueRest = (): QueueRest => {
  const resting = new Set<string>()

  const probe = (queue: string) =>
    Effect.gen(function* () {
      let gapMs = firstProbeMs
      for (;;) {
        yield* Effect.sleep(gapMs)
        const answered = yield* earliestLeaseExpirySec(queue).pipe(
          Effect.as(true),
          Effect.catch(() => Effect.succeed(false))
        )
        if (answered) break
        gapMs = Math.min(gapMs * 2, maxProbeGapMs)
      }
      resting.delete(queue)
      yield* Effect.logInfo(`queue "${queue}" answers again: fetching from it again`)
    })

  return {
    usable: (order) => {
      if (resting.size === 0) return order
      const left = order.filter((q) => !resting.has(q))
      return left.length > 0 ? left : order
    },
    failed: (failures) =>
      Effect.forEach(
        failures,
        ({ queue }) => {
          if (resting.has(queue)) return Effect.void
          resting.add(queue)
          return Effect.logWarning(`queue "${queue}" failed; the fetches leave it out until it answers again`).pipe(
            Effect.andThen(Effect.forkScoped(probe(queue)))
          )
        },
        { discard: true }
      )
  }
}
