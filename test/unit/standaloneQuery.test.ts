// How a follow-up is made standalone without a model (service/rag/standaloneQuery.ts), on turns of the answer
// benchmark's conversation split (bench/answers/conversations.json), where the rule was measured.
import test from 'ava';
import { CARRIED_TERMS, standaloneQuery } from '../../service/rag/standaloneQuery.ts';

const library = {
  standaloneQuery: 'When is Lowmoor Library open on Saturdays?',
  citedTitles: ['library-and-leisure.md'],
};

test('the first turn is searched as it is', (t) => {
  t.is(standaloneQuery('When was Lowmoor Castle built?', null), 'When was Lowmoor Castle built?');
});

test('a connective or a pronoun leans on the topic: its terms are carried after the question', (t) => {
  const castle = { standaloneQuery: 'How much is an adult ticket to Lowmoor Castle?', citedTitles: [] };
  t.is(standaloneQuery('And for children?', castle), 'And for children? adult ticket lowmoor castle');
  t.is(standaloneQuery('When is it open?', castle), 'When is it open? adult ticket lowmoor castle');
});

test('a question naming nothing of its own leans on the topic too ("How many books can I borrow?")', (t) => {
  // Asked alone, both miss on the benchmark (nothing says "library" or "dial-a-ride"); with the topic they find it.
  t.is(
    standaloneQuery('How many books can I borrow?', library),
    'How many books can I borrow? lowmoor library open saturdays leisure md',
  );
  t.is(
    standaloneQuery("What's the phone number?", {
      standaloneQuery: 'By when must a dial-a-ride journey be booked?',
      citedTitles: [],
    }),
    "What's the phone number? dial ride journey booked",
  );
});

test('a question with a topic of its own is searched as it is: a name among its new words, or four new terms', (t) => {
  for (const question of [
    'Where does Lowmoor Rovers play its home games?',
    'How many volunteer drivers does Lowmoor Community Transport have?',
    'And when does S2 leave on Fridays at the latest?',
  ])
    t.is(standaloneQuery(question, library), question);
  const swim = 'How much is an adult swim at the leisure centre?';
  t.is(standaloneQuery(swim, { standaloneQuery: 'Where is the Lowe Valley Museum?', citedTitles: [] }), swim);
});

test(`at most ${CARRIED_TERMS} terms are carried, the most recent first`, (t) => {
  const query = standaloneQuery('And its range?', {
    standaloneQuery:
      'How many of them are electric? vans depot fleet water board field handbook standby rota weekend allowance',
    citedTitles: [],
  });
  const carried = query.slice('And its range? '.length).split(' ');
  t.is(carried.length, CARRIED_TERMS);
  t.deepEqual(carried.slice(0, 2), ['electric', 'vans']);
  t.false(carried.includes('allowance'), 'the oldest terms go first');
});
