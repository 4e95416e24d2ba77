/**
 * WebShop's observation modes (html, text, text_rich, url, and agentic's compact) over the simulated shop, and the other
 * keys of ROLL's WebShop env: what a search page, a results page and an item page look like in
 * each mode, on the small fixture catalog, for a fixed seed.
 */
import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import webshop from '../../../plugins/envs/webshop';
import { PluginHost } from '../../../src/host/plugin_host';
import type { Env, ResetResult, StepResult } from '../../../src/sdk/types';
import { agentic, ROOT } from '../../helpers';

const FIXTURES = join(import.meta.dir, 'webshop_data');
const FILES = { products_file: 'items_shuffle_mini.json', goals_file: 'items_ins_v2_mini.json' };
const HUMAN = { products_file: 'items_shuffle_mini.json', goals_file: 'items_human_ins_mini.json' };

const make = (config: Record<string, unknown>, cwd = FIXTURES) => new webshop.env(webshop.config.parse(config), new PluginHost(cwd).envContext()) as Env;
const act = (env: Env, action: string) => (env.step(`<answer>${action}</answer>`) as StepResult).observation;

/** Seed 0 draws the porcelain teapot's goal (index 1 of the train split); the shopper opens the cast iron one. */
function tour(config: Record<string, unknown>): { start: string; results: string; item: string; chosen: string; reviews: string; back: string; done: string } {
  const env = make({ ...FILES, ...config });
  const start = (env.reset(0) as ResetResult).observation;
  const results = act(env, 'search[Cast Iron teapot]');
  const item = act(env, 'click[B0TEAPOT01]');
  const chosen = act(env, 'click[jade green]');
  const reviews = act(env, 'click[Reviews]');
  act(env, 'click[< Prev]');
  const back = act(env, 'click[< Prev]');
  const done = act(env, 'click[B0TEAPOT01]') && act(env, 'click[Buy Now]');
  return { start, results, item, chosen, reviews, back, done };
}

const INSTRUCTION = 'i need a dishwasher safe porcelain teapot, and price lower than 30.00 dollars';
const RESULTS_ACTIONS = 'Available actions: click[back to search], click[b0teapot01], click[b0teapot02]';
const ITEM_ACTIONS =
  'Available actions: click[back to search], click[< prev], click[description], click[features], click[reviews], click[buy now], click[black], click[jade green], click[34 oz], click[40 oz]';

