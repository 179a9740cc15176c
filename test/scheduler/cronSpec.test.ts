import { describe, expect, it } from "vitest"
import { Result } from "effect"
import { dueBetween, nextAfter, parseSchedule, type Schedule } from "../../src/scheduler/cronSpec.js"

const ok = (spec: string, tz?: string): Schedule => {
  const r = parseSchedule(spec, tz)
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}
const err = (spec: string, tz?: string) => {
  const r = parseSchedule(spec, tz)
  if (Result.isSuccess(r)) throw new Error(`expected ${spec} to be rejected`)
  return r.failure
}
const at = (iso: string) => Date.parse(iso)
const iso = (ms: number) => new Date(ms).toISOString()
/** The next `n` occurrences after `from`. */
const nexts = (s: Schedule, from: string, n: number) => {
  const out: Array<string> = []
  let t = at(from)
  for (let i = 0; i < n; i++) out.push(iso((t = nextAfter(s, t))))
  return out
}

describe("next run in time zones", () => {
  it("0 9 * * * in UTC, Asia/Kolkata (+05:30) and America/New_York", () => {
    expect(nexts(ok("0 9 * * *"), "2026-11-22T10:02:30Z", 1)).toEqual(["2026-11-23T09:00:00.000Z"])
    expect(nexts(ok("0 9 * * *", "Asia/Kolkata"), "2026-11-22T10:02:30Z", 1)).toEqual(["2026-11-23T03:30:00.000Z"])
    expect(nexts(ok("0 9 * * *", "America/New_York"), "2026-11-22T10:02:30Z", 1)).toEqual(["2026-11-22T14:00:00.000Z"])
  })

  it("CRON_TZ= / TZ= prefix overrides the zone option", () => {
    const s = ok("CRON_TZ=Asia/Tokyo 0 0 * * *", "America/New_York")
    expect(s).toMatchObject({ kind: "cron", timeZone: "Asia/Tokyo", expression: "0 0 * * *" })
    expect(nexts(s, "2026-01-01T00:00:00Z", 1)).toEqual(["2026-01-01T15:00:00.000Z"])
    expect(ok("TZ=Europe/Berlin @daily")).toMatchObject({ timeZone: "Europe/Berlin", expression: "0 0 * * *" })
  })

  it("America/New_York spring forward (2026-03-08): 02:30 does not exist and runs at 03:30 EDT, once", () => {
    const s = ok("30 2 * * *", "America/New_York")
    expect(nexts(s, "2026-03-07T12:00:00Z", 3)).toEqual([
      "2026-03-08T07:30:00.000Z", // 03:30 EDT (UTC-4)
      "2026-03-09T06:30:00.000Z", // 02:30 EDT
      "2026-03-10T06:30:00.000Z"
    ])
    // the catch-up window agrees with the forward chain (cron-parser's prev() alone would miss it)
    expect(dueBetween(s, at("2026-03-07T12:00:00Z"), at("2026-03-08T12:00:00Z"), 5).times.map(iso)).toEqual([
      "2026-03-08T07:30:00.000Z"
    ])
    // hourly: 01:00 EST -> 03:00 EDT, one hour of wall time skipped, no duplicate instants
    expect(nexts(ok("0 * * * *", "America/New_York"), "2026-03-08T05:30:00Z", 3)).toEqual([
      "2026-03-08T06:00:00.000Z",
      "2026-03-08T07:00:00.000Z",
      "2026-03-08T08:00:00.000Z"
    ])
  })

  it("Europe/Berlin fall back (2026-10-25): 02:30 happens twice on the wall clock but runs once", () => {
    const s = ok("30 2 * * *", "Europe/Berlin")
    expect(nexts(s, "2026-10-24T12:00:00Z", 3)).toEqual([
      "2026-10-25T00:30:00.000Z", // 02:30 CEST (UTC+2), the first of the two
      "2026-10-26T01:30:00.000Z", // 02:30 CET (UTC+1)
      "2026-10-27T01:30:00.000Z"
    ])
    const due = dueBetween(s, at("2026-10-24T23:00:00Z"), at("2026-10-25T03:00:00Z"), 10)
    expect(due.times.map(iso)).toEqual(["2026-10-25T00:30:00.000Z"])
  })

  it("@daily, @midnight, @hourly, @weekly, @monthly, @yearly, @annually", () => {
    const from = "2026-05-13T10:20:00Z" // a Wednesday
    expect(nexts(ok("@daily"), from, 1)).toEqual(["2026-05-14T00:00:00.000Z"])
    expect(nexts(ok("@midnight"), from, 1)).toEqual(["2026-05-14T00:00:00.000Z"])
    expect(nexts(ok("@hourly"), from, 1)).toEqual(["2026-05-13T11:00:00.000Z"])
    expect(nexts(ok("@weekly"), from, 1)).toEqual(["2026-05-17T00:00:00.000Z"])
    expect(nexts(ok("@monthly"), from, 1)).toEqual(["2026-06-01T00:00:00.000Z"])
    expect(nexts(ok("@yearly"), from, 1)).toEqual(["2027-01-01T00:00:00.000Z"])
    expect(nexts(ok("@annually"), from, 1)).toEqual(["2027-01-01T00:00:00.000Z"])
    expect(nexts(ok("@daily", "Europe/Berlin"), from, 1)).toEqual(["2026-05-13T22:00:00.000Z"])
  })
})

