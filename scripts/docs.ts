/**
 * Regenerates what the docs show from its source: docs/config.md from the config schema, and the
 * results table of README.md and docs/learning.md from results/learning.jsonl. `bun run docs`.
 */
import { renderConfigReference } from '../src/config/reference';
import { writeResultPages } from './results_table';

await Bun.write(new URL('../docs/config.md', import.meta.url), renderConfigReference());
console.log('wrote docs/config.md');
const pages = await writeResultPages();
console.log(pages.length ? `wrote the results table into ${pages.join(', ')}` : 'the results tables already match results/learning.jsonl');