describe('webshop observation modes', () => {
  test('text (the default, as in ROLL): the visible texts joined by [SEP], then the actions', () => {
    const pages = tour({});
    expect(pages).toEqual(tour({ observation_mode: 'text' }));
    expect(pages.start).toBe(`WebShop [SEP] Instruction: [SEP] ${INSTRUCTION} [SEP] Search\nAvailable actions: search[<content>]`);
    expect(pages.results).toBe(
      `Instruction: [SEP] ${INSTRUCTION} [SEP] Back to Search [SEP] Page 1 (Total results: 2) [SEP] B0TEAPOT01 [SEP] Kettleworth Cast Iron Teapot with Infuser [SEP] $24.50 [SEP] B0TEAPOT02 [SEP] Porcelain Teapot, Dishwasher Safe [SEP] $15.00 to $19.00\n${RESULTS_ACTIONS}`,
    );
    expect(pages.item).toBe(
      `Instruction: [SEP] ${INSTRUCTION} [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] black [SEP] jade green [SEP] size [SEP] 34 oz [SEP] 40 oz [SEP] Kettleworth Cast Iron Teapot with Infuser [SEP] Price: $24.50 [SEP] Rating: 4.6 [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now\n${ITEM_ACTIONS}`,
    );
    expect(pages.chosen).toBe(pages.item); // text mode does not show a chosen option
    expect(pages.reviews).toBe(
      `Instruction: [SEP] ${INSTRUCTION} [SEP] Back to Search [SEP] < Prev [SEP] "Lovely pot" [SEP] 5 [SEP] Pours without dripping. [SEP] Heavier than I thought.\nAvailable actions: click[back to search], click[< prev]`,
    );
    expect(pages.back).toBe(pages.results);
    expect(pages.done).toBe(
      'Thank you for shopping with us! [SEP] Purchased [SEP] asin [SEP] B0TEAPOT01 [SEP] options [SEP] {} [SEP] Your score (min 0.0, max 1.0) [SEP] 0.5\nAvailable actions: ',
    );
  });

  test('text_rich: buttons marked, a chosen option and an opened product marked as clicked', () => {
    const pages = tour({ observation_mode: 'text_rich' });
    expect(pages.start).toBe(`WebShop\nInstruction: \n${INSTRUCTION}\n[button] Search [button_]\n\nAvailable actions: search[<content>]`);
    const results = (link: string) =>
      `Instruction:\n${INSTRUCTION}\n[button] Back to Search [button_]\nPage 1 (Total results: 2)\n\n${link}\nKettleworth Cast Iron Teapot with Infuser\n$24.50\n\n[button] B0TEAPOT02 [button_]\nPorcelain Teapot, Dishwasher Safe\n$15.00 to $19.00\n\n${RESULTS_ACTIONS}`;
    expect(pages.results).toBe(results('[button] B0TEAPOT01 [button_]'));
    expect(pages.back).toBe(results('[clicked button] B0TEAPOT01 [clicked button_]'));
    const item = (jade: string) =>
      `Instruction:\n${INSTRUCTION}\n[button] Back to Search [button_]\n[button] < Prev [button_]\ncolor\n  [button] black [button_]\n  ${jade}\nsize\n  [button] 34 oz [button_]\n  [button] 40 oz [button_]\nKettleworth Cast Iron Teapot with Infuser\nPrice: $24.50\nRating: 4.6\n[button] Description [button_]\n[button] Features [button_]\n[button] Reviews [button_]\n[button] Buy Now [button_]\n\n${ITEM_ACTIONS}`;
    expect(pages.item).toBe(item('[button] jade green [button_]'));
    expect(pages.chosen).toBe(`You have clicked jade green.\n${item('[clicked button] jade green [clicked button_]')}`);
  });

  test('compact: the page in a few lines, buttons in [brackets], an opened product marked, a chosen value alone, no actions line', () => {
    const pages = tour({ observation_mode: 'compact' });
    expect(pages.start).toBe(`${INSTRUCTION}\n[Search]`);
    const results = (mark: string) =>
      `${INSTRUCTION}\n[1] Kettleworth Cast Iron Teapot with Infuser $24.50${mark}\n[2] Porcelain Teapot, Dishwasher Safe $15.00 to $19.00\n[Back to Search]`;
    expect(pages.results).toBe(results(''));
    expect(pages.back).toBe(results(' (seen)'));
    const item = (color: string) =>
      `${INSTRUCTION}\ncolor: ${color}\nsize: [34 oz] [40 oz]\nKettleworth Cast Iron Teapot with Infuser $24.50\n[Buy Now] [< Prev] [Back to Search]`;
    expect(pages.item).toBe(item('[black] [jade green]'));
    expect(pages.chosen).toBe(item('jade green (chosen)'));
    expect(pages.reviews).toBe(`${INSTRUCTION}\nPours without dripping. Heavier than I thought.\n[< Prev] [Back to Search]`);
    expect(pages.done).toBe('You bought B0TEAPOT01; score 0.5');
  });

  test('compact: a product is clicked by its number on the page (or its asin); Next > and < Prev show where there are pages either side', () => {
    const env = make({ ...FILES, observation_mode: 'compact', results_per_page: 1 });
    env.reset(0);
    expect(act(env, 'search[teapot]').split('\n').at(-1)).toBe('[Next >] [Back to Search]');
    const second = act(env, 'click[Next >]');
    expect(second.split('\n').slice(1)).toEqual(['[1] Kettleworth Cast Iron Teapot with Infuser $24.50', '[< Prev] [Back to Search]']);
    const opened = env.step('<answer>click[1]</answer>') as StepResult;
    expect(opened.info.action).toBe('click[B0TEAPOT01]');
    expect(opened.observation).toContain('\nKettleworth Cast Iron Teapot with Infuser $24.50\n[Buy Now]');
    act(env, 'click[< Prev]');
    expect((env.step('<answer>click[2]</answer>') as StepResult).info.metrics.action_is_valid).toBe(false);
    expect(act(env, 'click[b0teapot01]')).toContain('[Buy Now]');
  });

  test("url: WebShop's addresses, the session being the goal's index", () => {
    const pages = tour({ observation_mode: 'url' });
    const line = (observation: string) => observation.split('\n')[0];
    expect(line(pages.start)).toBe('http://127.0.0.1:3000/1');
    expect(line(pages.results)).toBe('http://127.0.0.1:3000/search_results/1/cast+iron+teapot/1');
    expect(line(pages.item)).toBe('http://127.0.0.1:3000/item_page/1/B0TEAPOT01/cast+iron+teapot/1/{}');
    expect(line(pages.chosen)).toBe('http://127.0.0.1:3000/item_page/1/B0TEAPOT01/cast+iron+teapot/1/{"color": "jade green"}');
    expect(line(pages.reviews)).toBe("http://127.0.0.1:3000/item_sub_page/1/B0TEAPOT01/cast+iron+teapot/1/Reviews/{'color': 'jade green'}");
    expect(line(pages.done)).toBe('http://127.0.0.1:3000/done/1/B0TEAPOT01/{}');
    expect(pages.item).toEndWith(`\n${ITEM_ACTIONS}`);
    expect(line(tour({ observation_mode: 'url', session_prefix: 'fixed_' }).results)).toBe('http://127.0.0.1:3000/search_results/fixed_1/cast+iron+teapot/1');
  });

  test("html: the page's HTML with WebShop's search box, buttons, product links and option radios", () => {
    const pages = tour({ observation_mode: 'html' });
    expect(pages.start).toContain('<h4>Instruction: <br>i need a dishwasher safe porcelain teapot');
    expect(pages.start).toContain('<input id="search_input" type="text" name="search_query" placeholder="Search...">');
    expect(pages.start).toEndWith('</html>\nAvailable actions: search[<content>]');
    expect(pages.results).toContain('<h3>Page 1 (Total results: 2)</h3>');
    expect(pages.results).toContain('<a class="product-link">B0TEAPOT01</a>');
    expect(pages.item).toContain('<button type="submit" class="btn btn-primary">&lt; Prev</button>');
    expect(pages.item).toContain('<input type="radio" id="radio_color1" name="color" value="jade green">\n');
    expect(pages.chosen).toContain('<input type="radio" id="radio_color1" name="color" value="jade green" checked="checked">\n');
    expect(pages.item).toContain('<label for="radio_color1">jade green</label>');
    expect(pages.item).toContain('<button type="submit" class="btn btn-lg purchase">Buy Now</button>');
    expect(pages.done).toContain('<pre>B0TEAPOT01</pre>');
  });

  test('every mode is the same on the same seed; seeds draw different goals', () => {
    for (const observation_mode of ['html', 'text', 'text_rich', 'url', 'compact']) {
      const first = (seed: number) => make({ ...FILES, observation_mode }).reset(seed) as ResetResult;
      expect(first(3)).toEqual(first(3));
      expect(new Set([0, 1, 2, 3, 4, 5].map((s) => (first(s).info.goal as { asin: string }).asin)).size).toBe(2);
    }
    expect(webshop.config.safeParse({ observation_mode: 'markdown' }).success).toBe(false);
  });
});

