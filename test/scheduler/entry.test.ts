import { describe, expect, it } from "vitest"
import { Result } from "effect"
import { makeEntry } from "../../src/scheduler/entry.js"
import { loadSnapshot } from "../support/asynqLayout.js"

const ok = (...a: Parameters<typeof makeEntry>) => {
  const r = makeEntry(...a)
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

describe("entries", () => {
  it("ids are the same wherever the same entry is registered, and differ when anything differs", () => {
    const a = ok({
      spec: "*/5 * * * *",
      type: "report",
      payload: { x: 1 },
      options: { queue: "low", unique: 3_600_000 }
    })
    const b = ok({
      spec: " */5 * * * * ",
      type: "report",
      payload: { x: 1 },
      options: { unique: 3_600_000, queue: "low" }
    })
    expect(b.id).toBe(a.id)
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const others = [
      ok({ spec: "*/5 * * * *", type: "report", payload: { x: 2 }, options: { queue: "low", unique: 3_600_000 } }),
      ok({ spec: "*/5 * * * *", type: "report2", payload: { x: 1 }, options: { queue: "low", unique: 3_600_000 } }),
      ok({ spec: "*/5 * * * *", type: "report", payload: { x: 1 }, options: { queue: "low" } }),
      ok({
        spec: "*/5 * * * *",
        type: "report",
        payload: { x: 1 },
        options: { queue: "low", unique: 3_600_000 },
        timeZone: "Europe/Berlin"
      }),
      ok(
        { spec: "*/5 * * * *", type: "report", payload: { x: 1 }, options: { queue: "low", unique: 3_600_000 } },
        "Asia/Tokyo"
      )
    ]
    expect(new Set([a.id, ...others.map((o) => o.id)]).size).toBe(6)
    // the zone does not matter to @every, so it does not change the id
    expect(ok({ spec: "@every 1m", type: "t" }, "Asia/Tokyo").id).toBe(ok({ spec: "@every 1m", type: "t" }).id)
    expect(ok({ spec: "@daily", type: "t", id: "nightly" }).id).toBe("nightly")
  })

  it("publishes options in Go's Option.String() form, as in asynq's i-scheduler capture", () => {
    const snap = loadSnapshot("i-scheduler")
    const list = snap.keys[Object.keys(snap.keys).find((k) => k.startsWith("asynq:schedulers:{"))!] as unknown as {
      value_decoded: Array<{ enqueue_options: Array<string> }>
    }
    const every = ok({
      spec: "@every 30s",
      type: "sched:ping",
      payload: '{"src":"every30s"}',
      options: { queue: "default", maxRetry: 3, timeout: 30 * 60_000 }
    })
    const report = ok({ spec: "*/5 * * * *", type: "sched:report", options: { queue: "low", unique: 3_600_000 } })
    expect(every.optionStrings).toEqual(list.value_decoded[0]!.enqueue_options)
    expect(report.optionStrings).toEqual(list.value_decoded[1]!.enqueue_options)
    expect(report.payload).toBeUndefined()
    const all = ok({
      spec: "@daily",
      type: "t",
      options: {
        processIn: 600_000,
        deadline: new Date("2030-01-01T00:00:00Z"),
        retention: 86_400_000,
        group: "g1",
        taskId: "fixed-id",
        headers: { k: "v", a: "b" }
      }
    })
    expect(all.optionStrings).toEqual([
      "ProcessIn(10m0s)",
      "Deadline(Tue Jan  1 00:00:00 UTC 2030)",
      "Retention(24h0m0s)",
      'Group("g1")',
      'TaskID("fixed-id")',
      'Header(["a","b"])',
      'Header(["k","v"])'
    ])
  })

  it("rejects bad options, payloads and ids at registration", () => {
    const fail = (c: Parameters<typeof makeEntry>[0]) => {
      const r = makeEntry(c)
      if (Result.isSuccess(r)) throw new Error("expected a failure")
      return r.failure
    }
    expect(fail({ spec: "@daily", type: "" })).toMatchObject({ _tag: "InvalidArgument", field: "type" })
    expect(fail({ spec: "@daily", type: "t", options: { queue: "a{b}" } })).toMatchObject({
      _tag: "InvalidArgument",
      field: "queue"
    })
    expect(fail({ spec: "@daily", type: "t", options: { retries: 3 } as never })).toMatchObject({
      _tag: "InvalidArgument",
      field: "retries"
    })
    expect(fail({ spec: "@daily", type: "t", payload: () => 1 })).toMatchObject({
      _tag: "InvalidArgument",
      field: "payload"
    })
    expect(fail({ spec: "@daily", type: "t", id: "has space" })).toMatchObject({ _tag: "InvalidArgument", field: "id" })
  })
})
