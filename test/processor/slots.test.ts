/**
 * The intake's slots (src/processor/intake/slots.ts): which source may feed a free slot. The fetch
 * loop fetches for the free slots; a ride goes only while the loop runs and is not idle, for the
 * slots its batch's completions free; a hand-over starts from the receiver only while the loop
 * waits idle with a slot free; waiting hand-overs start on free slots, wait while a ride holds
 * slots, else go back. End to end: ride.test.ts, parking.test.ts, idle.test.ts.
 */
import { describe, expect, it } from "vitest"
import {
  fetchWant,
  freedSignal,
  makeSlots,
  pushDecider,
  rideWant,
  startsDirect
} from "../../src/processor/intake/slots.js"
import { makeRegistry } from "../../src/processor/registry.js"
import { makeActiveTask } from "../../src/processor/runAttempt.js"
import { makeSignal } from "../../src/processor/Signal.js"
import { makeWritesAside } from "../../src/processor/writesAside.js"
import { baseNowMs, makeMsg } from "../support/arrange.js"

const running = (registry: ReturnType<typeof makeRegistry>, n: number) => {
  const tasks = Array.from({ length: n }, (_, i) =>
    makeActiveTask(makeMsg("slots", `t${registry.tasks.size + i}`), baseNowMs, baseNowMs + 30_000)
  )
  for (const t of tasks) registry.add(t)
  return tasks
}

describe("intake slots", () => {
  it("a slot is free unless a task runs in it, a ride reserved it or the loop's fetch holds it; a task whose write was set aside gives its slot back", () => {
    const registry = makeRegistry()
    const aside = makeWritesAside(
      registry,
      10,
      () => {},
      () => {}
    )
    const slots = makeSlots(10, registry, aside)
    const [first] = running(registry, 3)
    slots.reserved = 2
    slots.fetching = 1
    expect(slots.free()).toBe(4)
    expect(fetchWant(slots, 3)).toBe(3)
    expect(fetchWant(slots, 50)).toBe(4)
    aside.watch(first!)
    first!.onWriteFailed!()
    expect(slots.free()).toBe(5)
  })

  it("a ride goes only while the loop takes tasks and is not idle, for the slots free once its completions land (at most a fetch batch)", () => {
    const registry = makeRegistry()
    const slots = makeSlots(10, registry, undefined)
    running(registry, 10)
    expect(rideWant(slots, 2, 50)).toBe(0)
    slots.taking = true
    expect(rideWant(slots, 2, 50)).toBe(2)
    expect(rideWant(slots, 8, 5)).toBe(5)
    slots.idle = true
    expect(rideWant(slots, 2, 50)).toBe(0)
  })

  it("a hand-over starts from the receiver only while the loop waits idle with a slot free", () => {
    const registry = makeRegistry()
    const slots = makeSlots(1, registry, undefined)
    expect(startsDirect(slots)).toBe(false)
    slots.idle = true
    expect(startsDirect(slots)).toBe(true)
    running(registry, 1)
    expect(startsDirect(slots)).toBe(false)
  })

  it("waiting hand-overs start on the free slots, then wait while a ride holds slots, else go back", () => {
    const registry = makeRegistry()
    const slots = makeSlots(3, registry, undefined)
    running(registry, 1)
    const decide = pushDecider(slots)
    expect([decide(), decide()]).toEqual(["start", "start"])
    expect(decide()).toBe("giveBack")
    slots.reserved = 1
    const next = pushDecider(slots)
    expect([next(), next(), next()]).toEqual(["start", "wait", "wait"])
  })

  it("an ending attempt wakes the loop only when it leaves a slot no ride took", () => {
    const registry = makeRegistry()
    const slots = makeSlots(2, registry, undefined)
    const loopSignal = makeSignal()
    let raised = 0
    const freed = freedSignal(slots, { ...loopSignal, raise: () => void raised++ })
    const [a] = running(registry, 2)
    registry.remove(a!)
    slots.reserved = 1
    freed.raise()
    expect(raised).toBe(0)
    slots.reserved = 0
    freed.raise()
    expect(raised).toBe(1)
  })
})
