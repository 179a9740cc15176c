/**
 * Execution ids are SHA-256 digests: effect's `Workflow.execute` hashes the workflow's idempotency
 * key with `subtle.digest` of the `WebCrypto` reference. Web Crypto's digest is asynchronous; in
 * Node it goes through the libuv thread pool and back (a job queued, a thread woken, the loop woken
 * again with the result) for a few dozen bytes, once per start. The engine's layer sets the
 * reference to the same `Crypto` with SHA-256 digests computed at once in TypeScript
 * (src/hash/sha256.ts: the same bytes) and handed back in an already resolved Promise; every other
 * member (other algorithms, `getRandomValues`, keys, …) is the `Crypto`'s own.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { WebCrypto } from "effect/crypto/WebCrypto"
import { sha256Bytes } from "../hash/sha256.js"

const isSha256 = (algorithm: unknown): boolean => {
  const name = typeof algorithm === "string" ? algorithm : (algorithm as { name?: unknown } | null)?.name
  return typeof name === "string" && name.toUpperCase() === "SHA-256"
}

const bytesOf = (data: unknown): Uint8Array | undefined =>
  data instanceof Uint8Array
    ? data
    : ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : data instanceof ArrayBuffer
        ? new Uint8Array(data)
        : undefined

/** Members of `target` bound to it (a Crypto's methods throw when called on anything else). */
const delegating = <T extends object>(target: T, own: Partial<Record<PropertyKey, unknown>>): T =>
  new Proxy(target, {
    get: (t, key) => {
      if (Object.hasOwn(own, key)) return own[key]
      const v = Reflect.get(t, key, t)
      return typeof v === "function" ? v.bind(t) : v
    }
  })

/** What the `WebCrypto` reference holds, as far as this module uses it. */
interface CryptoLike {
  readonly subtle?: { readonly digest: (algorithm: unknown, data: unknown) => Promise<ArrayBuffer> }
}

/** `crypto` with SHA-256 digests computed synchronously; undefined when it has no `subtle`. */
export const withSyncSha256 = <C extends object>(crypto: C | undefined): C | undefined => {
  const subtle = (crypto as CryptoLike | undefined)?.subtle
  if (crypto === undefined || subtle === undefined) return undefined
  const digest = (algorithm: unknown, data: unknown): Promise<ArrayBuffer> => {
    const bytes = isSha256(algorithm) ? bytesOf(data) : undefined
    return bytes === undefined
      ? subtle.digest(algorithm, data)
      : Promise.resolve(sha256Bytes(bytes).buffer as ArrayBuffer)
  }
  return delegating(crypto, { subtle: delegating(subtle, { digest }) })
}

/** Sets the `WebCrypto` reference to its current value with synchronous SHA-256 (unchanged without a `subtle`). */
export const syncSha256Layer: Layer.Layer<never> = Layer.effect(
  WebCrypto,
  Effect.gen(function* () {
    const crypto = yield* WebCrypto
    return withSyncSha256(crypto) ?? crypto
  })
)
