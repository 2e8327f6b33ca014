// The answer benchmark's conversation split (`kbqa eval answers DIR --split conversations`): dialogues over the same
// documents, read from DIR/conversations.json (bench/answers/README.md describes the format) and checked against
// DIR/questions.json.
//
// A dialogue is a list of turns asked in one conversation: an `opening` question, then `follow_up` turns written as
// people write them ("And for children?", "When does it close?") and `topic_change` turns (a new subject mid-dialogue,
// asked in full). Every turn has a gold fact: `fact` names an answerable question of questions.json (its gold
// strings and document; that question is the fact asked standalone), or the turn carries its own `standalone`
// question with `answers` and `document` where questions.json has no question for the fact. Each dialogue is in one
// split: `tune` (the carried-term rule was tuned on it) or `held_out` (only reported on).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { AnswerDataset } from './answerDataset.ts';

export const DIALOGUE_SPLITS = ['tune', 'held_out'] as const;
export type DialogueSplit = (typeof DIALOGUE_SPLITS)[number];
export type TurnKind = 'opening' | 'follow_up' | 'topic_change';

const turnSchema = z
  .object({
    kind: z.enum(['opening', 'follow_up', 'topic_change']),
    query: z.string().min(1),
    fact: z.string().min(1).optional(),
    standalone: z.string().min(1).optional(),
    answers: z.array(z.string().min(1)).min(1).optional(),
    document: z.string().min(1).optional(),
  })
  .strict()
  .refine(
    (turn) =>
      turn.fact !== undefined
        ? turn.standalone === undefined && turn.answers === undefined && turn.document === undefined
        : turn.standalone !== undefined && turn.answers !== undefined && turn.document !== undefined,
    { message: 'a turn names either a fact of questions.json, or its own standalone, answers and document' },
  );

const fileSchema = z
  .object({
    dialogues: z
      .array(
        z.object({ id: z.string().min(1), split: z.enum(DIALOGUE_SPLITS), turns: z.array(turnSchema).min(2) }).strict(),
      )
      .min(1),
  })
  .strict();

/** A turn with its gold fact resolved: what it asks in the conversation and the same fact asked standalone. */
export interface DialogueTurn {
  kind: TurnKind;
  query: string;
  /** The questions.json id of the fact, or `<dialogue>.<turn index>` for a fact written in the dialogue. */
  fact: string;
  standalone: string;
  answers: string[];
  document: string;
}

export interface Dialogue {
  id: string;
  split: DialogueSplit;
  turns: DialogueTurn[];
}

function problemText(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
}

/**
 * Reads a dialogue file (by default DIR/conversations.json): the first turn of each dialogue is its opening and only
 * the first; facts resolve against the dataset's answerable questions, documents against its documents.
 */
export async function loadDialogues(file: string, dataset: AnswerDataset): Promise<Dialogue[]> {
  const parsed = fileSchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
  const name = file.split('/').pop();
  if (!parsed.success) throw new Error(`${name}: ${problemText(parsed.error)}`);
  const facts = new Map(
    dataset.questions.flatMap((question) => (question.kind === 'answerable' ? [[question.id, question]] : [])),
  );
  const documents = new Set(dataset.documents.map((document) => document.name));
  const ids = new Set<string>();
  return parsed.data.dialogues.map((dialogue) => {
    if (ids.has(dialogue.id)) throw new Error(`${name}: the dialogue id ${dialogue.id} is used twice`);
    ids.add(dialogue.id);
    const turns = dialogue.turns.map((turn, index): DialogueTurn => {
      const where = `${name}: ${dialogue.id} turn ${index + 1}`;
      if ((turn.kind === 'opening') !== (index === 0)) throw new Error(`${where}: the opening is the first turn only`);
      if (turn.fact !== undefined) {
        const question = facts.get(turn.fact);
        if (!question) throw new Error(`${where}: ${turn.fact} is not an answerable question of questions.json`);
        return {
          kind: turn.kind,
          query: turn.query,
          fact: turn.fact,
          standalone: question.question,
          answers: question.answers,
          document: question.document,
        };
      }
      if (!documents.has(turn.document!)) throw new Error(`${where}: no document ${turn.document}`);
      return {
        kind: turn.kind,
        query: turn.query,
        fact: `${dialogue.id}.${index + 1}`,
        standalone: turn.standalone!,
        answers: turn.answers!,
        document: turn.document!,
      };
    });
    return { id: dialogue.id, split: dialogue.split, turns };
  });
}
