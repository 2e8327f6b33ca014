// The extractive answerer's answer-type cues and constraints (service/rag/answerCues.ts), without a server: what a
// question asks for, and whether a sentence can be its answer. Each pair below is a sentence that fits and one that
// only looks near, as the answer benchmark's tune split found them.
import test from 'ava';
import {
  answerKinds,
  fitsConstraints,
  holdsAnswerKind,
  namedWords,
  type AnswerKind,
} from '../../service/rag/answerCues.ts';

const fits = (question: string, sentence: string, context = '') => {
  const cue = answerKinds(question);
  return holdsAnswerKind(sentence, cue.kinds) && fitsConstraints(sentence, cue, context);
};

test('"how many X" wants a number that counts X, not a measure, an age or a time of day', (t) => {
  t.deepEqual(answerKinds('How many parking spaces does the car park have?').counted, ['parking', 'space']);
  t.deepEqual(answerKinds('How many of the community transport minibuses are electric?').counted, [
    'community',
    'transport',
    'minibuse',
  ]);
  t.true(
    fits('How many vans are in the depot fleet?', 'Each technician is given a van from the depot fleet of 34 vans.'),
  );
  t.true(fits('How many volunteer drivers does it have?', 'It has 6 minibuses and 48 volunteer drivers.'));
  // Not named at all: a bare count of something else may still answer ("12 cars" for vehicles).
  t.true(fits('How many vehicles can the ferry carry?', 'The ferry carries up to 12 cars.'));
  t.false(fits('How many parking spaces does the car park have?', 'The car park charges 5 pounds for a full day.'));
  t.false(fits('How many members does the rowing club have?', 'The rowing club takes beginners from the age of 11.'));
  t.false(fits('How many members does the club have?', 'Volunteers must be aged between 21 and 75.'));
  t.false(fits('How many members does the club have?', 'The nets are open to juniors on Tuesdays from 18:00.'));
  t.false(fits('How many customers complained last year?', 'Normal pressure: 3.8 bar'));
  // Named, but not counted: "members under 18 travel free" does not say how many members there are.
  t.false(
    fits('How many members does the club have?', 'Membership costs 12 pounds, and members under 18 travel free.'),
  );
});

test('a named day or month must be in the answer; "who is the …" names the role; "how deep is X" names X', (t) => {
  t.deepEqual([...answerKinds('When is the library open on Sundays?').namedDates], ['sunday']);
  t.true(fits('When is the library open on Saturdays?', 'On Saturdays the library opens from 10:00 to 13:00.'));
  t.false(fits('When is the library open on Sundays?', 'On Saturdays the library opens from 10:00 to 13:00.'));
  t.deepEqual(answerKinds("Who is the water board's safety officer?").role, ['safety', 'officer']);
  t.deepEqual(answerKinds('Who is the chief executive of the water board?').role, ['chief', 'executive']);
  t.deepEqual(answerKinds('Who founded the club?').role, []);
  t.true(fits("Who is the water board's safety officer?", 'Report it to the safety officer, Priya Ramsden.'));
  t.false(fits('Who is the chief executive of the water board?', 'The board was founded in 1952.'));
  t.deepEqual(answerKinds('How deep is Harrow Fell reservoir?').measured, ['harrow', 'fell', 'reservoir']);
  t.false(fits('How deep is Harrow Fell reservoir?', 'The centre at Harrow Fell has a practice trench 2 metres deep.'));
  t.true(fits('How long is the visitor permit valid?', 'Valid for: 10 days', 'Parking permits'));
  t.true(fits('How long is the hike to the crater rim?', 'Hiking to the crater rim takes about four hours.'));
  // The thing measured may be named by the passage's headings instead of the sentence.
  t.true(fits('How deep is the reservoir?', 'It is 30 metres deep at the dam.', 'Harrow Fell reservoir'));
});

