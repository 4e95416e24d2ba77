/**
 * The main-job benchmark (src/bench/main_job.ts, docs/engine.md): N steps of the default
 * training run on every matmul path present, optionally against another ref, into JSON.
 *
 *   bun run bench:main [--steps 8] [--rounds 1] [--paths auto,none] [--out output/bench/main.json] [--base DIR] [--against REF]
 */
import { resolve } from 'node:path';
import { parseMainJobArgs, resultLines, runMainJob } from '../../src/bench/main_job';
import { AgenticError } from '../../src/errors';
import { writeFileAtomic } from '../../src/util/atomic';
import { checkOutputPath } from '../../src/cli/args';

const root = resolve(import.meta.dir, '../..');
try {
  const args = parseMainJobArgs(process.argv.slice(2));
  const out = resolve(args.out);
  checkOutputPath(out);
  const result = await runMainJob(root, args, (line) => console.error(line));
  writeFileAtomic(out, `${JSON.stringify(result, null, 2)}\n`);
  for (const line of resultLines(result)) console.log(line);
  console.log(`wrote ${out}`);
} catch (error) {
  if (!(error instanceof AgenticError)) throw error;
  console.error(`error: ${error.message}`);
  process.exit(error.exitCode);
}
