/**
 * Go's string quoting as asynq's option strings use it: `%q` (strconv.Quote) and encoding/json's
 * default output (HTML-safe: <, >, & as \u003c \u003e \u0026), plus strconv.Unquote to read them.
 */

/** JS strings may hold lone surrogates; Go sees their UTF-8 form as U+FFFD. */
const wellFormed = (s: string) =>
  s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD")

// unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u
const shortEscapes: Record<string, string> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v"
}
const hex = (n: number, width: number) => n.toString(16).padStart(width, "0")

/** Go's `strconv.Quote(s)`, i.e. `fmt.Sprintf("%q", s)`. */
export const goQuote = (s: string): string => {
  let out = '"'
  for (const ch of wellFormed(s)) {
    const cp = ch.codePointAt(0)!
    if (ch === '"' || ch === "\\") out += `\\${ch}`
    else if (printable.test(ch)) out += ch
    else if (shortEscapes[ch] !== undefined) out += shortEscapes[ch]
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`
    else out += `\\U${hex(cp, 8)}`
  }
  return `${out}"`
}

/** Go's `json.Marshal` output for a value of strings (HTML-escaped, as Go does by default). */
export const goJson = (v: string | ReadonlyArray<string> | Readonly<Record<string, string>>): string => {
  const clean = typeof v === "string" ? wellFormed(v) : Array.isArray(v) ? v.map(wellFormed) : v
  return JSON.stringify(clean)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029")
}

const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, "\\": 92, '"': 34 }

/** Go's `strconv.Unquote` for a double-quoted string. Throws on bad syntax. */
export const goUnquote = (q: string): string => {
  if (q.length < 2 || !q.startsWith('"') || !q.endsWith('"')) throw new Error(`not a Go quoted string: ${q}`)
  const body = q.slice(1, -1)
  const bytes: Array<number> = []
  const enc = new TextEncoder()
  const pushRune = (cp: number) =>
    bytes.push(...enc.encode(String.fromCodePoint(cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000) ? 0xfffd : cp)))
  for (let i = 0; i < body.length; ) {
    const ch = body[i]!
    if (ch === '"' || ch === "\n") throw new Error(`not a Go quoted string: ${q}`)
    if (ch !== "\\") {
      const cp = body.codePointAt(i)!
      pushRune(cp)
      i += cp > 0xffff ? 2 : 1
      continue
    }
    const e = body[i + 1]
    if (e === undefined) throw new Error(`not a Go quoted string: ${q}`)
    if (simple[e] !== undefined) {
      bytes.push(simple[e]!)
      i += 2
    } else if (e === "x" || e === "u" || e === "U") {
      const n = e === "x" ? 2 : e === "u" ? 4 : 8
      const digits = body.slice(i + 2, i + 2 + n)
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(digits)) throw new Error(`bad escape in ${q}`)
      const v = parseInt(digits, 16)
      if (e === "x") bytes.push(v)
      else pushRune(v)
      i += 2 + n
    } else if (/[0-7]/.test(e)) {
      const digits = body.slice(i + 1, i + 4)
      if (!/^[0-7]{3}$/.test(digits) || parseInt(digits, 8) > 255) throw new Error(`bad escape in ${q}`)
      bytes.push(parseInt(digits, 8))
      i += 4
    } else throw new Error(`bad escape in ${q}`)
  }
  return new TextDecoder().decode(new Uint8Array(bytes))
}
