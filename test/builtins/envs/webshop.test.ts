import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import webshop from '../../../plugins/envs/webshop';
import { buildCatalog, parsePrices, type Product } from '../../../plugins/envs/webshop/catalog';
import { SearchIndex } from '../../../plugins/envs/webshop/search';
import { THINK_ANSWER_PATTERN } from '../../../src/sdk/answer';
import { PluginHost } from '../../../src/host/plugin_host';
import type { Env, ResetResult, StepResult, WarmStartHooks } from '../../../src/sdk/types';
import { generateCatalog } from '../../../plugins/envs/webshop/_generate/catalog';
import { ROOT, scratch } from '../../helpers';
import { beforeReset, guarded, guardedAfter, stepAfterEnd } from './guarded';

const FIXTURES = join(import.meta.dir, 'webshop_data');
const REAL = { products_file: 'items_shuffle_mini.json', goals_file: 'items_ins_v2_mini.json' };
const HUMAN = { products_file: 'items_shuffle_mini.json', goals_file: 'items_human_ins_mini.json' };

const make = (config: Record<string, unknown> = {}, cwd = ROOT) => new webshop.env(webshop.config.parse(config), new PluginHost(cwd).envContext()) as Env;
const reset = (env: Env, seed: number) => env.reset(seed) as ResetResult;
const act = (env: Env, action: string) => env.step(`<answer>${action}</answer>`) as StepResult;

interface GoalInfo {
  asin: string;
  attributes: string[];
  options: Array<{ type: string | null; value: string }>;
  price_upper: number;
}
const goalOf = (r: ResetResult) => r.info.goal as GoalInfo;
const instructionOf = (r: ResetResult) => r.info.instruction.split('Instruction: ')[1]!;

/** A fixture env reset to the goal written for `asin` (the seed that draws it). */
function fixtureEnvFor(asin: string, files = REAL): Env {
  const env = make(files, FIXTURES);
  for (let seed = 0; seed < 50; seed++) if (goalOf(reset(env, seed)).asin === asin) return env;
  throw new Error(`no seed draws ${asin}`);
}

/** The asins a results page offers to click, in page order (lower case, as ROLL lists them). */
const listedAsins = (observation: string): string[] => [...observation.matchAll(/click\[(b0[0-9a-z]{8})\]/g)].map((m) => m[1]!);

/** search[query], then click[asin] (paging with Next > until it shows up). */
function openProduct(env: Env, query: string, asin: string): StepResult {
  let page = act(env, `search[${query}]`);
  while (!listedAsins(page.observation).includes(asin.toLowerCase())) {
    expect(page.observation).toContain('click[next >]');
    page = act(env, 'click[Next >]');
  }
  return act(env, `click[${asin}]`);
}

function buy(env: Env, query: string, asin: string, options: string[]): StepResult {
  openProduct(env, query, asin);
  for (const option of options) expect(act(env, `click[${option}]`).info.metrics.action_is_valid).toBe(true);
  return act(env, 'click[Buy Now]');
}

