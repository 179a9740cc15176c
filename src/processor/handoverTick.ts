/**
 * The hand-over tick of a worker that parks (parking.ts), every `handoverTickMs` from this process's
 * event loop: first it tells the parking state it ran (a tick overdue by more than the liveness
 * mark's lifetime means this worker was stalled); then, for each queue it serves, one call renews
 * its liveness mark (an enqueue hands this worker tasks only while the mark exists) and confirms
 * the hand-overs received since the last tick (those it runs get its own lease; the registry
 * learns their new expiry), and one call gives back to pending the queue's hand-overs, to any
 * worker, that nobody confirmed in time (lua/reclaimHandovers.lua), waking the idle workers when
 * some went back. A failed call is logged (a warning for the first of a run of failures, then
 * debug lines) and tried again at the next tick; hand-overs it was to confirm are kept for it.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { Broker } from "../broker/Broker.js"
import { confirmHandoversScript, reclaimHandoversScript } from "../broker/handovers.js"
import { runScript } from "../broker/script.js"
import { unixSeconds } from "../broker/time.js"
import { publishWake } from "../broker/wake.js"
import type { RedisError } from "../redis/errors.js"
import { handoverTickMs, livenessMarkTtlMs, type ParkingState } from "./parking.js"
import type { Registry } from "./registry.js"

/** Most unconfirmed hand-overs one tick gives back per queue (the rest at the next tick). */
const reclaimBatch = 1000

export interface HandoverTickDeps {
  readonly server: string
  readonly queues: ReadonlyArray<string>
  readonly parking: ParkingState
  readonly registry: Registry
  readonly leaseMs: number
}

/** Whether the last call failed (the next failure is then logged at debug level only). */
const failureLog = () => {
  let failing = false
  return {
    ok: () => void (failing = false),
    failed: (what: string, e: RedisError) => {
      const log = failing ? Effect.logDebug : Effect.logWarning
      failing = true
      return log(`${what} failed (tried again in ${handoverTickMs} ms): ${e.message}`)
    }
  }
}

/** One tick: the stall check, then per queue the confirmation and the reclaim (queues at once). */
export const handoverTickOnce = (deps: HandoverTickDeps, log = failureLog()): Effect.Effect<void, never, Broker> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    deps.parking.alive(now)
    const received = deps.parking.takeReceived()
    const leaseExpiresAtSec = unixSeconds(now + deps.leaseMs)
    const confirm = (queue: string) => {
      const got = received.get(queue) ?? []
      return runScript(confirmHandoversScript, {
        queue,
        server: deps.server,
        markTtlMs: livenessMarkTtlMs,
        leaseExpiresAtSec,
        received: got
      }).pipe(
        Effect.tap((held) =>
          Effect.sync(() => {
            log.ok()
            if (held.length === 0) return
            const ids = new Set(held)
            for (const t of deps.registry.byQueue().get(queue) ?? []) {
              if (ids.has(t.msg.id)) t.leaseExpiresAtMs = Math.max(t.leaseExpiresAtMs, leaseExpiresAtSec * 1000)
            }
          })
        ),
        Effect.catch((e) =>
          Effect.andThen(
            Effect.sync(() => deps.parking.keepReceived(queue, got)),
            log.failed(`confirming hand-overs in queue "${queue}"`, e)
          )
        )
      )
    }
    const reclaim = (queue: string) =>
      runScript(reclaimHandoversScript, { queue, nowMs: now, max: reclaimBatch }).pipe(
        Effect.flatMap((n) =>
          n === 0
            ? Effect.void
            : Effect.andThen(
                Effect.logWarning(
                  `queue "${queue}": ${n} task(s) handed to a worker that did not confirm them in time (stalled or gone) went back to pending`
                ),
                publishWake([queue]).pipe(Effect.ignore)
              )
        ),
        Effect.catch((e) => log.failed(`giving back unconfirmed hand-overs in queue "${queue}"`, e))
      )
    return Effect.forEach(deps.queues, (queue) => Effect.andThen(confirm(queue), reclaim(queue)), {
      concurrency: "unbounded",
      discard: true
    })
  })

/** The tick, forever: a run at once, then one every `handoverTickMs`. */
export const handoverTickLoop = (deps: HandoverTickDeps): Effect.Effect<never, never, Broker> => {
  const log = failureLog()
  return handoverTickOnce(deps, log).pipe(Effect.andThen(Effect.sleep(Duration.millis(handoverTickMs))), Effect.forever)
}
