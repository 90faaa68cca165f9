// Numbers and lists in the lesson's prose as en-US writes them, without `Intl`: a page's first
// `toLocaleString` or `Intl` formatter loads the browser's locale data (see format.js's `grouped`).

import { grouped } from '../format.js';

/** `x` rounded to at most `digits` decimals, trailing zeros dropped, its whole part grouped: "1,234.5". */
export function decimal(x, digits) {
  const rounded = Number(x.toFixed(digits));
  const [whole, fraction] = String(Math.abs(rounded)).split('.');
  return `${rounded < 0 ? '-' : ''}${grouped(Number(whole))}${fraction ? `.${fraction}` : ''}`;
}

/** "A or B", "A, B, or C", as `Intl.ListFormat('en', { type: 'disjunction' })` writes them. */
export const either = (names) =>
  names.length < 3 ? names.join(' or ') : `${names.slice(0, -1).join(', ')}, or ${names.at(-1)}`;
