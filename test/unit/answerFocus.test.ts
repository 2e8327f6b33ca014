// What an answer sentence must be about (service/rag/answerFocus.ts), without a server: the question's names, its
// numbers, and for "who" someone. Each pair is a sentence that answers and one that is near in words but about
// another thing, as the answer benchmark's tune splits found them.
import test from 'ava';
import { fitsFocus, questionFocus } from '../../service/rag/answerFocus.ts';
import { contentTerms } from '../../service/rag/terms.ts';

/** Other retrieved passages, which name none of the questions' things. */
const OTHERS = ['The depot is staffed on weekdays.', 'Pressure is measured at the lowest hydrant.'];

/** Whether `sentence`, of `passage` (under `context`), is about what `question` asks, with OTHERS retrieved too. */
function about(question: string, sentence: string, passage = sentence, context = '', others = OTHERS): boolean {
  const holders = [passage, ...others].map((text) => contentTerms(`${text} ${context}`));
  return fitsFocus(sentence, context, holders[0], questionFocus(question, holders));
}

test("the question's names: in the sentence, or the sentence names nothing else", (t) => {
  const works =
    'Harrow Fell treatment works produces 18 megalitres a day. The smallest works, at Kettlebeck, serves 900 people.';
  t.false(
    about(
      'How much water does Kettlebeck works produce?',
      'Harrow Fell treatment works produces 18 megalitres a day.',
      works,
    ),
  );
  t.true(
    about(
      'How much water does Harrow Fell works produce?',
      'Harrow Fell treatment works produces 18 megalitres a day.',
      works,
    ),
  );
  // "It", "the museum": the sentence goes on about the thing named before it.
  const museum = 'The Lowe Valley Museum holds 3,000 tools. The museum is closed on Mondays.';
  t.true(about('When is the Lowe Valley Museum closed?', 'The museum is closed on Mondays.', museum));
  // A name not in the passage at all: never.
  t.false(about('When is the Corn Exchange closed?', 'The museum is closed on Mondays.', museum));
  // The town's name, in most passages, is no thing of its own; nor are days and a table row's labels.
  t.true(
    about(
      'Who is the town clerk?',
      'The town clerk of Lowmoor is Margaret Oyelaran.',
      'The town clerk of Lowmoor is Margaret Oyelaran.',
    ),
  );
  t.true(
    about(
      'Which reservoir feeds the Upper Valley zone?',
      'Zone: Upper Valley; Service reservoir: Harrow Top; Normal pressure: 2.9 bar',
    ),
  );
});

test("the question's numbers are in the sentence or its headings; a claim is not checked so", (t) => {
  t.true(about('At what time does route S2 depart?', 'Route: S2; Day: Wednesday; Departs: 09:25'));
  t.false(about('At what time does route S5 depart?', 'Route: S2; Day: Wednesday; Departs: 09:25'));
  t.false(
    about('How much is a ticket for a child aged 10?', 'Adult tickets cost 9.50 pounds, and children under 5 go free.'),
  );
  t.true(about('How much does a journey of up to 8 km cost?', 'A single journey of up to 8 km costs 3 pounds.'));
  t.true(about('Children aged 10 travel free.', 'Adult tickets cost 9.50 pounds, and children under 5 go free.'));
});

test('"who" is answered by someone the question does not name, or by an agent', (t) => {
  t.true(about('Who built the castle?', 'The castle was built in 1284 by Sir Hugh de Lowe.'));
  t.true(about('Who handles bursts on wide mains?', 'Bursts on wide mains are handled by the mains gang.'));
  t.true(about('Who is the operations manager?', 'The operations manager is Declan Whitby.'));
  t.false(
    about(
      'Who chairs the trustees of Lowmoor Community Transport?',
      'Lowmoor Community Transport is a charity that runs minibuses.',
    ),
  );
});
