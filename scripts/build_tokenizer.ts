/**
 * Builds agentic's embedded default tokenizer: `bun scripts/build_tokenizer.ts` (or `bun run tokenizer`).
 *
 * Plays random episodes of every built-in environment (default config), renders each one as a
 * chat through the built-in template, trains a byte-level BPE on that text, and writes
 * assets/tokenizer/{tokenizer.json,tokenizer_config.json}. Re-run it after adding or changing a
 * built-in env (envs with seats are not read, below); `--check` exits 1 if the committed files
 * differ from a fresh build.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bpeTokenizerConfig, bpeTokenizerJson, trainBpe } from '../src/model/bpe';
import { BUILTIN_CHAT_TEMPLATE, renderChatTemplate, type TemplateMessage } from '../src/model/chat_template';
import { PluginHost } from '../src/host/plugin_host';
import { hasWarmStartHook } from '../src/sdk/warm_start_hooks';
import { writeFileAtomic } from '../src/util/atomic';

const VOCAB_SIZE = 1024;
const EPISODES_PER_ENV = 200;
const MAX_TURNS = 30;

const root = resolve(import.meta.dir, '..');
const outDir = join(root, 'assets/tokenizer');

/** One text per episode: the conversation a policy would see, with random valid actions as its turns. */
async function collectCorpus(): Promise<{ texts: string[]; envs: string[] }> {
  const host = new PluginHost(root);
  const texts: string[] = [];
  const envs: string[] = [];
  // Envs with seats (tic_tac_toe, kuhn_poker, connect_four, simple_negotiation) are left out: their
  // text would retrain the vocabulary, shift the ids of every prompt and void the recorded learning
  // results and the benchmark's base; a byte-level BPE writes their text from the pieces it has
  // (docs/multi_agent.md).
  // Envs that cannot run on their defaults alone (agent: its program must be named) have no text to give.
  const played = host.registry.list('env').filter((e) => e.builtin && !e.definition.seats && e.definition.config.safeParse({}).success);
  for (const entry of played) {
    const plugin = entry.definition;
    envs.push(plugin.name);
    for (let seed = 0; seed < EPISODES_PER_ENV; seed++) {
      const env = new plugin.env(plugin.config.parse({}), host.envContext());
      const reset = await env.reset(seed);
      const messages: TemplateMessage[] = [{ role: 'user', content: `${reset.info.instruction}\n${reset.observation}` }];
      for (let turn = 0; turn < MAX_TURNS; turn++) {
        const action = env.sampleRandomAction();
        // every other episode thinks first, as warm starts with warm_start.think teach, and asks about the board
        const notes = seed % 2 === 1 && hasWarmStartHook(env, 'stateNotes') ? `<think>${env.stateNotes()}</think>` : '';
        if (seed % 2 === 1 && hasWarmStartHook(env, 'stateQuestions')) for (const q of env.stateQuestions()) texts.push(`${q.question}\n${q.answer}`);
        messages.push({ role: 'assistant', content: `${notes}${action}` });
        const step = await env.step(action);
        const feedback = [step.info.actionDesc, step.observation].filter((s) => typeof s === 'string' && s !== '').join('\n');
        if (step.terminated || step.truncated) {
          if (feedback) texts.push(feedback);
          break;
        }
        messages.push({ role: 'user', content: feedback });
      }
      await env.close();
      texts.push(renderChatTemplate(BUILTIN_CHAT_TEMPLATE, messages, { addGenerationPrompt: false }));
    }
  }
  return { texts, envs };
}

const { texts, envs } = await collectCorpus();
const trained = trainBpe(texts, { vocabSize: VOCAB_SIZE });
const files = {
  'tokenizer.json': `${JSON.stringify(bpeTokenizerJson(trained), null, 1)}\n`,
  'tokenizer_config.json': `${JSON.stringify(bpeTokenizerConfig(trained, BUILTIN_CHAT_TEMPLATE), null, 2)}\n`,
};
const size = trained.vocab.length + trained.specialTokens.length;
const summary = `envs ${envs.join(', ')}; ${texts.length} texts, ${texts.reduce((n, t) => n + t.length, 0)} chars; vocabulary ${size} (${trained.merges.length} merges, ${trained.specialTokens.length} special)`;

if (process.argv.includes('--check')) {
  const stale = Object.entries(files).filter(([name, text]) => {
    try {
      return readFileSync(join(outDir, name), 'utf8') !== text;
    } catch {
      return true;
    }
  });
  if (stale.length > 0) {
    console.error(`assets/tokenizer is out of date (${stale.map(([n]) => n).join(', ')}); run bun scripts/build_tokenizer.ts`);
    process.exit(1);
  }
  console.log(`assets/tokenizer is up to date: ${summary}`);
} else {
  mkdirSync(outDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileAtomic(join(outDir, name), text);
  console.log(`wrote assets/tokenizer: ${summary}`);
}
