/** Regenerates docs/config.md from the config schema: `bun run docs`. */
import { renderConfigReference } from '../src/config/reference';

await Bun.write(new URL('../docs/config.md', import.meta.url), renderConfigReference());
console.log('wrote docs/config.md');
