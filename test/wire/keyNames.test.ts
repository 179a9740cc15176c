import { describe, expect, it } from "vitest"
import {
  allQueues,
  allSchedulers,
  allServers,
  allWorkers,
  cancelChannel,
  queueKeys,
  schedulerEntriesKey,
  schedulerHistoryKey,
  serverInfoKey,
  utcDate,
  workersKey
} from "../../src/wire/keys.js"
import { uniqueKey } from "../../src/wire/uniqueKey.js"
import { loadFixture } from "../support/fixtures.js"

interface KeyNames {
  readonly global: Readonly<Record<string, string>>
  readonly per_queue: ReadonlyArray<Readonly<Record<string, string>> & { readonly queue: string }>
}
const fx = loadFixture<KeyNames>("key-names.json")

// 2024-03-01T01:00:00+02:00 is 2024-02-29 in UTC: asynq names daily keys by the UTC date.
const statTime = Date.parse("2024-03-01T01:00:00+02:00")

const global: Record<string, string> = {
  AllServers: allServers,
  AllWorkers: allWorkers,
  AllSchedulers: allSchedulers,
  AllQueues: allQueues,
  CancelChannel: cancelChannel,
  'ServerInfoKey("host.example", 1234, "sid-uuid")': serverInfoKey("host.example", 1234, "sid-uuid"),
  'WorkersKey("host.example", 1234, "sid-uuid")': workersKey("host.example", 1234, "sid-uuid"),
  'SchedulerEntriesKey("host.example:1234:sched-uuid")': schedulerEntriesKey("host.example:1234:sched-uuid"),
  'SchedulerHistoryKey("entry-uuid")': schedulerHistoryKey("entry-uuid")
}

const perQueue = (q: string): Record<string, string> => {
  const k = queueKeys(q)
  return {
    queue: q,
    QueueKeyPrefix: k.prefix,
    TaskKeyPrefix: k.taskPrefix,
    'TaskKey(q, "abc")': k.task("abc"),
    PendingKey: k.pending,
    ActiveKey: k.active,
    ScheduledKey: k.scheduled,
    RetryKey: k.retry,
    ArchivedKey: k.archived,
    LeaseKey: k.lease,
    CompletedKey: k.completed,
    PausedKey: k.paused,
    ProcessedTotalKey: k.processedTotal,
    FailedTotalKey: k.failedTotal,
    "ProcessedKey(q, 2024-03-01T01:00:00+02:00)": k.processed(statTime),
    "FailedKey(q, 2024-03-01T01:00:00+02:00)": k.failed(statTime),
    GroupKeyPrefix: k.groupPrefix,
    'GroupKey(q, "g1")': k.group("g1"),
    'AggregationSetKey(q, "g1", "set-uuid")': k.aggregationSet("g1", "set-uuid"),
    AllGroups: k.allGroups,
    AllAggregationSets: k.allAggregationSets,
    'UniqueKey(q, "t", []byte("p"))': uniqueKey(q, "t", new TextEncoder().encode("p"))
  }
}

describe("asynq key names (internal/base)", () => {
  it("global keys: all 9", () => {
    expect(Object.keys(fx.global)).toHaveLength(9)
    expect(global).toEqual(fx.global)
  })

  it.each(fx.per_queue.map((q) => [q.queue, q] as const))("every per-queue key of %s (all 21 names)", (q, expected) => {
    expect(Object.keys(expected)).toHaveLength(22) // 21 key names + "queue"
    expect(perQueue(q)).toEqual(expected)
    expect(queueKeys(q).uniquePrefix).toBe(`asynq:{${q}}:unique:`)
  })
})

describe("utcDate (the day in daily stats keys)", () => {
  it("is the UTC date of the time, across day boundaries, in any order of calls", () => {
    const day = 86_400_000
    const base = Date.UTC(2026, 10, 22)
    const times = [
      base,
      base + day - 1,
      base + day,
      base - 1,
      0,
      -1,
      -day,
      -day - 1,
      base + 12 * 3_600_000,
      Date.UTC(2024, 1, 29, 23, 59, 59, 999),
      Date.UTC(2024, 2, 1)
    ]
    for (const t of [...times, ...[...times].reverse(), ...times])
      expect(utcDate(t)).toBe(new Date(t).toISOString().slice(0, 10))
    expect(queueKeys("q").processed(base + day - 1)).toBe("asynq:{q}:processed:2026-11-22")
    expect(queueKeys("q").processed(base + day)).toBe("asynq:{q}:processed:2026-11-23")
  })
})
