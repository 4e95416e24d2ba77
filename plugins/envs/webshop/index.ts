/**
 * WebShop (Yao et al. 2022) simulated in process: a text web store where the policy searches,
 * opens products, chooses options and buys, to fit an instruction that names a kind of product,
 * some attributes, option values and a price limit. No server: the
 * pages (shop.ts, pages.ts), the search engine (BM25, search.ts) and the scoring (scoring.ts) are
 * here. It ships a small generated catalog (plugins/envs/webshop/_generate/catalog.ts) and reads the public
 * WebShop data files (items_shuffle_1000.json with items_ins_v2_1000.json or items_human_ins.json;
 * catalog.ts says how) through products_file and goals_file.
 *
 * Observations: the page in one of WebShop's observation modes (observation.ts: html, text,
 * text_rich, url; text by default, as in ROLL), then ROLL's line of the actions the page allows.
 * The pages (pages.ts) are laid out as WebShop's templates and addressed by its URL scheme (url.ts).
 *
 * Actions, inside the answer pattern: search[query] (only on the search page) and click[button]
 * (a button of the current page, ignoring case). Anything else is invalid: the page stays, the
 * reward is format_penalty. Buying ends the episode; max_steps actions truncate it.
 *
 * The reward on buying product y with chosen option values Y_opt, for goal u (target product x):
 *
 *   r = r_type * (|U_att ∩ Y_att| + |U_opt ∩ Y_opt| + [price(y) <= u_price]) / (|U_att| + |U_opt| + 1)
 *
 * - U_att: the goal's attributes; one counts as met when y lists the same phrase among its
 *   attributes (same words ignoring order, case, plurals and punctuation) or its words appear in
 *   order in y's title, features or description.
 * - U_opt: the goal's option values; one counts as met when a chosen value is the same phrase.
 * - price(y): the low end of y's price.
 * - r_type = 1   if y is x, or y's query equals x's (query match), or the last level of their
 *                product categories is equal (category match), or title_score > 0.2;
 *            0.5 if 0.1 <= title_score <= 0.2;  0.1 if 0 < title_score < 0.1;  0 otherwise;
 *   title_score = the share of x's title words (without stopwords and numbers) found in y's title.
 * Success means r = 1. The step that buys reports r_type, r_att, r_option, r_price (the three
 * fractions, 1 where nothing was asked); earlier steps report them as 0.
 */
import {
  actionPattern,
  defineEnv,
  type Env,
  type EnvContext,
  type EpisodeDraw,
  type MetricAgg,
  parseAnswer,
  type ResetOptions,
  type ResetResult,
  Rng,
  type StepResult,
  type SuiteEpisode,
  type WarmStartHooks,
  z,
} from 'agentic';
import type { Goal, Product } from './catalog';
import { goalEpisode, goalOf } from './suite';
import { compactLabel, compactPage, findCompact } from './compact';
import { expertAction } from './expert';
import { ENV_OBSERVATION_MODES, availableActions, observe } from './observation';
import { donePage, type Purchase, renderPage } from './pages';
import { scorePurchase, type PurchaseScore } from './scoring';
import { type Clickable, Shop, type Outcome } from './shop';
import { openStore, type Store } from './store';
import { squish } from './text';
import { pageUrl } from './url';

