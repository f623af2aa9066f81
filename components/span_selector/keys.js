// Keys 1–9 and 0 pick the first ten span types; the letters of the row below the digits pick the
// next ones (MHALO has twelve types), skipping U, which is Undo on the page. Each type's button
// shows its key.

const LETTERS = "qwertyiop";

export function typeKeyLabel(index) {
  if (index < 9) return String(index + 1);
  if (index === 9) return "0";
  return LETTERS[index - 10]?.toUpperCase() ?? "";
}

export function typeIndexOfKey(key) {
  // The type index a key picks, or -1 when the key picks none.
  if (/^[0-9]$/.test(key)) return key === "0" ? 9 : Number(key) - 1;
  const letter = key.length === 1 ? LETTERS.indexOf(key.toLowerCase()) : -1;
  return letter === -1 ? -1 : 10 + letter;
}
