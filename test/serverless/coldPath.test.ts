/**
 * The cold path of an enqueue function: from a fresh container (no connection yet) to its first
 * enqueue's reply, counted in round trips through a loopback proxy in front of the real Redis.
 * The handshake (one HELLO: the enqueue handler's own RESP client, src/redis/lightRedis.ts), the
 * signature claim and the enqueue itself:
 * no INFO ready check, no PING, no SCRIPT LOAD — a script the connection has not run yet goes as
 * EVAL with its source, which also caches it for the EVALSHAs after it. Runs on a private
 * redis-server: SCRIPT FLUSH there touches no other test.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createEnqueueHandler } from "../../adapters/aws-lambda/enqueueHandler.js"
import { signBody } from "../../adapters/shared/auth.js"
import { queueKeys } from "../../src/wire/keys.js"
import { httpEvent } from "../aws-lambda/invoke.js"
import { Redis as IORedis } from "ioredis"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"
import { startRoundTripProxy, type RoundTripProxy } from "../support/roundTripProxy.js"

const secret = "cold-secret"
let server: RedisServerHandle
let redis: IORedis
let proxy: RoundTripProxy

beforeAll(async () => {
  server = await startRedisServer()
  redis = new IORedis(server.url)
  proxy = await startRoundTripProxy({ host: "127.0.0.1", port: server.port })
})
beforeEach(async () => {
  await redis.flushdb()
})
afterAll(async () => {
  await proxy.close()
  redis.disconnect()
  await server.stop()
})

let n = 0
const firstEnqueue = async () => {
  const handler = createEnqueueHandler({ auth: { kind: "hmac", secret }, redis: { url: proxy.url } })
  const body = JSON.stringify({ type: "email:welcome", payload: { to: "a@b.c", n: n++ }, options: { queue: "email" } })
  const before = proxy.roundTrips().length
  const res = await handler(
    httpEvent(body, { "x-asynq-signature": signBody(secret, { method: "POST", path: "/enqueue", body }, Date.now()) })
  )
  const trips = proxy.roundTrips().slice(before)
  // The warm invocation after it: one round trip (the signature's claim and the enqueue are one script).
  const body2 = JSON.stringify({ type: "email:welcome", payload: { to: "d@e.f", n: n++ }, options: { queue: "email" } })
  const mark = proxy.roundTrips().length
  const res2 = await handler(
    httpEvent(body2, {
      "x-asynq-signature": signBody(secret, { method: "POST", path: "/enqueue", body: body2 }, Date.now())
    })
  )
  const warmTrips = proxy.roundTrips().slice(mark)
  await handler.runtime.dispose()
  return { res, trips, res2, warmTrips }
}

describe("cold path of the enqueue function", () => {
  it.each([
    ["scripts already cached on the server", false],
    ["a server that has never seen the scripts (SCRIPT FLUSH)", true]
  ])("%s: at most 3 round trips before the first enqueue's reply, no INFO, PING or SCRIPT LOAD", async (_, flush) => {
    if (flush) await redis.script("FLUSH")
    else await firstEnqueue() // runs the scripts once, so the server has them
    const { res, trips, res2, warmTrips } = await firstEnqueue()
    expect(res.statusCode).toBe(200)
    expect(res2.statusCode).toBe(200)
    const commands = trips.flatMap((t) => t.commands)
    expect(commands).not.toContain("INFO")
    expect(commands).not.toContain("PING")
    expect(commands).not.toContain("SCRIPT")
    // The first round trip is the handshake; the last one carries the enqueue script.
    expect(trips[0]!.commands[0]).toBe("HELLO")
    const enqueueTrip = trips.findIndex((t) => t.commands.some((c) => c === "EVAL" || c === "EVALSHA"))
    expect(enqueueTrip).toBeGreaterThan(0)
    expect(enqueueTrip + 1).toBeLessThanOrEqual(3)
    expect(trips.length).toBe(enqueueTrip + 1)
    // Warm: claim and enqueue in one EVALSHA (the connection has run the script); it used to be two round trips.
    expect(warmTrips.map((t) => t.commands)).toEqual([["EVALSHA"]])
    expect(await redis.llen(queueKeys("email").pending)).toBe(flush ? 2 : 4)
  })
})
