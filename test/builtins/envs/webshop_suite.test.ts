import { describe, expect, test } from 'bun:test';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import webshop from '../../../plugins/envs/webshop';
import { PluginHost } from '../../../src/host/plugin_host';
import type { Env, ResetResult } from '../../../src/sdk/types';
import { scratch } from '../../helpers';

const FIXTURES = join(import.meta.dir, 'webshop_data');
const goal = (instruction: string, split: string) => ({ instruction, instruction_attributes: [], instruction_options: [], split });
// the teapot has a goal in each split; the mug only a train goal
const GOALS = {
  B0TEAPOT01: [goal('a teapot, and price lower than 20.00 dollars', 'train'), goal('a black teapot, and price lower than 30.00 dollars', 'val')],
  B0MUG00003: [goal('a mug, and price lower than 20.00 dollars', 'train')],
};

function trainEnv(holdOut: boolean): Env {
  const dir = scratch({ 'goals.json': JSON.stringify(GOALS) });
  copyFileSync(join(FIXTURES, 'items_shuffle_mini.json'), join(dir, 'products.json'));
  const config = webshop.config.parse({ products_file: 'products.json', goals_file: 'goals.json', split: 'train', hold_out_products: holdOut });
  return new webshop.env(config, new PluginHost(dir).envContext()) as Env;
}

const askedAsins = (env: Env) => new Set(Array.from({ length: 40 }, (_, seed) => ((env.reset(seed) as ResetResult).info.goal as { asin: string }).asin));

describe('webshop hold_out_products', () => {
  test('the train split then never asks for a product that has a held-out goal', () => {
    expect([...askedAsins(trainEnv(false))].sort()).toEqual(['B0MUG00003', 'B0TEAPOT01']);
    expect([...askedAsins(trainEnv(true))]).toEqual(['B0MUG00003']);
  });

  test('a held-out goal replays through reset options, on its product', () => {
    const env = trainEnv(true);
    const episode = { id: 'B0TEAPOT01#1', asin: 'B0TEAPOT01', instruction: 'a black teapot', attributes: [], options: [], price_upper: 30 };
    const reset = env.reset(0, undefined, { episode }) as ResetResult;
    expect(reset.info.episode).toEqual(episode);
    expect(reset.info.instruction).toEndWith('Instruction: a black teapot');
  });
});
