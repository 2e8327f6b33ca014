// What the `kbqa` command prints goes to an operator's terminal, and much of it was typed by users (key names,
// emails, KB and organisation names, filenames). A control character there is an instruction to the terminal: ESC
// [2K erases the line, an OSC sequence sets the window title or a hyperlink, U+202E reverses what follows, and C1
// controls (U+0080–U+009F) act as ESC on some terminals. Everything printed passes through here first.

/**
 * Control characters (Cc) but the line feed, format characters (Cf: bidi overrides, zero-width ones) but ZWNJ and
 * ZWJ, and the line and paragraph separators. One character class with a one-character lookahead: linear.
 */
const UNSAFE_FOR_TERMINAL = /(?![\n\u200C\u200D])[\p{Cc}\p{Cf}\u2028\u2029]/gu;

function codePointHex(character: string): string {
  return (character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
}

/** Text for a terminal: each unsafe character shown as \u{XXXX}, so it is seen, not obeyed. Newlines stay. */
export function escapeForTerminal(text: string): string {
  return text.replace(UNSAFE_FOR_TERMINAL, (character) => `\\u{${codePointHex(character)}}`);
}

/**
 * JSON for a terminal: JSON.stringify escapes U+0000–U+001F but leaves DEL, the C1 controls and the format
 * characters raw; these become \uXXXX escapes (surrogate pairs above U+FFFF), so the JSON still parses the same.
 */
export function escapeJsonForTerminal(json: string): string {
  return json.replace(UNSAFE_FOR_TERMINAL, (character) =>
    Array.from(
      { length: character.length },
      (_, index) => `\\u${character.charCodeAt(index).toString(16).padStart(4, '0')}`,
    ).join(''),
  );
}
