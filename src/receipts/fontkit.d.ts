// The few parts of fontkit (pdfkit's font engine) the PNG renderer uses: it ships no types.
declare module 'fontkit' {
  export interface PathCommand { command: 'moveTo' | 'lineTo' | 'quadraticCurveTo' | 'bezierCurveTo' | 'closePath'; args: number[] }
  export interface Glyph { advanceWidth: number; path: { commands: PathCommand[] } }
  export interface Font { unitsPerEm: number; ascent: number; descent: number; glyphForCodePoint(codePoint: number): Glyph }
  export function openSync(path: string): Font;
}
