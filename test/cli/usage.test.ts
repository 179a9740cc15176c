import { describe, expect, it } from "vitest"
import { freePort } from "../support/redis-server.js"
import { baseRedisUrl, flushTestDb, rawClient, testDb, testRedisUrl } from "../support/redis.js"
import { runCli } from "./runCli.js"

describe("CLI usage and failures", { timeout: 120_000 }, () => {
  it("--help prints the commands on stdout and exits 0", async () => {
    const r = await runCli(["--help"])
    expect(r.code).toBe(0)
    for (const cmd of ["stats", "queue", "group", "task", "server", "cron"])
      expect(r.stdout).toMatch(new RegExp(`^  ${cmd} `, "m"))
    expect(r.stdout).toContain("--redis-url")
    expect(r.stdout).toContain("--json")
  })

  it("no command: usage on stderr, exit 2", async () => {
    const r = await runCli([], { REDIS_URL: testRedisUrl() })
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain("USAGE")
  })

  it("an unknown command: one line with the reason and where to read more, exit 2", async () => {
    const r = await runCli(["frobnicate"])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe(
      'effect-asynq: Unknown subcommand "frobnicate" for "effect-asynq" (see effect-asynq --help)\n'
    )
    const typo = await runCli(["queue", "inspct"])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toBe(
      'effect-asynq: Unknown subcommand "inspct" for "effect-asynq queue"; did you mean inspect? (see effect-asynq queue --help)\n'
    )
  })

  it("a missing argument, a missing flag, a bad choice: exit 2, one line each (not the whole help)", async () => {
    const missingArg = await runCli(["queue", "inspect"])
    expect(missingArg.code).toBe(2)
    expect(missingArg.stderr).toBe(
      "effect-asynq: Missing required argument: queue (see effect-asynq queue inspect --help)\n"
    )
    const missingFlag = await runCli(["task", "ls", "--state", "pending"])
    expect(missingFlag.code).toBe(2)
    expect(missingFlag.stdout).toBe("")
    expect(missingFlag.stderr).toBe("effect-asynq: Missing required flag: --queue (see effect-asynq task ls --help)\n")
    const badChoice = await runCli(["task", "ls", "--queue", "default", "--state", "sleeping"])
    expect(badChoice.code).toBe(2)
    expect(badChoice.stderr.split("\n").filter((l) => l !== "")).toHaveLength(1)
    expect(badChoice.stderr).toContain('Invalid value for flag --state: "sleeping"')
    expect(badChoice.stderr).toContain("(see effect-asynq task ls --help)")
  })

  it("a value the inspector rejects (page 0) is a usage error too: exit 2", async () => {
    const r = await runCli(["task", "ls", "--queue", "default", "--state", "pending", "--page", "0"], {
      REDIS_URL: testRedisUrl()
    })
    expect(r.code).toBe(2)
    expect(r.stderr).toBe("effect-asynq: page must be a whole number >= 1, got 0\n")
  })

  it("--help advertises no flag the CLI refuses: no --wizard (it has no interactive input), and --wizard is an unknown flag", async () => {
    for (const help of [await runCli(["--help"]), await runCli(["task", "ls", "--help"])]) {
      expect(help.code).toBe(0)
      expect(help.stdout).not.toContain("--wizard")
      expect(help.stdout).toContain("--log-level")
    }
    const r = await runCli(["--wizard"])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe(
      "effect-asynq: Unrecognized flag: --wizard in command effect-asynq (see effect-asynq --help)\n"
    )
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

  it("a database the server does not have is an error (not database 0), exit 1", async () => {
    const u = new URL(baseRedisUrl())
    u.pathname = "/100000"
    const outOfRange = await runCli(["stats", "--redis-url", u.toString()])
    expect(outOfRange.code).toBe(1)
    expect(outOfRange.stdout).toBe("")
    expect(outOfRange.stderr).toContain(
      `cannot use Redis at ${u.toString()}: the server refused database 100000 (ERR DB index is out of range)`
    )
  })
})

describe("CLI Redis addresses, checked before connecting", { timeout: 120_000 }, () => {
  const forms = "redis://[user:pass@]host:port[/db], rediss://… (TLS) or host:port[/db]"

  it("host:port/db is the shorthand of redis://host:port/db: it reads that database", async () => {
    await flushTestDb()
    const c = rawClient()
    try {
      await c.sadd("asynq:queues", "only-in-this-db")
    } finally {
      c.disconnect()
    }
    const { host } = new URL(baseRedisUrl())
    const r = await runCli(["queue", "ls", "--json", "--redis-url", `${host}/${testDb()}`])
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toContain("only-in-this-db")
    const env = await runCli(["queue", "ls", "--json"], { REDIS_URL: `${host}/${testDb()}` })
    expect(env.code).toBe(0)
    expect(JSON.parse(env.stdout)).toContain("only-in-this-db")
  })

  it("host:port without a database is database 0", async () => {
    const { host } = new URL(baseRedisUrl())
    const r = await runCli(["queue", "ls", "--json", "--redis-url", host])
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).not.toContain("only-in-this-db")
  })

  it("anything else is a usage error naming the expected form, before any connection: exit 2, one line", async () => {
    const cases: Array<[string, string]> = [
      ["foo:bar", "not a redis:// or rediss:// URL, nor host:port"],
      ["localhost", "not a redis:// or rediss:// URL, nor host:port"],
      ["http://127.0.0.1:6379", "not a redis:// or rediss:// URL, nor host:port"],
      ["127.0.0.1:99999/1", "the port must be 1 to 65535"],
      ["redis://127.0.0.1:6379/abc", "the database after the / must be a whole number"]
    ]
    for (const [url, reason] of cases) {
      const r = await runCli(["stats", "--redis-url", url])
      expect(r.code, url).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr).toBe(`effect-asynq: --redis-url expects ${forms}; got "${url}" (${reason})\n`)
    }
  })

  it("a password in a refused URL is not printed; a bad $REDIS_URL is named as such", async () => {
    const r = await runCli(["stats", "--redis-url", "redis://user:s3cret@127.0.0.1:6379/x"])
    expect(r.code).toBe(2)
    expect(r.stderr).not.toContain("s3cret")
    expect(r.stderr).toContain('got "redis://user:***@127.0.0.1:6379/x"')
    const env = await runCli(["stats"], { REDIS_URL: "foo:bar" })
    expect(env.code).toBe(2)
    expect(env.stderr).toBe(
      `effect-asynq: $REDIS_URL expects ${forms}; got "foo:bar" (not a redis:// or rediss:// URL, nor host:port)\n`
    )
  })
})
