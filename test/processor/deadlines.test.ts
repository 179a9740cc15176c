import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { makeDeadlines } from "../../src/processor/deadlines.js"

it.effect(
  "one timer fires each deadline at its time on the Clock, an earlier one added later included; a removed one never fires",
  () =>
    Effect.scoped(
      Effect.gen(function* () {
        const fired: Array<string> = []
        const deadlines = yield* makeDeadlines
        deadlines.add(5_000, () => fired.push("5s"))
        const removed = deadlines.add(3_000, () => fired.push("3s (removed)"))
        yield* TestClock.adjust("1 second")
        deadlines.add(2_000, () => fired.push("2s (added later, earlier)"))
        removed()
        yield* TestClock.adjust("500 millis")
        expect(fired).toEqual([])
        yield* TestClock.adjust("500 millis")
        expect(fired).toEqual(["2s (added later, earlier)"])
        yield* TestClock.adjust("2 seconds")
        expect(fired).toEqual(["2s (added later, earlier)"])
        yield* TestClock.adjust("1 second")
        expect(fired).toEqual(["2s (added later, earlier)", "5s"])
        // A deadline already past fires at once.
        deadlines.add(1_000, () => fired.push("past"))
        yield* Effect.yieldNow
        yield* TestClock.adjust("1 millis")
        expect(fired).toEqual(["2s (added later, earlier)", "5s", "past"])
      })
    )
)