describe('webshop env on the shipped catalog', () => {
  test('the same seed gives the same goal and pages; seeds spread over the goals', () => {
    const play = (seed: number) => {
      const env = make();
      const start = reset(env, seed);
      const step = act(env, 'search[dog cat yoga hair]');
      return [start.observation, start.info.instruction, step.observation];
    };
    expect(play(5)).toEqual(play(5));
    // pinned: the seeded Rng draws the same goal on every machine
    expect([0, 12345].map((seed) => (reset(make(), seed).info.goal as { id: string }).id)).toEqual(['B0QIZ5PFIR#1', 'B065ALMKBP#0']);
    const goals = new Set(Array.from({ length: 30 }, (_, s) => goalOf(reset(make(), s)).asin));
    expect(goals.size).toBeGreaterThan(20);
  });

  test('the first observation is the search page with the instruction', () => {
    const env = make();
    const start = reset(env, 1);
    const instruction = instructionOf(start);
    expect(instruction).toMatch(/price lower than \d+\.\d\d dollars$/);
    expect(start.info.instruction).toContain('<answer>click[Buy Now]</answer>');
    expect(start.observation).toBe(`WebShop [SEP] Instruction: [SEP] ${instruction} [SEP] Search\nAvailable actions: search[<content>]`);
    expect(env.render('text')).toBe(start.observation);
    expect(env.render('rgb')).toBeNull();
  });

  test('a scripted shopper that searches, picks the target, chooses its options and buys earns 1', () => {
    for (const seed of [0, 1, 2, 3, 4, 5]) {
      const env = make();
      const start = reset(env, seed);
      const goal = goalOf(start);
      const instruction = instructionOf(start);
      const item = openProduct(env, instruction, goal.asin);
      expect(item.observation).toContain('Description [SEP] Features [SEP] Reviews [SEP] Buy Now');
      for (const option of goal.options) expect(item.observation).toContain(`click[${option.value}]`);
      for (const option of goal.options) expect(act(env, `click[${option.value}]`).info.metrics.action_is_effective).toBe(true);
      const result = act(env, 'click[Buy Now]');
      expect(result).toMatchObject({ reward: 1, terminated: true, truncated: false });
      expect(result.info.metrics).toMatchObject({ success: true, action_is_valid: true, r_type: 1, r_att: 1, r_option: 1, r_price: 1 });
      expect(result.observation).toContain(`asin [SEP] ${goal.asin} [SEP]`);
      expect(result.observation).toContain('Your score (min 0.0, max 1.0) [SEP] 1.0');
      expect(env.render('text')).toBe(result.observation);
    }
  });

  test('results come 10 to a page with Next > and < Prev; results_per_page changes that', () => {
    const env = make();
    reset(env, 2);
    const first = act(env, 'search[dog cat yoga hair]');
    expect(first.observation).toContain('Page 1 (Total results: 50) [SEP] Next > [SEP]');
    expect(first.observation).toContain('click[next >]');
    expect(first.observation).not.toContain('click[< prev]');
    const asins = listedAsins;
    expect(asins(first.observation)).toHaveLength(10);
    const second = act(env, 'click[next >]');
    expect(second.info.metrics).toMatchObject({ action_is_valid: true, action_is_effective: true });
    expect(second.observation).toContain('Page 2 (Total results: 50) [SEP] < Prev [SEP] Next > [SEP]');
    expect(asins(second.observation).filter((a) => asins(first.observation).includes(a))).toEqual([]);
    expect(act(env, 'click[< Prev]').observation).toBe(first.observation);

    const small = make({ results_per_page: 4, max_results: 10 });
    reset(small, 2);
    expect(act(small, 'search[dog cat yoga hair]').observation).toContain('Page 1 (Total results: 10)');
    act(small, 'click[Next >]');
    const last = act(small, 'click[Next >]');
    expect(asins(last.observation)).toHaveLength(2);
    expect(last.observation).not.toContain('click[next >]');
    expect(act(small, 'click[Next >]').info.metrics.action_is_valid).toBe(false);
  });

  test('item pages lead to sub-pages and back, keeping the chosen options; Back to Search starts over', () => {
    const env = make({ max_steps: 20, observation_mode: 'text_rich' });
    const start = reset(env, 7);
    const goal = goalOf(start);
    openProduct(env, instructionOf(start), goal.asin);
    const item = act(env, `click[${goal.options[0]!.value}]`).observation;
    expect(item).toStartWith(`You have clicked ${goal.options[0]!.value}.\n`);
    expect(item).toContain(`  [clicked button] ${goal.options[0]!.value} [clicked button_]`);
    for (const section of ['Description', 'Features', 'Reviews']) {
      const page = act(env, `click[${section}]`).observation;
      expect(page).not.toContain('[button] Buy Now [button_]');
      expect(page).toEndWith('Available actions: click[back to search], click[< prev]');
      expect(act(env, 'click[< Prev]').observation).toBe(item);
    }
    const results = act(env, 'click[< Prev]').observation;
    expect(results).toContain('Page 1 (Total results: ');
    expect(results).toContain(`\n[clicked button] ${goal.asin} [clicked button_]\n`);
    const search = act(env, 'click[back to search]');
    expect(search.observation).toEndWith('Available actions: search[<content>]');
  });

  test('invalid actions keep the page and cost format_penalty', () => {
    const env = make({ format_penalty: -0.05 });
    const start = reset(env, 3);
    const goal = goalOf(start);
    const invalid = (response: string, page: string) => {
      const step = env.step(response) as StepResult;
      expect(step).toMatchObject({ reward: -0.05, terminated: false, truncated: false, observation: page });
      expect(step.info.metrics).toMatchObject({ success: false, action_is_valid: false, action_is_effective: false, format_penalty: -0.05 });
      return step;
    };
    const searchPage = env.render('text') as string;
    expect(invalid('search[shoes]', searchPage).info.action).toBeNull(); // no answer tags
    expect(invalid('<answer>buy the shoes</answer>', searchPage).info.actionDesc).toContain('neither search[...] nor click[...]');
    invalid('<answer>click[Buy Now]</answer>', searchPage); // no buttons on the search page
    invalid('<answer>search[ ]</answer>', searchPage);
    const item = openProduct(env, instructionOf(start), goal.asin).observation;
    expect(invalid('<answer>search[shoes]</answer>', item).info.actionDesc).toContain('no search bar');
    expect(invalid('<answer>click[Add to Cart]</answer>', item).info.action).toBe('click[Add to Cart]');
    invalid(`<answer>click[${goal.asin}]</answer>`, item); // products are clicked on results pages only
    const valid = act(env, 'CLICK[ features ]');
    expect(valid.info).toMatchObject({ action: 'click[Features]', metrics: { action_is_valid: true, format_penalty: 0 } });
    expect(valid.reward).toBe(0);
  });

  test('choosing an option twice is valid but not effective', () => {
    const env = make();
    const start = reset(env, 4);
    const goal = goalOf(start);
    openProduct(env, instructionOf(start), goal.asin);
    const value = goal.options[0]!.value;
    expect(act(env, `click[${value}]`).info.metrics.action_is_effective).toBe(true);
    expect(act(env, `click[${value}]`).info.metrics).toMatchObject({ action_is_valid: true, action_is_effective: false });
  });

  test('max_steps truncates the episode', async () => {
    const env = make({ max_steps: 3, format_penalty: -0.1 });
    reset(env, 6);
    expect(act(env, 'search[mug]').truncated).toBe(false);
    expect(env.step('nonsense')).toMatchObject({ truncated: false, reward: -0.1 });
    const last = act(env, 'click[Back to Search]');
    expect(last).toMatchObject({ terminated: false, truncated: true, reward: 0 });
    expect(last.info.metrics).toMatchObject({ success: false, r_type: 0, r_att: 0, r_option: 0, r_price: 0 });
    const responses = ['<answer>search[mug]</answer>', 'nonsense', '<answer>click[Back to Search]</answer>'];
    const ended = await guardedAfter(webshop, { max_steps: 3, format_penalty: -0.1 }, 6, responses, new PluginHost(ROOT));
    await expect(ended.step('<answer>search[mug]</answer>')).rejects.toThrow(stepAfterEnd('webshop'));
    reset(env, 6);
    expect(act(env, 'search[mug]').truncated).toBe(false);
  });

  test('sampleRandomAction always names a valid action of the current page', () => {
    for (const pattern of [undefined, THINK_ANSWER_PATTERN]) {
      const env = make(pattern ? { action_pattern: pattern, max_steps: 8 } : { max_steps: 8 });
      let seed = 0;
      reset(env, seed);
      for (let i = 0; i < 40; i++) {
        const response = env.sampleRandomAction();
        if (pattern) expect(response).toStartWith('<think>');
        const step = env.step(response) as StepResult;
        expect(step.info.metrics.action_is_valid).toBe(true);
        if (step.terminated || step.truncated) reset(env, ++seed);
      }
    }
    const a = make();
    const b = make();
    reset(a, 9);
    reset(b, 9);
    expect([a.sampleRandomAction(), a.sampleRandomAction()]).toEqual([b.sampleRandomAction(), b.sampleRandomAction()]);
  });

  test("a random search is a run of two to eight of the instruction's words", () => {
    const env = make();
    for (let seed = 0; seed < 20; seed++) {
      const instruction = instructionOf(reset(env, seed));
      const query = /search\[(.*)\]/.exec(env.sampleRandomAction())![1]!;
      expect(query.split(' ').length).toBeGreaterThanOrEqual(2);
      expect(query.split(' ').length).toBeLessThanOrEqual(8);
      expect(` ${instruction} `).toContain(` ${query} `);
    }
  });

  test('the worked solution searches the instruction up to its options, skips products that lack one, and buys', () => {
    const env = make({ hold_out_products: true, max_steps: 15 }) as Env & WarmStartHooks;
    let solved = 0;
    let wentBack = 0;
    for (let seed = 0; seed < 60; seed++) {
      const instruction = instructionOf(reset(env, seed));
      const actions: string[] = [];
      for (let action = env.solutionAction!(); action !== null; action = env.solutionAction!()) {
        actions.push(action);
        const step = act(env, /<answer>(.*)<\/answer>/.exec(action)![1]!);
        expect(step.info.metrics.action_is_valid).toBe(true);
        if (step.terminated || step.truncated) {
          solved += Number(step.info.metrics.success);
          break;
        }
      }
      expect(actions[0]).toBe(`<answer>search[${instruction.split(/, with |, and price /)[0]}]</answer>`);
      const back = actions.indexOf('<answer>click[< Prev]</answer>');
      if (back !== -1) {
        wentBack++;
        // back on the results, the next product opened is one not opened before
        expect(actions[back + 1]).toMatch(/click\[B0/);
        expect(actions.slice(0, back)).not.toContain(actions[back + 1]);
      }
    }
    expect(wentBack).toBeGreaterThan(5);
    expect(solved).toBeGreaterThanOrEqual(55);
    expect(env.solutionAction!()).toBeNull();
  });

  test('in compact mode the worked solution and random clicks name products by their number on the page', () => {
    const env = make({ observation_mode: 'compact', results_per_page: 3 }) as Env & WarmStartHooks;
    reset(env, 0);
    act(env, /<answer>(.*)<\/answer>/.exec(env.solutionAction!()!)![1]!);
    expect(env.solutionAction!()).toBe('<answer>click[1]</answer>');
    const clicks = new Set(Array.from({ length: 40 }, () => env.sampleRandomAction()));
    expect(clicks).toEqual(new Set(['1', '2', '3', 'Next >', 'Back to Search'].map((b) => `<answer>click[${b}]</answer>`)));
  });

  test('the split config picks train or val goals', () => {
    const asins = (split: string) => new Set(Array.from({ length: 40 }, (_, s) => goalOf(reset(make({ split }), s)).asin));
    const train = asins('train');
    const val = asins('val');
    expect([...val].filter((a) => train.has(a))).toEqual([]);
  });

  test('the shipped data is what plugins/envs/webshop/_generate/catalog.ts generates, and small', () => {
    const generated = generateCatalog();
    const data = join(ROOT, 'plugins/envs/webshop/data');
    expect(readFileSync(join(data, 'products.json'), 'utf8')).toBe(generated.products);
    expect(readFileSync(join(data, 'goals.json'), 'utf8')).toBe(generated.goals);
    expect(generated.products.length + generated.goals.length).toBeLessThan(700_000);
    const catalog = buildCatalog(JSON.parse(generated.products), 'p', JSON.parse(generated.goals), 'g');
    expect(catalog.products.length).toBeGreaterThanOrEqual(250);
    expect(new Set(catalog.products.map((p) => p.query)).size).toBeGreaterThanOrEqual(24);
    expect(catalog.goals.filter((g) => g.split === 'val').length).toBeGreaterThan(40);
  });
});

describe('webshop env on files in the public WebShop format', () => {
  test('the loader reads items_shuffle fields liberally', () => {
    const read = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
    const catalog = buildCatalog(read(REAL.products_file), REAL.products_file, read(REAL.goals_file), REAL.goals_file);
    expect(catalog.products.map((p) => p.asin)).toEqual(['B0TEAPOT01', 'B0TEAPOT02', 'B0MUG00003', 'B0SOCKS004']);
    const [teapot, porcelain, mug, socks] = catalog.products;
    expect(teapot).toEqual({
      asin: 'B0TEAPOT01',
      title: 'Kettleworth Cast Iron Teapot with Infuser',
      category: 'home',
      query: 'teapot',
      productCategory: ['Home & Kitchen', 'Kitchen & Dining', 'Teapots'],
      price: 24.5,
      priceTag: '$24.50',
      features: ['Holds 34 oz of tea', 'Enamel lined interior that does not rust'],
      description: 'A heavy teapot that keeps tea hot for an hour.',
      options: [
        { type: 'color', values: ['black', 'jade green'] },
        { type: 'size', values: ['34 oz', '40 oz'] },
      ],
      attributes: ['cast iron', 'enamel lined'],
      rating: '4.6',
      reviews: [
        { score: '5', title: 'Lovely pot', body: 'Pours without dripping.' },
        { score: null, title: '', body: 'Heavier than I thought.' },
      ],
    });
    expect(porcelain).toMatchObject({
      price: 15,
      priceTag: '$15.00 to $19.00',
      features: ['White porcelain, dishwasher safe'],
      description: 'Classic shape. Holds four cups.',
      options: [],
    });
    expect(mug).toMatchObject({
      title: 'Glass Tea Mug with Infuser',
      price: 9.99,
      features: ['Heat resistant glass'],
      options: [{ type: 'color', values: ['clear'] }],
    });
    expect(socks).toMatchObject({ price: 100, priceTag: '$100.00', rating: 'N.A.', reviews: [], attributes: ['wool'] });

    expect(catalog.goals).toEqual([
      {
        id: 'B0TEAPOT01#0',
        asin: 'B0TEAPOT01',
        instruction: 'i want a cast iron teapot that is enamel lined with color: jade green, and size: 34 oz, and price lower than 40.00 dollars',
        attributes: ['cast iron', 'enamel lined'],
        options: [
          { type: 'color', value: 'jade green' },
          { type: 'size', value: '34 oz' },
        ],
        priceUpper: 40,
        split: 'train',
      },
      {
        id: 'B0TEAPOT02#0',
        asin: 'B0TEAPOT02',
        instruction: 'i need a dishwasher safe porcelain teapot, and price lower than 30.00 dollars',
        attributes: ['dishwasher safe'],
        options: [],
        priceUpper: 30,
        split: 'train',
      },
    ]);
    const human = buildCatalog(read(HUMAN.products_file), HUMAN.products_file, read(HUMAN.goals_file), HUMAN.goals_file);
    expect(human.goals.map((g) => [g.asin, g.instruction, g.priceUpper, g.options, g.split])).toEqual([
      ['B0TEAPOT01', 'Looking for a black cast iron teapot, and price lower than 20.00 dollars', 20, [{ type: null, value: 'black' }], 'train'],
      ['B0MUG00003', 'a glass tea mug, and price lower than 20.00 dollars', 20, [{ type: null, value: 'clear' }], 'val'],
    ]);
  });

  test('prices are read from "$12.99", ranges, numbers and lists', () => {
    expect(parsePrices('$12.99')).toEqual([12.99]);
    expect(parsePrices('$10.00 to $1,020.50')).toEqual([10, 1020.5]);
    expect(parsePrices(7)).toEqual([7]);
    expect(parsePrices(['$3', '$4.5'])).toEqual([3, 4.5]);
    expect(parsePrices(null)).toEqual([]);
  });

  // Goal: cast iron + enamel lined, color jade green + size 34 oz, price <= 40: five parts.
  test('buying the target with the asked options earns 1', () => {
    const env = fixtureEnvFor('B0TEAPOT01');
    const result = buy(env, 'cast iron teapot', 'B0TEAPOT01', ['Jade Green', '34 oz']);
    expect(result.reward).toBe(1);
    expect(result.info.metrics).toMatchObject({ success: true, r_type: 1, r_att: 1, r_option: 1, r_price: 1 });
  });

  test('a wrong or missing option loses its part: (2 + 1 + 1) / 5 and (2 + 0 + 1) / 5', () => {
    const wrong = buy(fixtureEnvFor('B0TEAPOT01'), 'teapot', 'B0TEAPOT01', ['black', '34 oz']);
    expect(wrong.reward).toBeCloseTo(4 / 5, 12);
    expect(wrong.info.metrics).toMatchObject({ success: false, r_option: 0.5 });
    const none = buy(fixtureEnvFor('B0TEAPOT01'), 'teapot', 'B0TEAPOT01', []);
    expect(none.reward).toBeCloseTo(3 / 5, 12);
    // the last choice of a type counts
    const changed = buy(fixtureEnvFor('B0TEAPOT01'), 'teapot', 'B0TEAPOT01', ['black', '40 oz', 'jade green', '34 oz']);
    expect(changed.reward).toBe(1);
  });

  test('another product of the same query keeps the type factor and earns only its own parts: 1 / 5', () => {
    const result = buy(fixtureEnvFor('B0TEAPOT01'), 'porcelain teapot', 'B0TEAPOT02', []);
    expect(result.reward).toBeCloseTo(1 / 5, 12);
    expect(result.info.metrics).toMatchObject({ r_type: 1, r_att: 0, r_option: 0, r_price: 1 });
  });

  test('a product of another type is scaled by its title overlap: 0.5 * (1 + 0 + 1) / 5', () => {
    // "Glass Tea Mug with Infuser" shares 1 of the target title's 5 words (infuser): r_type 0.5;
    // its description says "enamel lined" (1 of 2 attributes); the option clear is not asked for
    const result = buy(fixtureEnvFor('B0TEAPOT01'), 'glass mug', 'B0MUG00003', ['clear']);
    expect(result.reward).toBeCloseTo(0.5 * (2 / 5), 12);
    expect(result.info.metrics).toMatchObject({ r_type: 0.5, r_att: 0.5, r_option: 0, r_price: 1 });
    const socks = buy(fixtureEnvFor('B0TEAPOT01'), 'wool socks', 'B0SOCKS004', []);
    expect(socks.reward).toBe(0);
    expect(socks.info.metrics).toMatchObject({ r_type: 0, r_price: 0 });
  });

  test('a price over the limit loses its part: (1 + 1 + 0) / 3', () => {
    const env = fixtureEnvFor('B0TEAPOT01', HUMAN);
    const result = buy(env, 'teapot', 'B0TEAPOT01', ['black']);
    expect(result.reward).toBeCloseTo(2 / 3, 12);
    expect(result.info.metrics).toMatchObject({ success: false, r_att: 1, r_option: 1, r_price: 0 });
  });

  test('malformed files and settings fail with one line naming the file', () => {
    const dir = scratch({
      'bad.json': '[{"asin": ',
      'object.json': '{"asin": "B1"}',
      'no_asin.json': '[{"name": "x"}]',
      'bad_options.json': '[{"asin": "B1", "customization_options": [1]}]',
      'goals_list.json': '[]',
      'goals_other.json': '{"B9": {"instruction": "something else"}}',
      'goals_split.json': '{"B1": [{"instruction": "x", "split": "test"}]}',
      'one.json': '[{"asin": "B1", "name": "Thing"}]',
      'one_goal.json': '{"B1": {"instruction": "a thing", "split": "val"}}',
    });
    const fails = (products: string, goals: string, message: string, extra: Record<string, unknown> = {}) => {
      let error: unknown;
      try {
        make({ products_file: products, goals_file: goals, ...extra }, dir);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(Error);
      const text = (error as Error).message;
      expect(text).not.toContain('\n');
      expect(text).toStartWith(message);
    };
    fails('bad.json', 'one_goal.json', 'bad.json: not valid JSON (');
    fails('missing.json', 'one_goal.json', 'missing.json: no such file');
    fails('object.json', 'one_goal.json', 'object.json: top level: expected a list of products, got an object');
    fails('no_asin.json', 'one_goal.json', 'no_asin.json: item 0: has no asin');
    fails('bad_options.json', 'one_goal.json', 'bad_options.json: item 0 (B1) customization_options: expected an object of option lists, got a list');
    fails('one.json', 'goals_list.json', 'goals_list.json: top level: expected an object keyed by asin, got a list');
    fails('one.json', 'goals_other.json', 'goals_other.json: top level: no goal with an instruction names a product of the products file');
    fails('one.json', 'goals_split.json', 'goals_split.json: B1[0] split: expected "train" or "val", got string "test"');
    fails('one.json', 'one_goal.json', 'webshop: no goals in the train split of one_goal.json');
    expect(make({ products_file: 'one.json', goals_file: 'one_goal.json', split: 'val' }, dir).reset(0)).toMatchObject({
      info: { goal: { asin: 'B1', price_upper: 120 } },
    });
    expect(webshop.config.safeParse({ products_file: 'one.json' }).success).toBe(false);
    expect(webshop.config.safeParse({ format_penalty: 0.5 }).success).toBe(false);
    expect(webshop.config.safeParse({ split: 'test' }).success).toBe(false);
  });

  test('search ranks by BM25 over title, attributes and category', () => {
    const env = fixtureEnvFor('B0TEAPOT01');
    const listed = (query: string): string[] => {
      const page = act(env, `search[${query}]`).observation;
      act(env, 'click[Back to Search]');
      return listedAsins(page);
    };
    expect(listed('cast iron teapot')).toEqual(['b0teapot01', 'b0teapot02']);
    expect(listed('wool')).toEqual(['b0socks004']); // an attribute from the goals file
    expect(listed('fashion')).toEqual(['b0socks004']); // the category
    expect(act(env, 'search[velvet sofa]').observation).toContain('Page 1 (Total results: 0)\nAvailable actions: click[back to search]');

    const product = (asin: string, title: string): Product => ({
      asin,
      title,
      category: '',
      query: '',
      productCategory: [],
      price: 1,
      priceTag: '$1.00',
      features: [],
      description: '',
      options: [],
      attributes: [],
      rating: 'N.A.',
      reviews: [],
    });
    // N = 2, df(red) = 1: idf = ln(1 + 1.5 / 1.5) = ln 2; tf = 1 and len = avgLen, so the tf part is 1
    const index = new SearchIndex([product('A', 'Red Shoes'), product('B', 'Blue Shoe')]);
    expect(index.scores('red')[0]).toBeCloseTo(Math.LN2, 12);
    expect(index.scores('red')[1]).toBe(0);
    expect(index.search('shoe', 5).map((p) => p.asin)).toEqual(['A', 'B']); // a tie keeps catalog order
  });

  test('misuse is reported', async () => {
    await expect(guarded(webshop, {}, new PluginHost(ROOT)).step('<answer>search[x]</answer>')).rejects.toThrow(beforeReset('webshop'));
  });
});