describe("ROLL's other WebShop keys", () => {
  test('show_attrs adds an Attributes page with the attributes, category, query and category path', () => {
    const env = make({ ...FILES, show_attrs: true });
    env.reset(0);
    act(env, 'search[teapot]');
    expect(act(env, 'click[B0TEAPOT01]')).toContain('[SEP] Reviews [SEP] Attributes [SEP] Buy Now\n');
    expect(act(env, 'click[Attributes]')).toBe(
      `Instruction: [SEP] ${INSTRUCTION} [SEP] Back to Search [SEP] < Prev [SEP] cast iron [SEP] enamel lined [SEP] home [SEP] teapot [SEP] Home & Kitchen › Kitchen & Dining › Teapots\nAvailable actions: click[back to search], click[< prev]`,
    );
  });

  test('num_prev_obs and num_prev_actions repeat earlier pages and actions before the page', () => {
    const env = make({ ...FILES, num_prev_obs: 1, num_prev_actions: 1 });
    const start = (env.reset(0) as ResetResult).observation.split('\n')[0];
    const results = act(env, 'search[cast iron teapot]');
    expect(results).toStartWith(`${start} [SEP] search[cast iron teapot] [SEP] Instruction: [SEP] ${INSTRUCTION} [SEP] Back to Search [SEP] Page 1`);
    expect(results).toEndWith(`\n${RESULTS_ACTIONS}`);
    expect(env.render('text')).toStartWith(`Instruction: [SEP] ${INSTRUCTION} [SEP] Back to Search`);
  });

  test('num_products, limit_goals and human_goals pick the products and goals; env_instruction the rules', () => {
    // the first product only: the porcelain teapot's goal goes with the second
    const one = make({ ...FILES, num_products: 1 });
    expect([0, 1, 2, 3].map((s) => ((one.reset(s) as ResetResult).info.goal as { asin: string }).asin)).toEqual(Array(4).fill('B0TEAPOT01'));
    const env = make({ ...FILES, num_products: 1 });
    env.reset(0);
    expect(act(env, 'search[teapot]')).toContain('(Total results: 1)');
    const limited = make({ ...FILES, limit_goals: 1, env_instruction: 'Shop well.' });
    const drawn = [0, 1, 2, 3].map((s) => limited.reset(s) as ResetResult);
    expect(drawn.map((r) => (r.info.goal as { asin: string }).asin)).toEqual(Array(4).fill('B0TEAPOT01'));
    expect(drawn[0]!.info.instruction).toStartWith('Shop well.\nInstruction: i want a cast iron teapot');

    expect(make({ ...HUMAN, human_goals: true }).reset(0)).toMatchObject({ info: { goal: { asin: 'B0TEAPOT01' } } });
    expect(() => make({ ...HUMAN, human_goals: false })).toThrow('webshop: human_goals is false but items_human_ins_mini.json holds lists of goals per asin');
    expect(() => make({ ...FILES, human_goals: true })).toThrow('webshop: human_goals is true but items_ins_v2_mini.json holds one goal per asin');
    const shipped = webshop.config.safeParse({ human_goals: true });
    expect(shipped.success).toBe(false);
    expect(shipped.error?.issues[0]?.message).toStartWith("the shipped catalog's goals are generated");
    expect(webshop.config.safeParse({ limit_goals: 0 }).success).toBe(false);
  });

  test('agentic plugins check passes in every mode', async () => {
    for (const mode of ['text', 'html', 'text_rich', 'url', 'compact']) {
      const { code, stdout, stderr } = await agentic(['plugins', 'check', 'webshop', '--episodes', '2', `observation_mode=${mode}`, 'show_attrs=true'], {
        cwd: ROOT,
      });
      expect(stderr).toBe('');
      expect(stdout).toContain("env 'webshop': all checks passed");
      expect(code).toBe(0);
    }
  }, 60_000);
});