const Config = z
  .strictObject({
    products_file: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe("Products as a JSON list in WebShop's items_shuffle format, relative to the working folder; null: the shipped catalog."),
    goals_file: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe("Goals as JSON in WebShop's items_ins_v2 or items_human_ins format; null: the shipped goals. Set with products_file."),
    split: z.enum(['train', 'val']).default('train').describe('Which goals reset() draws from.'),
    hold_out_products: z
      .boolean()
      .default(false)
      .describe(
        "Skip every goal whose product also has a goal in the other split, so no instruction of one split asks for a product of the other's (the train split then never asks for a held-out product).",
      ),
    observation_mode: z
      .enum(ENV_OBSERVATION_MODES)
      .default('text')
      .describe(
        "WebShop's observation mode: html (the page's HTML), text (its texts joined by [SEP]), text_rich (buttons marked), url (its address); or compact, agentic's own: the page in a few lines with its buttons in [brackets] and no actions line, for small policies.",
      ),
    num_products: z
      .int()
      .positive()
      .nullable()
      .default(null)
      .describe("Only the catalog's first N products and their goals (WebShop's num_products); null: all."),
    limit_goals: z
      .int()
      .refine((n) => n === -1 || n > 0, 'expected -1 (all goals) or a positive count')
      .default(-1)
      .describe('Only the first N goals of the split, in catalog order; -1: all.'),
    human_goals: z
      .boolean()
      .nullable()
      .default(null)
      .describe('Whether goals_file must hold human-written goals (items_human_ins form); the shipped goals are generated. null: whatever the goals are.'),
    show_attrs: z
      .boolean()
      .default(false)
      .describe("An Attributes page on item pages, listing the product's attributes, category and query (WebShop's show_attrs)."),
    num_prev_obs: z.int().nonnegative().default(0).describe("Earlier pages repeated before a step's page, joined by [SEP] (WebShop's num_prev_obs)."),
    num_prev_actions: z.int().nonnegative().default(0).describe("Earlier actions repeated before a step's page, joined by [SEP] (WebShop's num_prev_actions)."),
    session_prefix: z.string().nullable().default(null).describe('Put before the session id in page addresses (url mode); the session id is the goal index.'),
    env_instruction: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe('The rules told to the policy before the goal (ROLL: env_instruction); null: the built-in text.'),
    results_per_page: z.int().positive().default(10).describe('Products on one results page.'),
    max_results: z.int().positive().default(50).describe('Most products a search returns.'),
    max_text_chars: z.int().positive().default(1000).describe('Longest description, feature or review text a page shows.'),
    max_steps: z.int().positive().default(10).describe('Actions before the episode is truncated.'),
    format_penalty: z.number().max(0).default(0).describe('Reward of an invalid action (<= 0).'),
    action_pattern: actionPattern(),
  })
  .refine((c) => (c.products_file === null) === (c.goals_file === null), {
    message: 'products_file and goals_file go together (both null: the shipped catalog)',
  })
  .refine((c) => !(c.human_goals === true && c.goals_file === null), {
    path: ['human_goals'],
    message: "the shipped catalog's goals are generated; for human goals set products_file and goals_file (WebShop's items_human_ins.json)",
  });
type WebShopConfig = z.output<typeof Config>;

const RULES =
  'You are shopping in a web store. Find a product that fits the instruction, choose the options it asks for, and buy it. ' +
  'Each turn you see the current page and the actions it allows. Reply with one action inside <answer></answer>: ' +
  'search[your query] on the search page, or click[button] with the text of a button shown in [brackets], ' +
  'for example <answer>click[Buy Now]</answer>.';

const METRICS_AGG: Record<string, MetricAgg> = { success: 'last', r_type: 'last', r_att: 'last', r_option: 'last', r_price: 'last' };
const NOT_BOUGHT = { r_type: 0, r_att: 0, r_option: 0, r_price: 0 };

type Action = { verb: 'search' | 'click'; argument: string };

/** `search[...]` or `click[...]` (the verb in any case), or null. */
function parseAction(content: string): Action | null {
  const match = /^(search|click)\s*\[(.*)\]$/is.exec(content.trim());
  if (!match) return null;
  return { verb: match[1]!.toLowerCase() as Action['verb'], argument: squish(match[2]!) };
}

class WebShop implements Env, WarmStartHooks {
  private readonly store: Store;
  private readonly goals: Goal[];
  private shop: Shop;
  private goal: Goal | null = null;
  private target: Product | null = null;
  private steps = 0;
  private purchase: Purchase | null = null;
  /** The goal's index in the split: WebShop's session id, which ROLL draws from the seed. */
  private session = '';
  private previousPages: string[] = [];
  private previousActions: string[] = [];
  private randomActions = Rng.fromSeed(0, 'webshop', 'random-action');

  constructor(
    private readonly config: WebShopConfig,
    context: EnvContext,
  ) {
    const files = config.products_file !== null && config.goals_file !== null ? { products: config.products_file, goals: config.goals_file } : null;
    this.store = openStore(files, context.cwd, config.num_products);
    if (config.human_goals !== null && config.human_goals !== this.store.humanGoals)
      throw new Error(
        `webshop: human_goals is ${config.human_goals} but ${config.goals_file} holds ${this.store.humanGoals ? 'lists of goals per asin (items_human_ins form)' : 'one goal per asin (items_ins_v2 form)'}`,
      );
    const others = new Set(this.store.catalog.goals.filter((g) => g.split !== config.split).map((g) => g.asin));
    const split = this.store.catalog.goals.filter((g) => g.split === config.split && !(config.hold_out_products && others.has(g.asin)));
    this.goals = config.limit_goals === -1 ? split : split.slice(0, config.limit_goals);
    if (this.goals.length === 0) throw new Error(`webshop: no goals in the ${config.split} split of ${config.goals_file ?? 'the shipped catalog'}`);
    this.shop = this.newShop();
  }

