/**
 * Writes the invented encyclopedia (plugins/datasets/corpus/passages.jsonl) and questions answerable
 * from it (plugins/datasets/corpus_qa/{train,val}.jsonl): towns, people, inventions and rivers of a
 * made-up land, with facts that cross-reference each other (so some questions need two searches).
 * Deterministic: the same seed writes the same bytes. Run: bun plugins/datasets/_generate/corpus.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Rng } from '../../../src/engine/rng';

const SEED = 20250;
const OUT = resolve(import.meta.dir, '..');
const rng = Rng.fromSeed(SEED, 'corpus');

const ONSETS = ['b', 'br', 'c', 'd', 'dr', 'f', 'g', 'gr', 'h', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'th', 'v', 'w', 'z', 'st', 'tr', 'kel', 'mor'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ei', 'ou', 'ar', 'or', 'el'];
const CODAS = ['', 'n', 'r', 'l', 's', 'th', 'm', 'nd', 'rk', 'sk', 'ck'];
const used = new Set<string>();

function word(syllables: number): string {
  for (;;) {
    let w = '';
    for (let i = 0; i < syllables; i++) w += rng.choice(ONSETS) + rng.choice(VOWELS) + (i === syllables - 1 ? rng.choice(CODAS) : '');
    const name = w[0]!.toUpperCase() + w.slice(1);
    if (!used.has(name) && name.length >= 4 && name.length <= 11) {
      used.add(name);
      return name;
    }
  }
}

const TOWN_SUFFIXES = ['', '', 'ford', 'holm', 'wick', 'stead', 'burg', 'mere'];
const REGIONS = ['the Northern Marches', 'the Amber Coast', 'the Vell Highlands', 'the Lowmeadow Basin', 'the Saltreach'];
const PRODUCTS = [
  'glass lanterns',
  'blue wool',
  'copper bells',
  'pear cider',
  'salt cod',
  'clock springs',
  'paper kites',
  'river pearls',
  'slate tiles',
  'honey cakes',
  'dyed silk',
  'iron nails',
];
const PROFESSIONS = ['engineer', 'astronomer', 'clockmaker', 'physician', 'cartographer', 'chemist', 'shipwright', 'botanist', 'architect', 'weaver'];
const DEVICES = ['loom', 'lamp', 'pump', 'compass', 'press', 'kiln', 'telescope', 'valve', 'mill', 'scale', 'sextant', 'furnace'];
const PURPOSES = [
  'lifting water from deep wells',
  'weaving patterned cloth',
  'measuring the height of stars',
  'drying grain in wet seasons',
  'printing maps in colour',
  'keeping time at sea',
  'lighting mine tunnels',
  'weighing letters at post offices',
  'grinding pigments for painters',
  'cooling bread ovens quickly',
];

interface Person {
  name: string;
  born: number;
  died: number;
  town: string;
  profession: string;
  invention?: string;
}
interface Town {
  name: string;
  region: string;
  founded: number;
  founder: string;
  population: number;
  river: string;
  product: string;
  twin?: string;
}
interface Invention {
  name: string;
  inventor: string;
  year: number;
  town: string;
  purpose: string;
}
interface River {
  name: string;
  length: number;
  source: string;
  mouth: string;
}

const rivers: River[] = Array.from({ length: 16 }, () => ({ name: `${word(2)} River`, length: rng.intBetween(40, 900), source: '', mouth: '' }));
const towns0 = new Set<string>();
const towns: Town[] = Array.from({ length: 70 }, () => {
  let name = word(rng.intBetween(1, 2)) + rng.choice(TOWN_SUFFIXES);
  while (towns0.has(name)) name = word(2);
  towns0.add(name);
  return {
    name,
    region: rng.choice(REGIONS),
    founded: rng.intBetween(880, 1720),
    founder: '',
    population: rng.intBetween(8, 900) * 100,
    river: rng.choice(rivers).name,
    product: rng.choice(PRODUCTS),
  };
});
const people: Person[] = Array.from({ length: 90 }, () => {
  const born = rng.intBetween(1100, 1850);
  return { name: `${word(2)} ${word(2)}`, born, died: born + rng.intBetween(38, 94), town: rng.choice(towns).name, profession: rng.choice(PROFESSIONS) };
});
const inventions: Invention[] = people.slice(0, 55).map((person) => {
  const name = `${word(2)} ${rng.choice(DEVICES)}`;
  person.invention = name;
  return { name, inventor: person.name, year: rng.intBetween(person.born + 20, person.died - 1), town: rng.choice(towns).name, purpose: rng.choice(PURPOSES) };
});
for (const town of towns) {
  town.founder = rng.choice(people).name;
  if (rng.bernoulli(0.4)) town.twin = rng.choice(towns.filter((t) => t !== town)).name;
}
for (const river of rivers) {
  river.source = rng.choice(towns).name;
  river.mouth = rng.choice(towns.filter((t) => t.name !== river.source)).name;
}
const personByName = new Map(people.map((p) => [p.name, p]));

function pick<T>(options: T[]): T {
  return rng.choice(options);
}

const passages: Array<{ id: string; title: string; text: string }> = [];
for (const t of towns) {
  const sentences = [
    pick([`${t.name} is a town in ${t.region}.`, `${t.name} is a market town of ${t.region}.`]),
    pick([`It was founded in ${t.founded} by ${t.founder}.`, `${t.founder} founded it in the year ${t.founded}.`]),
    `The ${t.river} runs through the town, which has about ${t.population.toLocaleString('en-US')} inhabitants.`,
    pick([`${t.name} is best known for its ${t.product}.`, `Its workshops are famous for ${t.product}.`]),
  ];
  if (t.twin) sentences.push(`It is twinned with ${t.twin}.`);
  passages.push({ id: '', title: t.name, text: sentences.join(' ') });
}
for (const p of people) {
  const sentences = [
    `${p.name} (${p.born}–${p.died}) was a ${p.profession} born in ${p.town}.`,
    pick([
      `${p.name.split(' ')[1]} spent most of a long career travelling between workshops.`,
      `${p.name.split(' ')[1]} trained as an apprentice before working alone.`,
      `${p.name.split(' ')[1]} wrote several short treatises.`,
    ]),
  ];
  if (p.invention) sentences.push(`${p.name.split(' ')[1]} is remembered as the inventor of the ${p.invention}.`);
  const founded = towns.filter((t) => t.founder === p.name);
  if (founded.length > 0) sentences.push(`${p.name.split(' ')[1]} also founded ${founded.map((t) => t.name).join(' and ')}.`);
  passages.push({ id: '', title: p.name, text: sentences.join(' ') });
}
for (const inv of inventions) {
  const text = [
    `The ${inv.name} is a device for ${inv.purpose}.`,
    `It was built in ${inv.year} by ${inv.inventor} in ${inv.town}.`,
    pick(['Copies of it spread quickly along the trade roads.', 'Only a few early examples survive.', 'It remained in use for more than a century.']),
  ].join(' ');
  passages.push({ id: '', title: `The ${inv.name}`, text });
}
for (const r of rivers) {
  const text = `The ${r.name} is ${r.length} kilometres long. It rises near ${r.source} and flows into the sea at ${r.mouth}.`;
  passages.push({ id: '', title: `The ${r.name}`, text });
}
rng.shuffle(passages);
passages.forEach((p, i) => (p.id = `p${String(i + 1).padStart(3, '0')}`));

type Qa = { question: string; answer: string };
const questions: Qa[] = [];
for (const t of towns) {
  questions.push({ question: `In what year was ${t.name} founded?`, answer: String(t.founded) });
  questions.push({ question: `Who founded the town of ${t.name}?`, answer: t.founder });
  questions.push({ question: `Which river runs through ${t.name}?`, answer: `the ${t.river}` });
  questions.push({ question: `What is ${t.name} best known for?`, answer: t.product });
  const founder = personByName.get(t.founder)!;
  questions.push({ question: `What was the profession of the founder of ${t.name}?`, answer: founder.profession });
}
for (const p of people) {
  questions.push({ question: `In which town was ${p.name} born?`, answer: p.town });
  questions.push({ question: `In what year did ${p.name} die?`, answer: String(p.died) });
}
for (const inv of inventions) {
  questions.push({ question: `Who invented the ${inv.name}?`, answer: inv.inventor });
  questions.push({ question: `In what year was the ${inv.name} built?`, answer: String(inv.year) });
  questions.push({ question: `In which town was the inventor of the ${inv.name} born?`, answer: personByName.get(inv.inventor)!.town });
}
for (const r of rivers) questions.push({ question: `How long is the ${r.name}, in kilometres?`, answer: String(r.length) });
rng.shuffle(questions);
const valSize = 100;
const val = questions.slice(0, valSize);
const train = questions.slice(valSize, valSize + 400);

const jsonl = (rows: object[]) => rows.map((row) => JSON.stringify(row)).join('\n') + '\n';
mkdirSync(join(OUT, 'corpus'), { recursive: true });
mkdirSync(join(OUT, 'corpus_qa'), { recursive: true });
writeFileSync(join(OUT, 'corpus/passages.jsonl'), jsonl(passages));
writeFileSync(join(OUT, 'corpus_qa/train.jsonl'), jsonl(train));
writeFileSync(join(OUT, 'corpus_qa/val.jsonl'), jsonl(val));
console.log(`${passages.length} passages, ${train.length} train and ${val.length} val questions`);