describe("ROLL's WebShop example configs", () => {
  // our fixtures in the layout of ROLL's examples/qwen2.5-7B-agentic_megatron/agentic_val_webshop{,_gigpo}.yaml
  // and the examples/config/{traj,step}_envs.yaml they include, with ROLL's WebShopEnv entries' keys
  const EXAMPLES = join(ROOT, 'test/fixtures/roll/examples/qwen2.5-7B-agentic_megatron');
  for (const [name, manager] of [
    ['agentic_val_webshop', 'traj'],
    ['agentic_val_webshop_gigpo', 'step'],
  ] as const) {
    test(`${name} passes agentic config with its WebShop env as ROLL sets it`, async () => {
      const { code, stdout, stderr } = await agentic(['config', '--config-path', EXAMPLES, '--config-name', name, 'pretrain=agentic:nano']);
      expect(stderr).toStartWith('warning: ROLL keys with no effect here: hydra, ');
      expect(stderr).not.toContain('error');
      expect(code).toBe(0);
      const entry = stdout.slice(stdout.indexOf('  WebShopEnv:'));
      expect(entry).toContain('env_type: webshop');
      expect(entry).toContain(`env_manager_cls: ${manager}`);
      expect(entry).toMatch(/env_config:\n(\s+\S.*\n)*?\s+observation_mode: text\n/);
    }, 30_000);
  }

  test("WebShop's server settings are named as having no effect; file_path, images and human goals without a goals file are refused", async () => {
    const config = (...settings: string[]) =>
      agentic([
        'config',
        '--config-path',
        EXAMPLES,
        '--config-name',
        'agentic_val_webshop',
        'pretrain=agentic:nano',
        ...settings.map((s) => `+custom_env.WebShopEnv.env_config.${s}`),
      ]);
    const inert = await config('server=null', 'session=abc', 'filter_goals=null', 'get_image=0');
    expect(inert.code).toBe(0);
    expect(inert.stderr).toContain('agent_runner_cls, server, session=abc, filter_goals, get_image=0;');
    for (const [setting, message] of [
      ['file_path=items.json', "file_path: webshop reads WebShop's data through products_file and goals_file; set those instead"],
      ['get_image=1', 'get_image: 1: the simulated shop has no product images; remove get_image'],
      ['server=remote', 'server: "remote": the webshop env simulates its shop in process; remove server'],
      [
        'human_goals=true',
        "human_goals: the shipped catalog's goals are generated; for human goals set products_file and goals_file (WebShop's items_human_ins.json)",
      ],
    ]) {
      const refused = await config(setting!);
      expect(refused.stderr.trim()).toBe(`error: custom_envs.WebShopEnv.env_config.${message}`);
      expect(refused.code).toBe(2);
    }
  }, 60_000);
});
