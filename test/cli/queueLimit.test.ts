/**
 * `effect-asynq queue limit QUEUE [--rate N/period] [--burst N] [--concurrency N] [--clear]`: shows,
 * sets and clears a queue's flow-control limit; `queue inspect` and /metrics show it.
 */
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { asynqMsg, putPending } from "../support/asynqLayout.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { runCli } from "./runCli.js"

let c: IORedis
const cli = (...args: Array<string>) => runCli(args, { REDIS_URL: testRedisUrl() })

beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

describe("CLI queue limit (real Redis)", { timeout: 240_000 }, () => {
  it("sets, shows (also in queue inspect) and clears a limit; refuses bad input with exit 2 and writes nothing", async () => {
    await putPending(c, asynqMsg("mail", "m1"), Date.now())
    expect((await cli("queue", "limit", "mail")).stdout).toBe('Queue "mail": limit none.\n')

    const set = await cli("queue", "limit", "mail", "--rate", "100/s", "--burst", "20", "--concurrency", "5")
    expect(set.code).toBe(0)
    expect(set.stdout).toBe('Queue "mail": limit 100/s (burst 20), concurrency 5.\n')
    expect(await c.hgetall("asynq:{mail}:flow")).toEqual({
      interval_ms: "10",
      burst: "20",
      limit: "100",
      per_ms: "1000",
      concurrency: "5"
    })
    expect((await cli("queue", "limit", "mail")).stdout).toBe('Queue "mail": limit 100/s (burst 20), concurrency 5.\n')
    expect((await cli("queue", "inspect", "mail")).stdout).toMatch(/^limit:\s+100\/s \(burst 20\), concurrency 5$/m)
    const json = JSON.parse((await cli("queue", "limit", "mail", "--json")).stdout)
    expect(json).toEqual({
      queue: "mail",
      limit: { rate: { limit: 100, perMs: 1000, intervalMs: 10, burst: 20 }, concurrency: 5 }
    })

    // A new limit replaces the old one: the cap is gone, the default burst (50 ms of tasks) applies.
    expect((await cli("queue", "limit", "mail", "--rate", "6000/m")).stdout).toBe(
      'Queue "mail": limit 6000/m (burst 5).\n'
    )

    const bad = await cli("queue", "limit", "mail", "--rate", "fast")
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/rate must be <tasks>\/<period>/)
    const both = await cli("queue", "limit", "mail", "--clear", "--concurrency", "3")
    expect(both.code).toBe(2)
    const ghost = await cli("queue", "limit", "ghost", "--concurrency", "3")
    expect(ghost.code).toBe(1)
    expect(ghost.stderr).toBe('effect-asynq: queue "ghost" does not exist\n')
    expect(await c.exists("asynq:{ghost}:flow")).toBe(0)
    expect(await c.hget("asynq:{mail}:flow", "limit")).toBe("6000")

    const cleared = await cli("queue", "limit", "mail", "--clear")
    expect(cleared.stdout).toBe('Cleared the limit of queue "mail": it is unlimited.\n')
    expect(await c.exists("asynq:{mail}:flow")).toBe(0)
    expect((await cli("queue", "inspect", "mail")).stdout).toMatch(/^limit:\s+none$/m)
  })

  it("sets and shows per-key limits (--key-rate, --key-burst, --key-concurrency), in queue inspect too", async () => {
    await putPending(c, asynqMsg("tenants", "t1"), Date.now())
    const set = await cli(
      "queue",
      "limit",
      "tenants",
      "--key-rate",
      "10/s",
      "--key-burst",
      "2",
      "--key-concurrency",
      "2"
    )
    expect(set.code).toBe(0)
    expect(set.stdout).toBe('Queue "tenants": limit per key: 10/s (burst 2), concurrency 2.\n')
    expect(await c.hgetall("asynq:{tenants}:flow")).toEqual({
      key_interval_ms: "100",
      key_burst: "2",
      key_limit: "10",
      key_per_ms: "1000",
      key_concurrency: "2"
    })
    const inspected = (await cli("queue", "inspect", "tenants")).stdout
    expect(inspected).toMatch(/^limit:\s+per key: 10\/s \(burst 2\), concurrency 2$/m)
    expect(inspected).toMatch(/^held:\s+no$/m)
    // A hold (a handler's RateLimited with holdQueue writes hold_until, unix ms) is shown beside the limit.
    await c.hset("asynq:{tenants}:flow", "hold_until", String(Date.UTC(2099, 0, 1)))
    const held = await cli("queue", "inspect", "tenants")
    expect(held.stdout).toMatch(/^limit:\s+per key: 10\/s \(burst 2\), concurrency 2$/m)
    expect(held.stdout).toMatch(/^held:\s+until 2099-01-01T00:00:00\.000Z \(in \d+d\d+h\)$/m)
    expect(JSON.parse((await cli("queue", "inspect", "tenants", "--json")).stdout)).toMatchObject({
      heldUntil: "2099-01-01T00:00:00.000Z",
      limit: { perKey: { concurrency: 2 } }
    })
    // `queue limit QUEUE` shows the hold too.
    expect((await cli("queue", "limit", "tenants")).stdout).toMatch(
      /^Queue "tenants": limit per key: 10\/s \(burst 2\), concurrency 2; held until 2099-01-01T00:00:00\.000Z \(in \d+d\d+h\)\.\n$/
    )
    expect(JSON.parse((await cli("queue", "limit", "tenants", "--json")).stdout)).toMatchObject({
      queue: "tenants",
      heldUntil: "2099-01-01T00:00:00.000Z"
    })
    // A hold that has ended is not shown.
    await c.hset("asynq:{tenants}:flow", "hold_until", String(Date.UTC(2020, 0, 1)))
    expect((await cli("queue", "inspect", "tenants")).stdout).toMatch(/^held:\s+no$/m)
    expect((await cli("queue", "limit", "tenants")).stdout).toBe(
      'Queue "tenants": limit per key: 10/s (burst 2), concurrency 2.\n'
    )
    expect(JSON.parse((await cli("queue", "limit", "tenants", "--json")).stdout)).not.toHaveProperty("heldUntil")
    await c.hdel("asynq:{tenants}:flow", "hold_until")
    const both = await cli("queue", "limit", "tenants", "--concurrency", "5", "--key-concurrency", "1")
    expect(both.stdout).toBe('Queue "tenants": limit concurrency 5, per key: concurrency 1.\n')
    const json = JSON.parse((await cli("queue", "limit", "tenants", "--json")).stdout)
    expect(json).toEqual({ queue: "tenants", limit: { concurrency: 5, perKey: { concurrency: 1 } } })
    const bad = await cli("queue", "limit", "tenants", "--key-rate", "often")
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/key-rate must be <tasks>\/<period>/)
    const burstAlone = await cli("queue", "limit", "tenants", "--key-burst", "3")
    expect(burstAlone.code).toBe(2)
    expect(burstAlone.stderr).toMatch(/perKey.burst applies to a per-key rate/)
  })
})
