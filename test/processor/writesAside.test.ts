/**
 * writesAside (src/processor/writesAside.ts): on a Cluster, a task whose outcome write failed gives
 * its slot back while the write is retried; at most `max` at once; a task leaves the count when
 * its attempt is over (it left the registry). The Cluster end to end: test/redis/cluster-ack-lanes.test.ts.
 */
import { describe, expect, it } from "vitest"
import { makeRegistry } from "../../src/processor/registry.js"
import { makeActiveTask } from "../../src/processor/runAttempt.js"
import { makeWritesAside } from "../../src/processor/writesAside.js"
import { baseNowMs, makeMsg } from "../support/arrange.js"

const setUp = (max: number) => {
  const registry = makeRegistry()
  const failedQueues: Array<string> = []
  let freed = 0
  const aside = makeWritesAside(
    registry,
    max,
    (task) => void failedQueues.push(task.msg.queue),
    () => void freed++
  )
  const start = (queue: string, id: string) => {
    const task = makeActiveTask(makeMsg(queue, id), baseNowMs, baseNowMs + 30_000)
    aside.watch(task)
    registry.add(task)
    return task
  }
  return { registry, aside, failedQueues, freed: () => freed, start }
}

describe("writesAside", () => {
  it("a task whose write failed gives its slot back once, until its attempt is over", () => {
    const { registry, aside, failedQueues, freed, start } = setUp(10)
    const a = start("down", "a")
    start("up", "b")
    expect(aside.count()).toBe(0)
    a.onWriteFailed!()
    expect(aside.count()).toBe(1)
    expect(freed()).toBe(1)
    expect(failedQueues).toEqual(["down"])
    // Told once (settle.ts clears the hook); the task leaving the registry takes its place back out of the count.
    registry.remove(a)
    expect(aside.count()).toBe(0)
  })

  it("at most `max` tasks are set aside; their queue is still reported", () => {
    const { aside, failedQueues, freed, start } = setUp(2)
    const tasks = ["a", "b", "c"].map((id) => start("down", id))
    for (const t of tasks) t.onWriteFailed!()
    expect(aside.count()).toBe(2)
    expect(freed()).toBe(2)
    expect(failedQueues).toEqual(["down", "down", "down"])
  })

  it("a task no longer in the registry is not set aside", () => {
    const { registry, aside, freed, start } = setUp(10)
    const a = start("down", "a")
    registry.remove(a)
    a.onWriteFailed!()
    expect(aside.count()).toBe(0)
    expect(freed()).toBe(0)
  })
})
