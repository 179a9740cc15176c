import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { readDailyStats } from "../broker/queueInfo.js"
import { InvalidArgument } from "./errors.js"
import { requireQueue } from "../broker/queues.js"
import type { DailyStats } from "./types.js"

const dayMs = 24 * 60 * 60 * 1000

/** Processed/failed counts of the last `days` days, today first (asynq's History). */
export const history = Effect.fn("Inspector.history")(function* (queue: string, days: number) {
  if (!Number.isInteger(days) || days < 1 || days > 90) {
    return yield* new InvalidArgument({
      field: "days",
      message: `days must be a whole number from 1 to 90 (asynq keeps daily stats for 90 days), got ${days}`
    })
  }
  yield* requireQueue(queue)
  const now = yield* Clock.currentTimeMillis
  const times = Array.from({ length: days }, (_, i) => now - i * dayMs)
  const counts = yield* readDailyStats(queue, times)
  return times.map(
    (t, i): DailyStats => ({
      queue,
      processed: counts[i]!.processed,
      failed: counts[i]!.failed,
      date: new Date(Math.floor(t / dayMs) * dayMs)
    })
  )
})
