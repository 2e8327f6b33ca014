// The round-robin queue behind the model pool's question lane: owners in turn, each owner's items in order.
import test from 'ava';
import { FairQueue } from '../../service/fairQueue.ts';

const takeAll = <T>(queue: FairQueue<T>) => {
  const taken: T[] = [];
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) taken.push(item);
  return taken;
};

test("owners take turns; each owner's items keep their order", (t) => {
  const queue = new FairQueue<string>();
  for (let index = 1; index <= 4; index += 1) queue.push('a', `a${index}`);
  queue.push('b', 'b1');
  queue.push('c', 'c1');
  queue.push('b', 'b2');
  t.is(queue.length, 7);
  t.deepEqual(takeAll(queue), ['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
  t.is(queue.length, 0);
});

test('an owner arriving late is served after at most one item of each owner ahead of it', (t) => {
  const queue = new FairQueue<string>();
  for (let index = 1; index <= 100; index += 1) queue.push('burst', `burst${index}`);
  t.is(queue.shift(), 'burst1');
  queue.push('late', 'late1');
  t.deepEqual([queue.shift(), queue.shift(), queue.shift()], ['burst2', 'late1', 'burst3']);
  t.is(queue.waitingOf('burst'), 97);
});

test('remove takes one item out of line; drain empties the queue', (t) => {
  const queue = new FairQueue<string>();
  queue.push('a', 'a1');
  queue.push('b', 'b1');
  queue.push('a', 'a2');
  t.true(queue.remove('b', 'b1'));
  t.false(queue.remove('b', 'b1'));
  t.is(queue.length, 2);
  t.deepEqual(queue.drain().sort(), ['a1', 'a2']);
  t.is(queue.length, 0);
  t.is(queue.shift(), undefined);
});
