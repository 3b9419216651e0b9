/**
 * The gateway's icon at /favicon.ico, which every browser asks for on every page (/app, /docs): a
 * 32×32 ICO (one 32-bit bitmap, the format every browser and OS reads), drawn here in code so no
 * binary file is kept: the panel's blue, rounded, with a white gate. Built once at start (4,286 bytes).
 */
const SIZE = 32
const RADIUS = 6
const BLUE = [0x23, 0x46, 0xc7] as const // the panel's --accent

/** Whether (x, y) is inside the rounded square. */
const inside = (x: number, y: number) => {
  const cx = x < RADIUS ? RADIUS : x >= SIZE - RADIUS ? SIZE - RADIUS - 1 : x
  const cy = y < RADIUS ? RADIUS : y >= SIZE - RADIUS ? SIZE - RADIUS - 1 : y
  return (x - cx) ** 2 + (y - cy) ** 2 <= RADIUS ** 2
}

/** The gate: two posts and a lintel, in white (y from the top). */
const gate = (x: number, y: number) =>
  (y >= 8 && y <= 11 && x >= 7 && x <= 24) || (y >= 8 && y <= 24 && ((x >= 9 && x <= 12) || (x >= 19 && x <= 22)))

/** The ICO file: ICONDIR, one ICONDIRENTRY, then a BITMAPINFOHEADER, BGRA rows bottom-up and the AND mask. */
export const faviconIco = (): Uint8Array => {
  const pixels = SIZE * SIZE * 4
  const mask = SIZE * 4 // one bit a pixel, rows padded to 32 bits: all 0 (the alpha channel decides)
  const image = 40 + pixels + mask
  const out = Buffer.alloc(6 + 16 + image)
  out.writeUInt16LE(0, 0)
  out.writeUInt16LE(1, 2) // an icon
  out.writeUInt16LE(1, 4) // one image
  out.writeUInt8(SIZE, 6)
  out.writeUInt8(SIZE, 7)
  out.writeUInt16LE(1, 10) // planes
  out.writeUInt16LE(32, 12) // bits a pixel
  out.writeUInt32LE(image, 14)
  out.writeUInt32LE(22, 18) // where the image starts
  out.writeUInt32LE(40, 22) // BITMAPINFOHEADER
  out.writeInt32LE(SIZE, 26)
  out.writeInt32LE(SIZE * 2, 30) // the colours and the mask
  out.writeUInt16LE(1, 34)
  out.writeUInt16LE(32, 36)
  out.writeUInt32LE(pixels + mask, 42)
  for (let row = 0; row < SIZE; row++) {
    const y = SIZE - 1 - row // bottom-up
    for (let x = 0; x < SIZE; x++) {
      const at = 62 + (row * SIZE + x) * 4
      if (!inside(x, y)) continue // transparent
      const [r, g, b] = gate(x, y) ? [255, 255, 255] : BLUE
      out[at] = b
      out[at + 1] = g
      out[at + 2] = r
      out[at + 3] = 255
    }
  }
  return out
}
