import { describe, expect, it } from "vitest"
import { optionsFromStrings, optionString, type ParsedOption, parseOptionString } from "../../src/wire/optionString.js"
import { vectors } from "./fromFixture.js"

const H = 3_600_000
const M = 60_000
const S = 1000

/** Each Go expression in vectors.json/option_strings, written with our functions. */
const ours: Record<string, string> = {
  "asynq.MaxRetry(3)": optionString.maxRetry(3),
  "asynq.MaxRetry(0)": optionString.maxRetry(0),
  "asynq.MaxRetry(-1)": optionString.maxRetry(-1),
  'asynq.Queue("default")': optionString.queue("default"),
  'asynq.Queue("日本語")': optionString.queue("日本語"),
  'asynq.Queue("with\\"quote\\\\and\\ttab")': optionString.queue('with"quote\\and\ttab'),
  'asynq.TaskID("abc-123")': optionString.taskId("abc-123"),
  "asynq.Timeout(30 * time.Minute)": optionString.timeout(30 * M),
  "asynq.Timeout(90 * time.Second)": optionString.timeout(90 * S),
  "asynq.Timeout(1500 * time.Millisecond)": optionString.timeout(1500),
  "asynq.Timeout(0)": optionString.timeout(0),
  "asynq.Timeout(36 * time.Hour)": optionString.timeout(36 * H),
  "asynq.Timeout(2*time.Hour + 3*time.Second + 4*time.Millisecond)": optionString.timeout(2 * H + 3 * S + 4),
  "asynq.Timeout(250 * time.Microsecond)": optionString.timeout(0.25),
  "asynq.Timeout(1 * time.Nanosecond)": optionString.timeout(1e-6),
  "asynq.Unique(time.Hour)": optionString.unique(H),
  "asynq.Unique(24 * time.Hour)": optionString.unique(24 * H),
  "asynq.Deadline(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))": optionString.deadline(new Date(Date.UTC(2030, 0, 1))),
  'asynq.Deadline(time.Date(2030, 1, 15, 9, 5, 7, 0, time.FixedZone("JST", 9*3600)))': optionString.deadline(
    new Date(Date.UTC(2030, 0, 15, 0, 5, 7)),
    { name: "JST", offsetSeconds: 9 * 3600 }
  ),
  "asynq.ProcessAt(time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC))": optionString.processAt(
    Date.UTC(2024, 1, 29, 23, 59, 59)
  ),
  "asynq.ProcessIn(10 * time.Minute)": optionString.processIn(10 * M),
  "asynq.ProcessIn(45 * time.Second)": optionString.processIn(45 * S),
  "asynq.Retention(24 * time.Hour)": optionString.retention(24 * H),
  "asynq.Retention(0)": optionString.retention(0),
  'asynq.Group("g1")': optionString.group("g1"),
  'asynq.Header("k", "v")': optionString.header("k", "v"),
  'asynq.Header("x-trace", "a\\"b<c>&")': optionString.header("x-trace", 'a"b<c>&')
}

const all = vectors().option_strings

const print = (p: ParsedOption): string => {
  switch (p.kind) {
    case "maxRetry":
      return optionString.maxRetry(p.value)
    case "queue":
    case "taskId":
    case "group":
      return optionString[p.kind](p.value)
    case "deadline":
    case "processAt":
      return optionString[p.kind](p.date, { name: p.zone, offsetSeconds: p.zone === "JST" ? 9 * 3600 : 0 })
    case "header":
      return optionString.header(p.key, p.value)
    default:
      return optionString[p.kind](p.ms)
  }
}

describe("asynq Option.String() forms (what a scheduler stores in enqueue_options)", () => {
  it("covers all 27 option_strings vectors, each with one of our calls", () => {
    expect(all).toHaveLength(27)
    expect(Object.keys(ours).sort()).toEqual(all.map((o) => o.go).sort())
  })

  it.each(all.map((o) => [o.go, o.string] as const))("%s prints %s", (go, s) => {
    expect(ours[go]).toBe(s)
  })

  it.each(all.map((o) => [o.string] as const))("%s parses back and prints the same again", (s) => {
    const p = parseOptionString(s, { JST: 9 * 3600 })
    expect(print(p)).toBe(s)
  })

  it("reads a Go-written SchedulerEntry's options into enqueue options", () => {
    const entry = vectors().scheduler_entry.find((e) => e.name === "many_option_kinds")!
    expect(optionsFromStrings(entry.fields.enqueue_options)).toEqual({
      processIn: 10 * M,
      deadline: new Date(Date.UTC(2030, 0, 1)),
      retention: 24 * H,
      group: "g1",
      taskId: "fixed-id",
      headers: { k: "v" }
    })
    expect(optionsFromStrings(['Queue("a")', "MaxRetry(3)", 'Queue("b")', "Unique(1h0m0s)"])).toEqual({
      queue: "b",
      maxRetry: 3,
      unique: H
    })
  })

  it("reads Deadline in a fixed zone to the right instant, and an unknown abbreviation as offset 0 (Go's time.Parse)", () => {
    const s = "Deadline(Tue Jan 15 09:05:07 JST 2030)"
    expect(parseOptionString(s, { JST: 9 * 3600 })).toEqual({
      kind: "deadline",
      date: new Date(Date.UTC(2030, 0, 15, 0, 5, 7)),
      zone: "JST"
    })
    expect(parseOptionString(s)).toEqual({
      kind: "deadline",
      date: new Date(Date.UTC(2030, 0, 15, 9, 5, 7)),
      zone: "JST"
    })
  })

  it.each([
    "Nope(1)",
    "MaxRetry(x)",
    "Queue(unquoted)",
    "Timeout(5)",
    "Header([1,2])",
    "Deadline(2030-01-01)",
    "plain"
  ])("rejects %s with an error naming it", (s) => {
    expect(() => parseOptionString(s)).toThrow(/./)
  })
})
