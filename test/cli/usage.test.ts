import { describe, expect, it } from "vitest"
import { freePort } from "../support/redis-server.js"
import { baseRedisUrl, testRedisUrl } from "../support/redis.js"
import { runCli } from "./runCli.js"

describe("CLI usage and failures", { timeout: 120_000 }, () => {
  it("--help prints the commands on stdout and exits 0", async () => {
    const r = await runCli(["--help"])
    expect(r.code).toBe(0)
    for (const cmd of ["stats", "queue", "group", "task", "server", "cron"]) expect(r.stdout).toMatch(new RegExp(`^  ${cmd} `, "m"))
    expect(r.stdout).toContain("--redis-url")
    expect(r.stdout).toContain("--json")
  })

  it("no command: usage on stderr, exit 2", async () => {
    const r = await runCli([], { REDIS_URL: testRedisUrl() })
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain("USAGE")
  })

  it("an unknown command: usage and the reason on stderr, exit 2", async () => {
    const r = await runCli(["frobnicate"])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('Unknown subcommand "frobnicate" for "effect-asynq"')
    expect(r.stderr).toContain("USAGE")
  })

  it("a missing argument, a missing flag, a bad choice: exit 2 with the reason", async () => {
    const missingArg = await runCli(["queue", "inspect"])
    expect(missingArg.code).toBe(2)
    expect(missingArg.stderr).toContain("Missing required argument: queue")
    const missingFlag = await runCli(["task", "ls", "--state", "pending"])
    expect(missingFlag.code).toBe(2)
    expect(missingFlag.stderr).toContain("--queue")
    const badChoice = await runCli(["task", "ls", "--queue", "default", "--state", "sleeping"])
    expect(badChoice.code).toBe(2)
    expect(badChoice.stderr).toContain('Invalid value for flag --state: "sleeping"')
  })

  it("a value the inspector rejects (page 0) is a usage error too: exit 2", async () => {
    const r = await runCli(["task", "ls", "--queue", "default", "--state", "pending", "--page", "0"], { REDIS_URL: testRedisUrl() })
    expect(r.code).toBe(2)
    expect(r.stderr).toBe("effect-asynq: page must be a whole number >= 1, got 0\n")
  })

  it("--wizard (listed by effect/cli, but this CLI has no interactive input) is a usage error, exit 2", async () => {
    const r = await runCli(["--wizard"])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe("effect-asynq: --wizard (interactive mode) is not supported; see effect-asynq <command> --help\n")
  })

  it("an unreachable Redis fails at once (not after retries) with a clear message, exit 1", async () => {
    const port = await freePort()
    // The 20 s subprocess timeout only catches a hang: the connection is refused right away.
    const r = await runCli(["stats", "--redis-url", `redis://127.0.0.1:${port}`])
    expect(r.killed).toBe(false)
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe(
      `effect-asynq: cannot connect to Redis at redis://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}. Is redis-server running, and are REDIS_URL and the credentials right?\n`
    )
  })

  it("REDIS_URL is used when --redis-url is absent", async () => {
    const port = await freePort()
    const r = await runCli(["queue", "ls"], { REDIS_URL: `redis://127.0.0.1:${port}` })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`127.0.0.1:${port}`)
  })

  it("a database the URL cannot name, or the server does not have, is an error (not database 0), exit 1", async () => {
    const at = (path: string) => {
      const u = new URL(baseRedisUrl())
      u.pathname = path
      return u.toString()
    }
    const notANumber = await runCli(["stats", "--redis-url", at("/abc")])
    expect(notANumber.code).toBe(1)
    expect(notANumber.stdout).toBe("")
    expect(notANumber.stderr).toBe(
      `effect-asynq: invalid Redis address ${at("/abc")}: the database in the URL's path must be a whole number ≥ 0, got "abc"\n`
    )
    const outOfRange = await runCli(["stats", "--redis-url", at("/100000")])
    expect(outOfRange.code).toBe(1)
    expect(outOfRange.stdout).toBe("")
    expect(outOfRange.stderr).toContain(`cannot use Redis at ${at("/100000")}: the server refused database 100000 (ERR DB index is out of range)`)
  })
})
