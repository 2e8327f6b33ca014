// Character classes (and blank collapsing) for the hand-written scans over a stranger's text (sentences.ts, extraction/pdfLayout.ts …):
// one definition each, so every scan agrees on what a blank or a letter is.

/** A blank: space, tab, line and page breaks, no-break space. */
export function isBlankChar(char: string): boolean {
  return (
    char === ' ' ||
    char === '\t' ||
    char === '\n' ||
    char === '\r' ||
    char === '\f' ||
    char === '\v' ||
    char === '\u00a0'
  );
}

/** A letter of any script that has case (and so can be told from a digit or a mark). */
export function isLetter(char: string): boolean {
  return char.toLowerCase() !== char.toUpperCase();
}

export function isLowercaseLetter(char: string): boolean {
  return char !== char.toUpperCase() && char === char.toLowerCase();
}

export function isDigit(char: string): boolean {
  return char >= '0' && char <= '9';
}

/** Runs of blanks as one space, none at either end. */
export function collapseBlanks(text: string): string {
  let out = '';
  let pending = false;
  for (const char of text) {
    if (isBlankChar(char)) {
      pending = out !== '';
    } else {
      if (pending) out += ' ';
      out += char;
      pending = false;
    }
  }
  return out;
}
