/** Reading the fields of array replies read with buffers (the inspector scripts' rows). */

const decoder = new TextDecoder()

/** Bytes (a Buffer or any Uint8Array) as UTF-8 text. */
export const utf8Text = (bytes: Uint8Array): string => decoder.decode(bytes)

/** A bulk string (bytes or string) as text; null/false as undefined. */
export const textField = (v: unknown): string | undefined =>
  v === null || v === undefined
    ? undefined
    : v instanceof Uint8Array
      ? utf8Text(v)
      : typeof v === "string"
        ? v
        : String(v)

/** A bulk string as bytes; null or empty as undefined. */
export const bytesField = (v: unknown): Uint8Array | undefined => {
  if (v instanceof Uint8Array) return v.length === 0 ? undefined : new Uint8Array(v.buffer, v.byteOffset, v.length)
  if (typeof v === "string") return v.length === 0 ? undefined : new TextEncoder().encode(v)
  return undefined
}

/** An integer or numeric bulk string; undefined when absent. */
export const numField = (v: unknown): number | undefined => {
  if (typeof v === "number") return v
  const t = textField(v)
  if (t === undefined || t === "") return undefined
  const n = Number(t)
  return Number.isFinite(n) ? n : undefined
}
