// Keys 1–9 and 0 pick the first ten span types.

export function typeKeyLabel(index) {
  if (index < 9) return String(index + 1);
  return index === 9 ? "0" : "";
}

export function typeIndexOfKey(key) {
  // The type index a key picks, or -1 when the key is not a digit.
  if (!/^[0-9]$/.test(key)) return -1;
  return key === "0" ? 9 : Number(key) - 1;
}
