import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type Redis as IORedis, Redis as IORedisClient } from "ioredis"
import { asynqMsg, putActive, putInZset, putPending, restoreSnapshot } from "../support/asynqLayout.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { startRedisServer } from "../support/redis-server.js"
import { runCli } from "./runCli.js"

let c: IORedis
const cli = (...args: Array<string>) => runCli(args, { REDIS_URL: testRedisUrl() })
const nowSec = () => Math.floor(Date.now() / 1000)

beforeAll(() => {
  c = rawClient()
})
beforeEach(async () => {
  await flushTestDb()
})
afterAll(() => c.disconnect())

/** Column start offsets of a table line, from the header's words. */
const columnStarts = (header: string) => [...header.matchAll(/\S+( \S+)*/g)].map((m) => m.index!)

describe("CLI against real Redis", { timeout: 240_000 }, () => {
  it("stats: an aligned table of every queue, and the same data as JSON", async () => {
    await restoreSnapshot(c, "a-enqueue")
    await putInZset(c, asynqMsg("default", "later"), "scheduled", nowSec() + 600)
    await c.set(`asynq:{default}:paused`, String(nowSec()))
    const r = await cli("stats")
    expect(r.code).toBe(0)
    const lines = r.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(
      /^QUEUE\s+STATE\s+SIZE\s+PENDING\s+ACTIVE\s+SCHEDULED\s+RETRY\s+ARCHIVED\s+COMPLETED\s+AGGREGATING\s+PROCESSED\s+FAILED\s+LATENCY\s+MEMORY$/
    )
    const critical = lines.find((l) => l.startsWith("critical"))!.split(/\s+/)
    const def = lines.find((l) => l.startsWith("default"))!.split(/\s+/)
    expect(critical.slice(0, 4)).toEqual(["critical", "run", "1", "1"])
    expect(def.slice(0, 6)).toEqual(["default", "paused", "3", "2", "0", "1"])
    // every row ends its numeric columns where the header does (right-aligned under the header)
    const header = lines[0]!
    const sizeEnd = header.indexOf("SIZE") + "SIZE".length
    for (const row of [lines[2]!, lines[3]!]) expect(row[sizeEnd - 1]).toMatch(/\d/)
    expect(columnStarts(header)).toHaveLength(14)

    const j = await cli("stats", "--json")
    const parsed = JSON.parse(j.stdout) as Array<{ queue: string; pending: number; paused: boolean; size: number }>
    expect(parsed.map((q) => [q.queue, q.pending, q.size, q.paused])).toEqual([
      ["critical", 1, 1, false],
      ["default", 2, 3, true]
    ])
  })

  it("queue ls / inspect / history / pause / unpause", async () => {
    await restoreSnapshot(c, "e-retry")
    expect((await cli("queue", "ls")).stdout).toBe("default\n")
    const inspect = await cli("queue", "inspect", "default")
    expect(inspect.code).toBe(0)
    expect(inspect.stdout).toMatch(/^retry:\s+1$/m)
    expect(inspect.stdout).toMatch(/^failed total:\s+1$/m)
    const hist = await cli("queue", "history", "default", "--days", "2", "--json")
    const days = JSON.parse(hist.stdout) as Array<{ processed: number; date: string }>
    expect(days).toHaveLength(2)

    expect((await cli("queue", "pause", "default")).stdout).toBe('Paused queue "default".\n')
    expect(await c.exists("asynq:{default}:paused")).toBe(1)
    const again = await cli("queue", "pause", "default")
    expect(again.code).toBe(1)
    expect(again.stderr).toBe('effect-asynq: queue "default" is already paused\n')
    expect((await cli("queue", "unpause", "default")).code).toBe(0)
    expect(await c.exists("asynq:{default}:paused")).toBe(0)

    const missing = await cli("queue", "inspect", "ghost")
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe('effect-asynq: queue "ghost" does not exist\n')
  })

  it("queue rm: refused while not empty, done with --force", async () => {
    await putPending(c, asynqMsg("work", "p1"), Date.now())
    await putPending(c, asynqMsg("work", "p2"), Date.now())
    const refused = await cli("queue", "rm", "work")
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('queue "work" is not empty (2 task(s))')
    const forced = await cli("queue", "rm", "work", "--force")
    expect(forced.code).toBe(0)
    expect(forced.stdout).toBe('Deleted queue "work" and its 2 task(s).\n')
    expect(await c.sismember("asynq:queues", "work")).toBe(0)
  })

  it("group ls and task ls for aggregating tasks (d-group)", async () => {
    await restoreSnapshot(c, "d-group")
    const g = await cli("group", "ls", "--queue", "default")
    expect(
      g.stdout
        .split("\n")
        .slice(2, 4)
        .map((l) => l.split(/\s+/))
    ).toEqual([
      ["g1", "3"],
      ["g2", "1"]
    ])
    const t = await cli("task", "ls", "--queue", "default", "--state", "aggregating", "--group", "g1", "--json")
    expect((JSON.parse(t.stdout) as Array<{ id: string }>).map((x) => x.id)).toEqual(["d-g1-1", "d-g1-2", "d-g1-3"])
  })

  it("control characters stored in Redis are printed as visible escapes, never raw (no terminal escape injection)", async () => {
    await putPending(
      c,
      asynqMsg("default", "evil", { type: "x\u001b]0;pwned\u0007\u001b[31mred", errorMsg: "bad\u001b[2J" }),
      Date.now()
    )
    const ls = await cli("task", "ls", "--queue", "default", "--state", "pending")
    expect(ls.code).toBe(0)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
    expect(ls.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
    expect(ls.stdout).toContain("x\\x1b]0;pwned\\x07\\x1b[31mred")
    const insp = await cli("task", "inspect", "--queue", "default", "--id", "evil")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
    expect(insp.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
    // --json is escaped by JSON itself, and stays exact.
    const json = JSON.parse((await cli("task", "inspect", "--queue", "default", "--id", "evil", "--json")).stdout)
    expect(json.type).toBe("x\u001b]0;pwned\u0007\u001b[31mred")
    await cli("task", "delete", "--queue", "default", "--id", "evil")
  })

  it("task ls / inspect / run / archive / delete, with errors for states that do not fit", async () => {
    await putPending(c, asynqMsg("default", "p1"), Date.now())
    await putInZset(c, asynqMsg("default", "s1"), "scheduled", nowSec() + 600)
    await putActive(c, asynqMsg("default", "a1"), nowSec() - 5)
    const ls = await cli("task", "ls", "--queue", "default", "--state", "active")
    expect(ls.stdout).toMatch(/^a1\s+email:send\s+\{"id":"a1"\}\s+yes$/m)
    const insp = await cli("task", "inspect", "--queue", "default", "--id", "s1")
    expect(insp.stdout).toMatch(/^state:\s+scheduled$/m)
    expect(
      JSON.parse((await cli("task", "inspect", "--queue", "default", "--id", "s1", "--json")).stdout)
    ).toMatchObject({ id: "s1", state: "scheduled" })

    expect((await cli("task", "run", "--queue", "default", "--id", "s1")).stdout).toBe(
      'Ran task "s1" (was scheduled).\n'
    )
    expect(await c.hget("asynq:{default}:t:s1", "state")).toBe("pending")
    expect((await cli("task", "archive", "--queue", "default", "--id", "p1")).stdout).toBe(
      'Archived task "p1" (was pending).\n'
    )
    expect((await cli("task", "delete", "--queue", "default", "--id", "p1")).stdout).toBe(
      'Deleted task "p1" (was archived).\n'
    )
    expect(await c.exists("asynq:{default}:t:p1")).toBe(0)

    const active = await cli("task", "delete", "--queue", "default", "--id", "a1")
    expect(active.code).toBe(1)
    expect(active.stderr).toBe('effect-asynq: task "a1" is active (running) and cannot be deleted; cancel it first\n')
    const notFound = await cli("task", "run", "--queue", "default", "--id", "nope")
    expect(notFound.code).toBe(1)
    expect(notFound.stderr).toBe('effect-asynq: task "nope" not found in queue "default"\n')
  })

  it("task runall / archiveall / deleteall report progress on stderr per batch", async () => {
    for (let i = 0; i < 5; i++) await putInZset(c, asynqMsg("default", `r${i}`), "retry", nowSec() + i)
    const arch = await cli("task", "archiveall", "--queue", "default", "--state", "retry", "--batch", "2", "--force")
    expect(arch.code).toBe(0)
    expect(arch.stdout).toBe('Archived 5 retry task(s) in queue "default".\n')
    expect(arch.stderr).toBe("archived 2/5\narchived 4/5\narchived 5/5\n")
    // An archived task past 90 days goes when more are archived: the CLI says so.
    await putInZset(c, asynqMsg("default", "ancient"), "archived", nowSec() - 91 * 86_400)
    await putPending(c, asynqMsg("default", "late"), Date.now())
    const trimming = await cli("task", "archiveall", "--queue", "default", "--state", "pending", "--force")
    expect(trimming.stdout).toBe(
      'Archived 1 pending task(s) in queue "default". The archive\'s limits (90 days, 10,000 tasks) removed 1 older archived task(s).\n'
    )
    expect(trimming.stderr).toContain("archiving removed 1 older archived task(s)")
    const trimmingJson = await cli(
      "task",
      "archiveall",
      "--queue",
      "default",
      "--state",
      "pending",
      "--json",
      "--force"
    )
    expect(JSON.parse(trimmingJson.stdout)).toEqual({
      queue: "default",
      state: "pending",
      action: "archiveall",
      count: 0,
      trimmed: 0
    })
    await cli("task", "delete", "--queue", "default", "--id", "late")
    const run = await cli("task", "runall", "--queue", "default", "--state", "archived", "--json")
    expect(JSON.parse(run.stdout)).toEqual({ queue: "default", state: "archived", action: "runall", count: 5 })
    const del = await cli("task", "deleteall", "--queue", "default", "--state", "pending", "--force")
    expect(del.stdout).toBe('Deleted 5 pending task(s) in queue "default".\n')
    expect(await c.exists("asynq:{default}:pending")).toBe(0)
    const wrong = await cli("task", "runall", "--queue", "default", "--state", "pending")
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain("cannot run all pending tasks")
  })

  it("task deleteall / archiveall without --force: say how many tasks they would change, exit 2, change nothing", async () => {
    for (let i = 0; i < 3; i++) await putPending(c, asynqMsg("default", `p${i}`), Date.now())
    for (let i = 0; i < 2; i++) await putInZset(c, asynqMsg("default", `r${i}`), "retry", nowSec() + 60)
    const del = await cli("task", "deleteall", "--queue", "default", "--state", "pending")
    expect(del.code).toBe(2)
    expect(del.stdout).toBe("")
    expect(del.stderr).toBe(
      'effect-asynq: deleteall would delete 3 pending task(s) in queue "default"; nothing was changed. Add --force to do it.\n'
    )
    expect(await c.llen("asynq:{default}:pending")).toBe(3)
    const arch = await cli("task", "archiveall", "--queue", "default", "--state", "retry")
    expect(arch.code).toBe(2)
    expect(arch.stderr).toBe(
      'effect-asynq: archiveall would archive 2 retry task(s) in queue "default"; nothing was changed. Add --force to do it.\n'
    )
    expect(await c.zcard("asynq:{default}:retry")).toBe(2)
    expect(await c.zcard("asynq:{default}:archived")).toBe(0)
    // The state is still checked first: a state the action cannot take is a usage error naming it.
    const wrongState = await cli("task", "archiveall", "--queue", "default", "--state", "archived")
    expect(wrongState.code).toBe(2)
    expect(wrongState.stderr).toContain("cannot archive all archived tasks")
    const noQueue = await cli("task", "deleteall", "--queue", "ghost", "--state", "pending")
    expect(noQueue.code).toBe(1)
    expect(noQueue.stderr).toBe('effect-asynq: queue "ghost" does not exist\n')
    // runall is not destructive: it acts without --force.
    expect((await cli("task", "runall", "--queue", "default", "--state", "retry")).stdout).toBe(
      'Ran 2 retry task(s) in queue "default".\n'
    )
    const forced = await cli("task", "deleteall", "--queue", "default", "--state", "pending", "--force")
    expect(forced.code).toBe(0)
    expect(forced.stdout).toBe('Deleted 5 pending task(s) in queue "default".\n')
    expect(await c.exists("asynq:{default}:pending")).toBe(0)
  })

  it("task deleteall / archiveall of an aggregation group without --force count that group's tasks", async () => {
    await restoreSnapshot(c, "d-group")
    const groups = JSON.parse((await cli("group", "ls", "--queue", "default", "--json")).stdout) as Array<{
      group: string
      size: number
    }>
    const g = groups[0]!
    expect(g.size).toBeGreaterThan(0)
    const del = await cli("task", "deleteall", "--queue", "default", "--state", "aggregating", "--group", g.group)
    expect(del.code).toBe(2)
    expect(del.stderr).toContain(
      `deleteall would delete ${g.size} aggregating task(s) in group "${g.group}" of queue "default"`
    )
    expect(await c.zcard(`asynq:{default}:g:${g.group}`)).toBe(g.size)
    const forced = await cli(
      "task",
      "deleteall",
      "--queue",
      "default",
      "--state",
      "aggregating",
      "--group",
      g.group,
      "--force"
    )
    expect(forced.code).toBe(0)
    expect(await c.exists(`asynq:{default}:g:${g.group}`)).toBe(0)
  })

  it("task cancel publishes on asynq:cancel and says how many servers heard it", async () => {
    // Pub/sub is server-wide (not per database): on the shared server another test file's worker may
    // be subscribed, so this runs on a private one where the only subscriber is the test's own.
    const server = await startRedisServer()
    const sub = new IORedisClient(server.url)
    try {
      const none = await runCli(["task", "cancel", "some-id"], { REDIS_URL: server.url })
      expect(none.code).toBe(0)
      expect(none.stdout).toBe('Sent cancel for task "some-id", but no server is listening.\n')
      const got = new Promise<string>((resolve) => sub.on("message", (_ch, msg) => resolve(msg)))
      await sub.subscribe("asynq:cancel")
      const one = await runCli(["task", "cancel", "other-id"], { REDIS_URL: server.url })
      expect(one.stdout).toBe('Sent cancel for task "other-id" to 1 server(s).\n')
      expect(await got).toBe("other-id")
    } finally {
      sub.disconnect()
      await server.stop()
    }
  })

  it("server ls and cron ls/history read what Go asynq wrote (h, i), heartbeats refreshed to now", async () => {
    await restoreSnapshot(c, "h-server-running")
    await restoreSnapshot(c, "i-scheduler")
    for (const [zset, ttl] of [
      ["asynq:servers", 10],
      ["asynq:workers", 10],
      ["asynq:schedulers", 20]
    ] as const) {
      for (const m of await c.zrange(zset, "0", "-1")) await c.zadd(zset, nowSec() + ttl, m)
    }
    const s = await cli("server", "ls")
    expect(s.stdout).toMatch(
      /^vm\s+25483\s+active\s+1\/4\s+critical:6,default:3,low:1\s+2026-11-22T\S+\s+e6c0709d-149b-46dd-a6e5-f71ae85ea757$/m
    )
    const sj = JSON.parse((await cli("server", "ls", "--json")).stdout) as Array<{
      activeWorkers: Array<{ taskId: string }>
    }>
    expect(sj[0]!.activeWorkers.map((w) => w.taskId)).toEqual(["h-active"])

    const cron = await cli("cron", "ls")
    const rows = cron.stdout
      .split("\n")
      .slice(2)
      .filter((l) => l !== "")
    expect(rows.map((l) => l.split(/\s{2,}/).slice(1, 3))).toEqual([
      ["*/5 * * * *", "sched:report"],
      ["@every 30s", "sched:ping"]
    ])
    expect(rows[0]).toContain('Queue("low"), Unique(1h0m0s)')
    const hist = await cli("cron", "history", "9d219247-c7f9-4d1e-98c6-41f13590cef2")
    expect(hist.stdout).toMatch(/^2026-11-22T\S+\s+938d17eb-54ea-4b6b-bc95-f5bbc1181e1b$/m)
  })
})
