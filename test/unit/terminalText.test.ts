// What `kbqa` prints to an operator's terminal (service/cli/terminalText.ts): control, C1 and format characters
// are shown as escapes, never obeyed; newlines, ZWJ and ZWNJ stay; escaped JSON still parses to the same value.
import test from 'ava';
import { escapeForTerminal, escapeJsonForTerminal } from '../../service/cli/terminalText.ts';

test('escapeForTerminal: ESC, BEL and DEL become visible escapes', (t) => {
  t.is(escapeForTerminal('a\u001b[2Kb'), 'a\\u{001B}[2Kb');
  t.is(escapeForTerminal('ring\u0007'), 'ring\\u{0007}');
  t.is(escapeForTerminal('x\u007f'), 'x\\u{007F}');
});

test('escapeForTerminal: C1 controls, bidi overrides and line separators are escaped', (t) => {
  t.is(escapeForTerminal('\u009b31m'), '\\u{009B}31m');
  t.is(escapeForTerminal('evil\u202etxt.exe'), 'evil\\u{202E}txt.exe');
  t.is(escapeForTerminal('a\u2028b\u2029c'), 'a\\u{2028}b\\u{2029}c');
  t.is(escapeForTerminal('zero\u200bwidth'), 'zero\\u{200B}width');
});

test('escapeForTerminal: newlines, ZWJ, ZWNJ and ordinary text are kept as they are', (t) => {
  const kept = 'line one\nline two: 👩\u200d💻 می\u200cخواهم, café, 東京';
  t.is(escapeForTerminal(kept), kept);
});

test('escapeForTerminal: a tab and a carriage return are controls too', (t) => {
  t.is(escapeForTerminal('a\tb\rc'), 'a\\u{0009}b\\u{000D}c');
});

test('escapeJsonForTerminal: the characters JSON.stringify leaves raw become \\u escapes and the JSON parses the same', (t) => {
  const value = { name: 'evil\u202e\u009b\u007f', plain: 'café\n' };
  const json = JSON.stringify(value);
  const escaped = escapeJsonForTerminal(json);
  t.false(/[\u007f-\u009f\u202e]/u.test(escaped), escaped);
  t.true(escaped.includes('\\u202e'));
  t.deepEqual(JSON.parse(escaped), value);
});

test('escapeJsonForTerminal: a format character above U+FFFF is written as its surrogate pair', (t) => {
  const tag = '\u{E0041}'; // TAG LATIN CAPITAL LETTER A (Cf)
  const escaped = escapeJsonForTerminal(JSON.stringify({ tag }));
  t.true(escaped.includes('\\udb40\\udc41'), escaped);
  t.is(JSON.parse(escaped).tag, tag);
});
