export async function runEvalCommand(_action: string | undefined, _rest: string[], _options: Record<string, unknown>): Promise<number> { console.error('kbqa eval: not built yet'); return 1; }
