/**
 * The order in which a fetch visits the queues. Strict: by priority, highest first. Weighted
 * (asynq's default): each queue appears `priority` times in a list, the list is shuffled, and the
 * first appearance of each queue gives the order; so with {critical: 6, default: 3, low: 1} and
 * all queues non-empty, "critical" comes first 60% of the time.
 */
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"

export type QueueWeights = Readonly<Record<string, number>>

/** Queues by priority, highest first (ties by name, for a stable order). */
export const strictOrder = (queues: QueueWeights): ReadonlyArray<string> =>
  Object.keys(queues).sort((a, b) => queues[b]! - queues[a]! || (a < b ? -1 : a > b ? 1 : 0))

/** One weighted-random order (randomness from Effect's Random, so tests can seed it). */
export const weightedOrder = (queues: QueueWeights): Effect.Effect<ReadonlyArray<string>> => {
  const names = Object.keys(queues)
  if (names.length <= 1) return Effect.succeed(names)
  const slots: Array<string> = []
  for (const q of names) for (let i = 0; i < queues[q]!; i++) slots.push(q)
  return Effect.map(Random.shuffle(slots), (shuffled) => [...new Set(shuffled)])
}

/** The order function a fetcher calls before each fetch (a fixed order is computed once per queues object). */
export const queueOrder = (queues: QueueWeights, strict: boolean): Effect.Effect<ReadonlyArray<string>> => {
  if (strict || Object.keys(queues).length <= 1) {
    let fixed = fixedOrders.get(queues)
    if (fixed === undefined) {
      fixed = Effect.succeed(strictOrder(queues))
      fixedOrders.set(queues, fixed)
    }
    return fixed
  }
  return weightedOrder(queues)
}

const fixedOrders = new WeakMap<QueueWeights, Effect.Effect<ReadonlyArray<string>>>()
