// How a 429's message says the wait (service/commands/sessions.ts waitInWords): one unit, seconds up to 90, then
// whole minutes rounded up, so the wait said is never shorter than Retry-After.
import test from 'ava';
import { waitInWords } from '../../service/commands/sessions.ts';

test('seconds up to 90, singular for one', (t) => {
  t.is(waitInWords(1), '1 second');
  t.is(waitInWords(2), '2 seconds');
  t.is(waitInWords(90), '90 seconds');
});

test('over 90 seconds: whole minutes, rounded up', (t) => {
  t.is(waitInWords(91), '2 minutes');
  t.is(waitInWords(120), '2 minutes');
  t.is(waitInWords(121), '3 minutes');
  t.is(waitInWords(900), '15 minutes');
});

test('the minutes said never undercut the seconds', (t) => {
  for (let seconds = 91; seconds <= 3_600; seconds += 7) {
    const minutes = Number(waitInWords(seconds).split(' ')[0]);
    t.true(minutes * 60 >= seconds, `${seconds} s said as ${minutes} minutes`);
  }
});
