/** Redis Cluster's hash slot of a key: CRC16 (XMODEM) of the key or of its {hash tag}, mod 16384. */

const table = (() => {
  const t = new Uint16Array(256)
  for (let i = 0; i < 256; i++) {
    let c = i << 8
    for (let b = 0; b < 8; b++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff
    t[i] = c
  }
  return t
})()

const crc16 = (data: Uint8Array): number => {
  let crc = 0
  for (const byte of data) crc = ((crc << 8) & 0xffff) ^ table[((crc >> 8) ^ byte) & 0xff]!
  return crc
}

/** The part of a key that is hashed: the first non-empty `{…}` section, else the whole key. */
const hashPart = (key: Uint8Array): Uint8Array => {
  const open = key.indexOf(0x7b)
  if (open < 0) return key
  const close = key.indexOf(0x7d, open + 1)
  if (close < 0 || close === open + 1) return key
  return key.subarray(open + 1, close)
}

const encoder = new TextEncoder()

/** The hash slot of `key` (what `CLUSTER KEYSLOT key` answers). */
export const keySlot = (key: string): number => crc16(hashPart(encoder.encode(key))) % 16384
