/**
 * Checks that every shipped coding task passes its own tests with its reference solution, through
 * the code_tests reward (the default test suite checks a sample). Run: bun plugins/datasets/_generate/check_coding.ts
 */
import { builtinRows } from '../_index';
import codeTests from '../../rewards/code_tests';

let failures = 0;
let total = 0;
for (const split of ['coding/train', 'coding/val']) {
  for (const row of builtinRows(split)) {
    total++;
    const result = await codeTests.score({ response: `\`\`\`python\n${row.solution}\`\`\``, trajectory: [], row });
    if (typeof result === 'number' || result.reward !== 1) {
      failures++;
      console.error(`${split}: ${row.entry_point}: ${JSON.stringify(result)}`);
    }
  }
}
console.log(`${total - failures}/${total} coding tasks pass with their reference solutions`);
process.exit(failures === 0 ? 0 : 1);