  private newShop(): Shop {
    return new Shop(this.store.index, {
      resultsPerPage: this.config.results_per_page,
      maxResults: this.config.max_results,
      showAttributes: this.config.show_attrs,
    });
  }

  reset(seed: number, _draw?: EpisodeDraw, options?: ResetOptions): ResetResult {
    const goal = options?.episode ? this.suiteGoal(options.episode) : Rng.fromSeed(seed, 'webshop').choice(this.goals);
    this.randomActions = Rng.fromSeed(seed, 'webshop', 'random-action');
    this.goal = goal;
    this.target = this.store.catalog.byAsin.get(goal.asin)!;
    this.shop = this.newShop();
    this.steps = 0;
    this.purchase = null;
    this.session = `${this.config.session_prefix ?? ''}${options?.episode ? goal.id : this.goals.indexOf(goal)}`;
    this.previousPages = [this.view().text];
    this.previousActions = [];
    return {
      observation: this.page(),
      info: {
        instruction: `${this.config.env_instruction ?? RULES}\nInstruction: ${goal.instruction}`,
        goal: { id: goal.id, asin: goal.asin, attributes: [...goal.attributes], options: goal.options.map((o) => ({ ...o })), price_upper: goal.priceUpper },
        episode: goalEpisode(goal),
      },
    };
  }

  /** The goal of a suite entry, for a product of this catalog; a malformed entry throws a one-line error. */
  private suiteGoal(episode: SuiteEpisode): Goal {
    const goal = goalOf(episode);
    if (!this.store.catalog.byAsin.has(goal.asin))
      throw new Error(`webshop: cannot replay the episode ${goal.id}: product ${goal.asin} is not in ${this.config.products_file ?? 'the shipped catalog'}`);
    return goal;
  }

  step(response: string): StepResult {
    this.steps++;
    const parsed = parseAnswer(response, { pattern: this.config.action_pattern });
    if (parsed.action === null) return this.invalid(null, 'The response holds no action in the answer format.');
    const result = this.act(parsed.content);
    return { ...result, observation: this.withHistory(parsed.content) };
  }

  private act(content: string): StepResult {
    const action = parseAction(content);
    if (!action) return this.invalid(content, `"${content}" is neither search[...] nor click[...].`);

    let outcome: Outcome;
    let written: string;
    if (action.verb === 'search') {
      written = `search[${action.argument}]`;
      if (!this.shop.canSearch) return this.invalid(written, 'There is no search bar on this page; click [Back to Search] first.');
      if (action.argument === '') return this.invalid(written, 'The search query is empty.');
      outcome = this.shop.search(action.argument);
    } else {
      const button = this.compact ? findCompact(this.shop, action.argument) : this.shop.find(action.argument);
      if (!button) return this.invalid(`click[${action.argument}]`, `There is no button [${action.argument}] on this page.`);
      written = `click[${button.label}]`;
      outcome = this.shop.click(button);
    }

    if (outcome.kind === 'bought') return this.buy(written, outcome.product, outcome.chosen);
    return this.result(written, 0, {
      valid: true,
      effective: outcome.changed,
      desc: outcome.changed ? `You did ${written}.` : `You did ${written}; nothing changed.`,
    });
  }

  private buy(written: string, product: Product, chosen: readonly string[]): StepResult {
    const score = scorePurchase(this.goal!, this.target!, product, chosen);
    this.purchase = { product, chosen: new Map(this.shop.chosen), score: pythonFloat(score.reward) };
    return this.result(written, score.reward, {
      valid: true,
      effective: true,
      desc: `You bought ${product.asin}; the reward is ${roundScore(score.reward)}.`,
      score,
    });
  }

  private invalid(action: string | null, desc: string): StepResult {
    return this.result(action, this.config.format_penalty, { valid: false, effective: false, desc });
  }

