import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { checkGroupsScript, listGroups } from "../broker/aggregate.js"
import { bindScript, runScripts } from "../broker/script.js"
import { unixSeconds } from "../broker/time.js"
import { durationAtLeast, wholeAtLeast } from "./validate.js"

/** Settings of a group check: when a group is ready (grace period, max delay, max size) and how many groups to look at. */
export interface CheckGroupsOptions {
  readonly queue: string
  /** A group is ready when its newest task is at least this old. */
  readonly gracePeriodMs: number
  /** ... or its oldest task is at least this old (0 = no limit). */
  readonly maxDelayMs: number
  /** ... or it holds this many tasks (0 = no limit); a set takes at most this many. */
  readonly maxSize: number
  /**
   * Check at most this many groups per call, drawn at random (default: every group). Bounds the
   * work of one call on a queue with very many groups; successive calls reach them all.
   */
  readonly maxGroups?: number
  /** The aggregating process must finish (read + delete the set) within this, or the set is reclaimed (default 2 min, asynq's). */
  readonly aggregationTimeoutMs?: number
}

/** An aggregation set a group check created: its group, id and size. */
export interface AggregationSetRef {
  readonly group: string
  readonly setId: string
  /** Tasks moved into the set. */
  readonly size: number
}

/**
 * asynq's aggregation check over every group of a queue (one round trip for all groups): each
 * ready group's oldest tasks (up to maxSize) move into a new aggregation set to be read,
 * aggregated into one task, and deleted.
 */
export const checkGroups = Effect.fn("Steps.checkGroups")(function* (options: CheckGroupsOptions) {
  const grace = yield* durationAtLeast("gracePeriodMs", options.gracePeriodMs, 0)
  const maxDelay = yield* durationAtLeast("maxDelayMs", options.maxDelayMs, 0)
  const maxSize = yield* wholeAtLeast("maxSize", options.maxSize, 0)
  const timeout = yield* durationAtLeast("aggregationTimeoutMs", options.aggregationTimeoutMs ?? 120_000, 1000)
  const now = yield* Clock.currentTimeMillis
  const maxGroups = options.maxGroups === undefined ? undefined : yield* wholeAtLeast("maxGroups", options.maxGroups, 1)
  const groups = yield* listGroups(options.queue, maxGroups)
  const checks = groups.map((group) => ({ group, setId: globalThis.crypto.randomUUID() }))
  const rule = {
    maxSize,
    maxDelaySec: unixSeconds(maxDelay),
    gracePeriodSec: unixSeconds(grace),
    deadlineSec: unixSeconds(now + timeout)
  }
  const outcomes = yield* runScripts(
    checks.map((c) =>
      bindScript(checkGroupsScript, { queue: options.queue, group: c.group, setId: c.setId, rule, nowMs: now })
    )
  )
  const sizes: Array<number> = []
  for (const o of outcomes) sizes.push(yield* Effect.fromResult(o))
  const sets: Array<AggregationSetRef> = []
  checks.forEach((c, i) => {
    if (sizes[i]! > 0) sets.push({ ...c, size: sizes[i]! })
  })
  return { sets } as { readonly sets: ReadonlyArray<AggregationSetRef> }
})