test('a time of day, a number to ring, a speed, an event', (t) => {
  const kinds = (question: string) => [...answerKinds(question).kinds].sort() as AnswerKind[];
  t.deepEqual(kinds('At what time does the last train leave?'), ['clock']);
  t.deepEqual(kinds('How late is the museum open?'), ['clock']);
  t.true(fits('At what time does the shop open?', 'The shop opens from 09:00 to 17:00.'));
  t.true(fits('At what time does the shop open?', 'The shop opens at 9am.'));
  t.true(fits('When do boats moor at the north pontoon?', 'Boats moor at the north pontoon between six and nine.'));
  t.false(fits('When do boats moor at the pontoon?', 'Six boats moor at the pontoon.'));
  t.false(fits('At what time does the last train leave?', 'Trains run every 40 minutes during the day.'));
  t.deepEqual(kinds('What is the phone number of the leisure centre?'), ['phone']);
  t.deepEqual(kinds('What number can customers call to check an identity?'), ['phone']);
  t.true(fits('What is the phone number of the booking line?', 'Call the booking line on 01632 960415.'));
  t.true(fits("What is the control room's extension number?", 'The control room is on extension 4410.'));
  t.false(fits('What is the phone number of the leisure centre?', 'The leisure centre has a 25 metre pool.'));
  t.true(fits('What is the speed limit on the bridge?', 'The bridge has a speed limit of 20 mph.'));
  t.false(fits('What is the speed limit on Quarry Road?', 'The depot is at Quarry Road, 3.2 km north of the town.'));
  // "When does …?" may be answered by the event it happens at; "when" inside a clause asks for no time.
  t.true(fits('When does a game finish?', 'The game ends when the deck runs out for the second time.'));
  t.deepEqual(kinds('Which wins when an option is set both in the file and as a flag?'), []);
  t.deepEqual(kinds('How long do cats sleep, and when are they active?'), ['duration', 'length', 'time']);
  // A unit may follow one word on.
  t.true(fits('How long can someone be off ill?', 'A certificate is requested after 5 consecutive days away.'));
});

test('a count is of what is counted; an amount has its unit; "up to 18" is no time of day', (t) => {
  const fitsIn = (question: string, sentence: string, countedInPassages: boolean) => {
    const cue = answerKinds(question);
    return holdsAnswerKind(sentence, cue.kinds) && fitsConstraints(sentence, cue, '', countedInPassages);
  };
  // The passages speak of seats: a count of minibuses is no count of seats. Where they do not, a bare count may do.
  t.false(fitsIn('How many seats does each bus have?', 'It has 6 minibuses, each with a lift.', true));
  t.true(fitsIn('How many seats does each bus have?', 'It has 6 minibuses, each with a lift.', false));
  t.true(fitsIn('How many seats does each bus have?', 'Each bus has 16 seats.', true));
  // A unit counted is counted by a number with a unit of its kind.
  t.true(fitsIn('How many kilometres of mains are there?', 'The network has 610 km of mains.', true));
  // A number hyphened to a word describes it: "a one-day course" counts no days.
  t.false(fits('How many days of leave does a driver get?', 'Every driver attends a one-day course each spring.'));
  t.true(fits('How many days of leave does a driver get?', 'Every driver gets 25 days of leave.'));
  t.deepEqual([...answerKinds('How much water does the works produce a day?').kinds], ['amount']);
  t.true(fits('How much water does the works produce a day?', 'The works produces 18 megalitres a day.'));
  t.false(fits('How much water does the works produce a day?', 'The works serves only 900 people.'));
  t.true(fits('How much wider should the new pot be?', 'Choose a pot 5 centimetres wider.'));
  // Kitchen and pharmacy measures are amounts too, in words or digits.
  const syrup = 'How much maple syrup goes into the maple glaze for the pecan pie?';
  t.true(fits(syrup, 'The maple glaze uses three tablespoons of maple syrup and a pinch of sea salt.'));
  t.true(fits('How much paracetamol may a child take?', 'A child may take two 250 mg tablets a day.'));
  t.false(fits(syrup, 'The maple glaze is brushed on 3 times.'));
  t.false(fits('When was the reservoir built?', 'The works produces up to 18 megalitres of water a day.'));
  t.true(fits('When does the office open?', 'The office opens at 9 on weekdays.'));
});

test('names the question capitalises past its first word', (t) => {
  t.deepEqual(namedWords('What is the speed limit on Quarry Road?'), ['quarry', 'road']);
  t.deepEqual(namedWords('When is the library open?'), []);
  // A claim to check is no question; acronyms and words with digits may be spelt out where they are answered.
  t.deepEqual(namedWords('Bone Marrow (BM) transplantation is used to treat acute myeloid leukemia (AML).'), []);
  t.deepEqual(namedWords('Does vitamin B12 help the Ashdown DNA lab?'), ['ashdown']);
});
