/**
 * Lease heartbeat: every `heartbeatIntervalMs`, extends the leases of the tasks running here (one
 * call per queue). A task whose lease is reported lost (recovered elsewhere, or deleted) is
 * stopped; so is one whose lease ran out by our own clock because the extensions kept failing
 * (the recoverer may hand it to someone else any moment).
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { Broker } from "../broker/Broker.js"
import { extendLease } from "../steps/extendLease.js"
import type { Observer } from "./observer.js"
import type { Registry } from "./registry.js"

/** One heartbeat: extend every running task's lease, stop the lost ones. Returns the ids stopped. */
export const extendLeasesOnce = Effect.fn("Processor.extendLeases")(function* (
  registry: Registry,
  leaseMs: number,
  observer?: Observer
) {
  const stopped: Array<string> = []
  for (const [queue, entries] of registry.byQueue()) {
    const r = yield* extendLease({ queue, ids: entries.map((e) => e.msg.id), leaseMs }).pipe(
      Effect.tapError((e) => Effect.logWarning(`extending leases in queue "${queue}" failed: ${e.message}`)),
      Effect.option
    )
    if (r._tag === "Some") {
      observer?.leasesExtended(queue, r.value.extended.length)
      const held = new Set(r.value.extended)
      for (const e of entries)
        if (held.has(e.msg.id)) e.leaseExpiresAtMs = Math.max(e.leaseExpiresAtMs, r.value.expiresAtMs)
      for (const id of r.value.lost) if (registry.stop(id, "lease-lost", queue)) stopped.push(id)
    }
  }
  const now = yield* Clock.currentTimeMillis
  for (const e of registry.tasks.values()) {
    if (e.leaseExpiresAtMs <= now && registry.stopTask(e, "lease-lost")) stopped.push(e.msg.id)
  }
  return stopped
})

export const heartbeatLoop = (
  registry: Registry,
  leaseMs: number,
  intervalMs: number,
  observer?: Observer
): Effect.Effect<never, never, Broker> =>
  Effect.sleep(Duration.millis(intervalMs)).pipe(
    Effect.andThen(extendLeasesOnce(registry, leaseMs, observer)),
    Effect.ignore,
    Effect.forever
  )
