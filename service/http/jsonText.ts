// Checks on a JSON body's text made before JSON.parse sees it. V8's JSON.parse has no depth limit and holds the event
// loop for the whole parse: a 4 MB body of two million '[' took 0.9 s. One linear pass decides first.

const OPEN_BRACE = 0x7b; // {
const CLOSE_BRACE = 0x7d; // }
const OPEN_BRACKET = 0x5b; // [
const CLOSE_BRACKET = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * The deepest nesting of objects and arrays in `text`, counting only brackets outside strings, or `maxDepth + 1` as
 * soon as that is passed (the scan stops there). One pass, constant memory: it never backtracks, whatever the text.
 * It does not validate JSON; JSON.parse still does, on text this has found shallow enough.
 */
export function jsonNestingDepth(text: string, maxDepth: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH)
        index += 1; // the escaped character, whatever it is, cannot end the string
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth += 1;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > maxDepth) return deepest;
      }
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return deepest;
}

/**
 * True when any object in `value` has an own "__proto__" key (JSON.parse makes it an own property, harmless until
 * some spread or Object.assign copies it onto a prototype). Iterative, over a value already bounded in depth.
 */
export function hasProtoKey(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current !== 'object' || current === null) continue;
    if (Array.isArray(current)) {
      for (const item of current) pending.push(item);
    } else {
      if (Object.hasOwn(current, '__proto__')) return true;
      for (const item of Object.values(current)) pending.push(item);
    }
  }
  return false;
}