  private result(action: string | null, reward: number, how: { valid: boolean; effective: boolean; desc: string; score?: PurchaseScore }): StepResult {
    const terminated = how.score !== undefined;
    const truncated = !terminated && this.steps >= this.config.max_steps;
    const parts = how.score ? { r_type: how.score.r_type, r_att: how.score.r_att, r_option: how.score.r_option, r_price: how.score.r_price } : NOT_BOUGHT;
    return {
      observation: this.page(),
      reward,
      terminated,
      truncated,
      info: {
        action,
        actionDesc: how.desc,
        metrics: {
          success: how.score !== undefined && how.score.reward === 1,
          action_is_valid: how.valid,
          action_is_effective: how.effective,
          format_penalty: how.valid ? 0 : this.config.format_penalty,
          ...parts,
        },
        metricsAgg: { ...METRICS_AGG },
      },
    };
  }

  /**
   * The page in the observation mode, and ROLL's line of the actions it allows. The compact mode
   * shows its buttons in the page and never builds the element tree the other modes read.
   */
  private view(): { text: string; actions: string } {
    const instruction = this.goal?.instruction ?? '';
    const mode = this.config.observation_mode;
    if (mode === 'compact') return { text: compactPage(this.shop, instruction, this.purchase, this.config.max_text_chars), actions: '' };
    const page = this.purchase ? donePage(this.purchase) : renderPage(this.shop, instruction, { maxTextChars: this.config.max_text_chars });
    return {
      text: observe(mode, { page, url: pageUrl(this.shop, this.session, this.purchase !== null), visited: this.shop.visited }),
      actions: `\nAvailable actions: ${availableActions(page).join(', ')}`,
    };
  }

  /** The page as ROLL shows it: the mode's observation, then the actions it allows. */
  private page(): string {
    const { text, actions } = this.view();
    return text + actions;
  }

  /**
   * A step's observation, as WebShop's step builds it: the earlier pages and actions asked for
   * (num_prev_obs, num_prev_actions), oldest first, then this page, joined by [SEP].
   */
  private withHistory(action: string): string {
    const { text: page, actions } = this.view();
    this.previousActions.push(action);
    const parts = [page];
    for (let i = 1; i <= Math.max(this.config.num_prev_obs, this.config.num_prev_actions); i++) {
      if (this.config.num_prev_actions >= i && this.previousActions.length >= i) parts.push(this.previousActions.at(-i)!);
      if (this.config.num_prev_obs >= i && this.previousPages.length >= i) parts.push(this.previousPages.at(-i)!);
    }
    this.previousPages.push(page);
    return parts.reverse().join(' [SEP] ') + actions;
  }

  render(mode: 'text' | 'rgb'): string | null {
    return mode === 'text' ? this.page() : null;
  }

  close(): void {}

  /**
   * A valid action at random: on the search page a search for a run of two to eight of the
   * instruction's words (copying from the page, never the query the goal was written for),
   * elsewhere a click on one of the page's buttons.
   */
  sampleRandomAction(): string {
    let action: string;
    if (this.shop.canSearch) {
      const words = (this.goal?.instruction ?? '').split(' ').filter((w) => w !== '');
      const length = Math.min(words.length, this.randomActions.intBetween(2, 8));
      const start = this.randomActions.int(words.length - length + 1);
      action = `search[${words.slice(start, start + length).join(' ')}]`;
    } else {
      action = `click[${this.label(this.randomActions.choice(this.shop.clickables()))}]`;
    }
    return this.wrap(action);
  }

  /** The worked solution's action on the current page (expert.ts); null once the episode is over. */
  solutionAction(): string | null {
    if (!this.goal || this.purchase) return null;
    return this.wrap(expertAction(this.shop, this.goal, (button) => this.label(button)));
  }

  private get compact(): boolean {
    return this.config.observation_mode === 'compact';
  }

  /** A button as the page names it: compact pages number their products. */
  private label(button: Clickable): string {
    return this.compact ? compactLabel(this.shop, button) : button.label;
  }

  /** `action` in a response form the configured pattern reads back as `action`. */
  private wrap(action: string): string {
    const forms = [`<answer>${action}</answer>`, `<think>I will ${action}.</think><answer>${action}</answer>`, action];
    return forms.find((form) => parseAnswer(form, { pattern: this.config.action_pattern }).content === action) ?? forms[0]!;
  }
}

function roundScore(reward: number): string {
  return String(Math.round(reward * 10000) / 10000);
}

/** A number as Python prints a float (WebShop's done page prints the score so): 1.0, 0.6666666666666666. */
function pythonFloat(value: number): string {
  return Number.isInteger(value) ? value.toFixed(1) : String(value);
}

export default defineEnv({
  name: 'webshop',
  description: 'WebShop, simulated: search a text web store, choose options and buy what the instruction asks for.',
  config: Config,
  env: WebShop,
});