describe("@every", () => {
  it("runs on multiples of the interval since the unix epoch, whatever the start or zone", () => {
    const s = ok("@every 30s", "Asia/Kolkata")
    expect(s).toEqual({ kind: "every", spec: "@every 30s", everyMs: 30_000 })
    expect(nexts(s, "2026-11-22T10:02:17.400Z", 3)).toEqual([
      "2026-11-22T10:02:30.000Z",
      "2026-11-22T10:03:00.000Z",
      "2026-11-22T10:03:30.000Z"
    ])
    expect(nextAfter(s, at("2026-11-22T10:02:30Z"))).toBe(at("2026-11-22T10:03:00Z"))
    expect(ok("@every 1m30s")).toMatchObject({ everyMs: 90_000 })
    expect(ok("@every 1h")).toMatchObject({ everyMs: 3_600_000 })
    const seven = ok("@every 7m")
    const n = nextAfter(seven, at("2026-11-22T10:00:00Z"))
    expect(n % 420_000).toBe(0)
    expect(n - at("2026-11-22T10:00:00Z")).toBeLessThanOrEqual(420_000)
  })

  it("rejects durations below a second, fractions of a second and bad durations", () => {
    expect(err("@every 500ms").message).toBe(
      'invalid cron spec "@every 500ms": "@every" needs a duration of at least 1s, got "500ms"'
    )
    expect(err("@every 1.5s").message).toContain("runs on whole seconds")
    expect(err("@every 10").message).toContain('"@every" needs a Go duration such as 30s, 1m30s or 1h, got "10"')
    expect(err("@every").message).toContain("needs a Go duration")
    expect(err("@every5m").message).toContain('did you mean "@every 5m"')
  })
})

describe("due occurrences (catch-up window)", () => {
  const everyMinute = ok("* * * * *")
  it("are the occurrences in (from, to], oldest first, capped to the latest `max`", () => {
    const from = at("2026-01-01T10:00:00Z")
    const to = at("2026-01-01T10:03:30Z")
    expect(dueBetween(everyMinute, from, to, 10)).toEqual({
      times: [at("2026-01-01T10:01:00Z"), at("2026-01-01T10:02:00Z"), at("2026-01-01T10:03:00Z")],
      dropped: 0
    })
    expect(dueBetween(everyMinute, from, to, 1)).toEqual({ times: [at("2026-01-01T10:03:00Z")], dropped: 2 })
    expect(dueBetween(everyMinute, from, at("2026-01-01T10:03:00Z"), 5).times.map(iso)).toEqual([
      "2026-01-01T10:01:00.000Z",
      "2026-01-01T10:02:00.000Z",
      "2026-01-01T10:03:00.000Z"
    ])
    expect(dueBetween(everyMinute, at("2026-01-01T10:03:00Z"), at("2026-01-01T10:03:59.999Z"), 5)).toEqual({
      times: [],
      dropped: 0
    })
    expect(dueBetween(everyMinute, to, from, 5)).toEqual({ times: [], dropped: 0 })
  })
  it("@every works arithmetically, with no limit on the gap", () => {
    const s = ok("@every 10s")
    expect(dueBetween(s, 0, at("2026-01-01T00:00:05Z"), 2).times).toEqual([
      at("2026-01-01T00:00:00Z") - 10_000,
      at("2026-01-01T00:00:00Z")
    ])
    expect(dueBetween(s, 15_000, 40_000, 10)).toEqual({ times: [20_000, 30_000, 40_000], dropped: 0 })
    expect(dueBetween(s, 15_000, 40_000, 2)).toEqual({ times: [30_000, 40_000], dropped: 1 })
  })
})

describe("invalid specs and zones are rejected with clear errors", () => {
  it.each([
    ["", "it is empty"],
    ["* * * *", "expected 5 fields (minute hour day-of-month month day-of-week), got 4"],
    ["0 * * * * *", "expected 5 fields (minute hour day-of-month month day-of-week), got 6"],
    ["61 * * * *", "Constraint error, got value 61 expected range 0-59"],
    ["0 0 30 2 *", "Invalid explicit day of month definition"],
    [
      "@fortnightly",
      'unknown descriptor "@fortnightly"; known: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, @every <duration>'
    ],
    ["every 5 minutes", "expected 5 fields"],
    ["*/61 * * * *", 'step 61 in "*/61" is larger than the minute field\'s range 0-59'],
    ["0 0 */40 * *", 'step 40 in "*/40" is larger than the day-of-month field\'s range 1-31']
  ])("%j", (spec, why) => {
    const e = err(spec)
    expect(e._tag).toBe("InvalidCronSpec")
    expect(e.message).toContain(`invalid cron spec ${JSON.stringify(spec)}: `)
    expect(e.message).toContain(why)
  })

  it("unknown time zones, from the option or from CRON_TZ=", () => {
    const a = err("0 9 * * *", "Mars/Olympus_Mons")
    expect(a).toMatchObject({ _tag: "InvalidTimeZone", timeZone: "Mars/Olympus_Mons" })
    expect(a.message).toBe(
      'invalid time zone "Mars/Olympus_Mons": unknown zone; use an IANA name such as "UTC", "Europe/Berlin" or "America/New_York"'
    )
    expect(err("CRON_TZ=Nowhere/Land 0 9 * * *")).toMatchObject({ _tag: "InvalidTimeZone", timeZone: "Nowhere/Land" })
    expect(err("0 9 * * *", " ").message).toContain("it is empty")
  })
})
