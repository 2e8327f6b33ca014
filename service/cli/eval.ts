export async function runEvalCommand(): Promise<number> { console.error('kbqa eval: not built yet'); return 1; }
