/**
 * The Redis address a shell user types (`--redis-url`, or `$REDIS_URL`), checked before anything
 * connects: a `redis://` or `rediss://` URL, or the shorthand `host:port[/db]`. Anything else is an
 * InvalidArgument (a usage error, exit 2) naming the expected form, never a misparsed address.
 */
import * as Effect from "effect/Effect"
import { InvalidArgument } from "../../src/broker/errors.js"

/** The forms the CLI accepts, as its messages name them. */
export const redisUrlForms = "redis://[user:pass@]host:port[/db], rediss://… (TLS) or host:port[/db]"

/** `host:port[/db]`: a host name, an IPv4 address or an IPv6 address in brackets; a port; a database. */
const shorthand = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d+)(?:\/(\d+))?$/

/** The address with its password replaced, for messages. */
const masked = (text: string): string => text.replace(/^(rediss?:\/\/[^:@/]*:)[^@/]*@/i, "$1***@")

const refuse = (source: string, text: string, reason: string) =>
  new InvalidArgument({
    field: source,
    message: `${source === "REDIS_URL" ? "$REDIS_URL" : `--${source}`} expects ${redisUrlForms}; got "${masked(text)}" (${reason})`
  })

const portOk = (port: string) => /^\d+$/.test(port) && Number(port) >= 1 && Number(port) <= 65535

/**
 * The address as a `redis://` or `rediss://` URL, or an InvalidArgument saying what is wrong.
 * `source` names where it came from: a flag name (`redis-url`) or `REDIS_URL`.
 */
export const parseRedisUrl = (source: string, text: string): Effect.Effect<string, InvalidArgument> =>
  Effect.suspend(() => {
    const short = shorthand.exec(text)
    if (short !== null) {
      const [, host, port, db] = short
      if (!portOk(port!)) return Effect.fail(refuse(source, text, "the port must be 1 to 65535"))
      return Effect.succeed(`redis://${host}:${port}${db !== undefined ? `/${db}` : ""}`)
    }
    if (!/^rediss?:\/\//i.test(text))
      return Effect.fail(refuse(source, text, "not a redis:// or rediss:// URL, nor host:port"))
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return Effect.fail(refuse(source, text, "not a valid URL"))
    }
    if (url.hostname === "") return Effect.fail(refuse(source, text, "no host"))
    if (url.port !== "" && !portOk(url.port)) return Effect.fail(refuse(source, text, "the port must be 1 to 65535"))
    if (!/^\/?(\d+)?$/.test(url.pathname))
      return Effect.fail(refuse(source, text, "the database after the / must be a whole number"))
    return Effect.succeed(text)
  })
