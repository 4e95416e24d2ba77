/**
 * Generates the webshop env's shipped catalog: `bun plugins/envs/webshop/_generate/catalog.ts` writes
 * plugins/envs/webshop/data/{products,goals}.json. Deterministic (a fixed seed through the
 * project's Rng), so the committed files are exactly what this script writes (a test checks).
 *
 * Products and goals use the public WebShop files' shape (items_shuffle / items_human_ins), plus
 * `attributes` on products and `price_upper` and `split` on goals; all names and texts are made up.
 */
import { Rng } from '../../../../src/engine/rng';

interface ProductType {
  query: string;
  /** How the instruction asks for it. */
  ask: string;
  /** The product noun in titles. */
  noun: string;
  leaf: string;
  attributes: string[];
  options: Record<string, string[]>;
  price: [number, number];
}

interface Department {
  category: string;
  path: string[];
  types: ProductType[];
}

const SIZES_CLOTHING = ['small', 'medium', 'large', 'x-large'];

const DEPARTMENTS: Department[] = [
  {
    category: 'beauty',
    path: ['Beauty & Personal Care', 'Hair Care'],
    types: [
      {
        query: 'hair extension',
        ask: 'a clip-in hair extension',
        noun: 'Clip-In Hair Extension',
        leaf: 'Hair Extensions',
        price: [15, 60],
        attributes: ['natural looking', 'heat resistant', 'long lasting', 'easy to apply', 'tangle free', 'thick'],
        options: { color: ['natural black', 'dark brown', 'light brown', 'honey blonde', 'auburn'], length: ['14 inch', '18 inch', '22 inch'] },
      },
      {
        query: 'hair dryer',
        ask: 'a hair dryer',
        noun: 'Ionic Hair Dryer',
        leaf: 'Hair Dryers',
        price: [20, 90],
        attributes: ['lightweight', 'low noise', 'fast drying', 'foldable handle', 'travel size', 'long cord'],
        options: { color: ['black', 'white', 'rose gold'] },
      },
      {
        query: 'shampoo',
        ask: 'a shampoo',
        noun: 'Moisturizing Shampoo',
        leaf: 'Shampoos',
        price: [6, 30],
        attributes: ['sulfate free', 'paraben free', 'for dry hair', 'cruelty free', 'color safe', 'tea tree'],
        options: { size: ['8 fl oz', '16 fl oz', '32 fl oz'] },
      },
    ],
  },
  {
    category: 'beauty',
    path: ['Beauty & Personal Care', 'Skin Care'],
    types: [
      {
        query: 'face moisturizer',
        ask: 'a face moisturizer',
        noun: 'Daily Face Moisturizer',
        leaf: 'Face Moisturizers',
        price: [10, 45],
        attributes: ['fragrance free', 'for sensitive skin', 'with spf 30', 'non greasy', 'hyaluronic acid', 'oil free'],
        options: { size: ['1.7 oz', '3.4 oz'] },
      },
      {
        query: 'sunscreen',
        ask: 'a sunscreen',
        noun: 'Mineral Sunscreen Lotion',
        leaf: 'Sunscreens',
        price: [8, 30],
        attributes: ['water resistant', 'reef safe', 'broad spectrum', 'fragrance free', 'for kids', 'non greasy'],
        options: { size: ['3 oz', '6 oz'], protection: ['spf 30', 'spf 50'] },
      },
      {
        query: 'lip balm',
        ask: 'a lip balm',
        noun: 'Tinted Lip Balm',
        leaf: 'Lip Balms',
        price: [4, 18],
        attributes: ['long lasting', 'natural ingredients', 'vegan', 'moisturizing', 'with spf 15', 'gluten free'],
        options: { color: ['rose', 'coral', 'berry', 'nude'] },
      },
    ],
  },
  {
    category: 'fashion',
    path: ['Clothing, Shoes & Jewelry', 'Shoes'],
    types: [
      {
        query: 'running shoes',
        ask: 'running shoes',
        noun: 'Running Shoes',
        leaf: 'Running Shoes',
        price: [30, 120],
        attributes: ['breathable mesh', 'non slip', 'memory foam', 'lightweight', 'arch support', 'machine washable'],
        options: { size: ['7', '8', '9', '10', '11'], color: ['black', 'white', 'grey', 'navy blue'] },
      },
      {
        query: 'hiking boots',
        ask: 'hiking boots',
        noun: 'Waterproof Hiking Boots',
        leaf: 'Hiking Boots',
        price: [50, 160],
        attributes: ['waterproof', 'ankle support', 'rubber sole', 'slip resistant', 'insulated', 'lace up'],
        options: { size: ['8', '9', '10', '11', '12'], color: ['brown', 'black', 'khaki'] },
      },
      {
        query: 'sandals',
        ask: 'sandals',
        noun: 'Slide Sandals',
        leaf: 'Sandals',
        price: [15, 50],
        attributes: ['open toe', 'quick drying', 'cushioned footbed', 'adjustable strap', 'non slip', 'vegan leather'],
        options: { size: ['6', '7', '8', '9', '10'], color: ['black', 'tan', 'white'] },
      },
    ],
  },
  {
    category: 'fashion',
    path: ['Clothing, Shoes & Jewelry', 'Clothing'],
    types: [
      {
        query: 't-shirt',
        ask: 'a t-shirt',
        noun: 'Crew Neck T-Shirt',
        leaf: 'T-Shirts',
        price: [10, 30],
        attributes: ['cotton', 'short sleeve', 'relaxed fit', 'machine wash', 'moisture wicking', 'tagless'],
        options: { size: SIZES_CLOTHING, color: ['black', 'white', 'heather grey', 'olive green', 'navy'] },
      },
      {
        query: 'hoodie',
        ask: 'a hoodie',
        noun: 'Pullover Hoodie',
        leaf: 'Hoodies',
        price: [25, 60],
        attributes: ['fleece lined', 'kangaroo pocket', 'long sleeve', 'relaxed fit', 'machine wash', 'drawstring hood'],
        options: { size: SIZES_CLOTHING, color: ['black', 'charcoal', 'burgundy', 'forest green'] },
      },
      {
        query: 'yoga pants',
        ask: 'yoga pants',
        noun: 'High Waist Yoga Pants',
        leaf: 'Leggings',
        price: [18, 45],
        attributes: ['high waist', 'tummy control', 'four way stretch', 'squat proof', 'with pockets', 'moisture wicking'],
        options: { size: ['x-small', 'small', 'medium', 'large'], color: ['black', 'navy', 'plum', 'dark grey'] },
      },
    ],
  },
  {
    category: 'home',
    path: ['Home & Kitchen', 'Kitchen & Dining'],
    types: [
      {
        query: 'coffee mug',
        ask: 'a coffee mug',
        noun: 'Ceramic Coffee Mug',
        leaf: 'Mugs',
        price: [8, 28],
        attributes: ['dishwasher safe', 'microwave safe', 'lead free', 'large capacity', 'gift box', 'stackable'],
        options: { size: ['12 oz', '16 oz'], color: ['white', 'matte black', 'sage green'] },
      },
      {
        query: 'water bottle',
        ask: 'a water bottle',
        noun: 'Insulated Water Bottle',
        leaf: 'Water Bottles',
        price: [12, 45],
        attributes: ['bpa free', 'leak proof', 'stainless steel', 'keeps drinks cold', 'wide mouth', 'with straw lid'],
        options: { size: ['18 oz', '32 oz', '40 oz'], color: ['black', 'white', 'lavender', 'teal'] },
      },
      {
        query: 'chef knife',
        ask: 'a chef knife',
        noun: 'Chef Knife',
        leaf: 'Chef Knives',
        price: [15, 90],
        attributes: ['high carbon steel', 'ergonomic handle', 'razor sharp', 'full tang', 'rust resistant', 'with sheath'],
        options: { size: ['6 inch', '8 inch'] },
      },
    ],
  },
  {
    category: 'home',
    path: ['Home & Kitchen', 'Bedding'],
    types: [
      {
        query: 'bed sheet set',
        ask: 'a bed sheet set',
        noun: 'Microfiber Bed Sheet Set',
        leaf: 'Sheet Sets',
        price: [20, 70],
        attributes: ['deep pocket', 'wrinkle resistant', 'breathable', 'hypoallergenic', 'machine washable', 'extra soft'],
        options: { size: ['twin', 'full', 'queen', 'king'], color: ['white', 'grey', 'navy', 'sage'] },
      },
      {
        query: 'throw pillow cover',
        ask: 'throw pillow covers',
        noun: 'Throw Pillow Covers',
        leaf: 'Throw Pillow Covers',
        price: [10, 30],
        attributes: ['hidden zipper', 'machine washable', 'soft velvet', 'set of 2', 'fade resistant', 'farmhouse style'],
        options: { size: ['18x18 inch', '20x20 inch'], color: ['cream', 'mustard', 'teal', 'blush pink'] },
      },
      {
        query: 'weighted blanket',
        ask: 'a weighted blanket',
        noun: 'Weighted Blanket',
        leaf: 'Weighted Blankets',
        price: [40, 130],
        attributes: ['cooling', 'breathable', 'glass beads', 'removable cover', 'machine washable', 'even weight distribution'],
        options: { weight: ['15 lbs', '20 lbs'], color: ['grey', 'navy', 'beige'] },
      },
    ],
  },
  {
    category: 'electronics',
    path: ['Electronics', 'Accessories'],
    types: [
      {
        query: 'wireless earbuds',
        ask: 'wireless earbuds',
        noun: 'Wireless Earbuds',
        leaf: 'Earbuds',
        price: [20, 150],
        attributes: ['noise cancelling', 'bluetooth 5.3', 'water resistant', 'long battery life', 'charging case', 'built in microphone'],
        options: { color: ['black', 'white', 'blue'] },
      },
      {
        query: 'phone case',
        ask: 'a phone case',
        noun: 'Protective Phone Case',
        leaf: 'Phone Cases',
        price: [8, 30],
        attributes: ['shockproof', 'slim fit', 'wireless charging compatible', 'raised edges', 'clear back', 'anti scratch'],
        options: { color: ['clear', 'black', 'midnight blue', 'pink'], model: ['iphone 14', 'iphone 15', 'galaxy s23'] },
      },
      {
        query: 'usb c cable',
        ask: 'a usb c cable',
        noun: 'USB C Charging Cable',
        leaf: 'Cables',
        price: [6, 25],
        attributes: ['fast charging', 'braided nylon', 'data transfer', 'durable', 'tangle free', '100w'],
        options: { length: ['3 ft', '6 ft', '10 ft'], color: ['black', 'white', 'red'] },
      },
    ],
  },
  {
    category: 'pets',
    path: ['Pet Supplies'],
    types: [
      {
        query: 'dog bed',
        ask: 'a dog bed',
        noun: 'Orthopedic Dog Bed',
        leaf: 'Dog Beds',
        price: [25, 110],
        attributes: ['memory foam', 'washable cover', 'non skid bottom', 'waterproof liner', 'bolster', 'for large dogs'],
        options: { size: ['medium', 'large', 'x-large'], color: ['grey', 'brown', 'navy'] },
      },
      {
        query: 'dog leash',
        ask: 'a dog leash',
        noun: 'Reflective Dog Leash',
        leaf: 'Leashes',
        price: [8, 30],
        attributes: ['reflective stitching', 'padded handle', 'heavy duty', 'for large dogs', 'with poop bag holder', 'quick release'],
        options: { length: ['4 ft', '6 ft'], color: ['black', 'red', 'blue', 'orange'] },
      },
      {
        query: 'cat scratching post',
        ask: 'a cat scratching post',
        noun: 'Cat Scratching Post',
        leaf: 'Scratching Posts',
        price: [15, 60],
        attributes: ['sisal rope', 'sturdy base', 'with dangling toy', 'tall', 'easy assembly', 'space saving'],
        options: { color: ['beige', 'grey', 'dark brown'] },
      },
    ],
  },
  {
    category: 'sports',
    path: ['Sports & Outdoors'],
    types: [
      {
        query: 'yoga mat',
        ask: 'a yoga mat',
        noun: 'Yoga Mat',
        leaf: 'Yoga Mats',
        price: [15, 60],
        attributes: ['extra thick', 'non slip', 'eco friendly', 'with carrying strap', 'sweat resistant', 'lightweight'],
        options: { color: ['purple', 'blue', 'black', 'pink'], thickness: ['4mm', '6mm', '8mm'] },
      },
      {
        query: 'dumbbells',
        ask: 'dumbbells',
        noun: 'Dumbbells',
        leaf: 'Dumbbells',
        price: [15, 120],
        attributes: ['neoprene coated', 'anti roll', 'easy grip', 'hex shape', 'set of 2', 'for home gym'],
        options: { weight: ['5 lb', '10 lb', '15 lb', '20 lb'] },
      },
      {
        query: 'camping tent',
        ask: 'a camping tent',
        noun: 'Dome Camping Tent',
        leaf: 'Tents',
        price: [50, 200],
        attributes: ['waterproof', 'easy setup', '4 person', 'rainfly', 'ventilated', 'carry bag'],
        options: { color: ['green', 'orange', 'grey'] },
      },
    ],
  },
];

const BRANDS = [
  'Aldenvale',
  'Brisko',
  'Corvane',
  'Dellmor',
  'Embrix',
  'Fennick',
  'Gravia',
  'Hollis & Pike',
  'Ivaro',
  'Jumbree',
  'Kestrel Lane',
  'Lumera',
  'Mossgate',
  'Norvik',
  'Oakhurst',
  'Pellora',
  'Quenby',
  'Rivora',
  'Sablewood',
  'Tamsin',
];

const FEATURE_ENDINGS = ['for everyday use', 'tested by our team', 'made to last', 'as described', 'a customer favorite'];
const REVIEW_TITLES = ['Just what I wanted', 'Good value', 'Works well', 'Decent but not perfect', 'Would buy again'];
const REVIEW_BODIES = [
  'Arrived quickly and looks like the pictures.',
  'Does the job; the {a} part is true.',
  'Nice quality for the price.',
  'Happy with it, {a} as promised.',
];
const ASKS = ['i need {what} that is {atts}', 'i am looking for {what}, {atts}', 'find me {what} which is {atts}', 'i want {what}: {atts}'];

const PRODUCTS_PER_TYPE = 11;
/**
 * Goals written for each product of the train split besides its first: other attributes, option
 * values and price limits, as the real WebShop writes several instructions per product. They come
 * from a stream of their own after every product and first goal is drawn, so those stay as they
 * were (the suite webshop/v1 pins the val goals); val products get none.
 */
const EXTRA_TRAIN_GOALS = 4;
const SEED = 20220714;

const titleCase = (text: string) => text.replace(/\b[a-z]/g, (c) => c.toUpperCase());
const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const listing = (items: readonly string[]) => (items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);
const pick = <T>(rng: Rng, items: readonly T[], count: number): T[] => rng.shuffle([...items]).slice(0, count);
/** `count` of `items`, in their original order. */
const pickInOrder = <T>(rng: Rng, items: readonly T[], count: number): T[] => {
  const chosen = new Set(pick(rng, items, count));
  return items.filter((item) => chosen.has(item));
};

function asin(rng: Rng, taken: Set<string>): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  for (;;) {
    let id = 'B0';
    for (let i = 0; i < 8; i++) id += alphabet[rng.int(alphabet.length)];
    if (!taken.has(id)) {
      taken.add(id);
      return id;
    }
  }
}

/** What a goal is written from: the product's type, attributes, options and price. */
interface GoalSource {
  type: ProductType;
  attributes: string[];
  options: Record<string, string[]>;
  price: number;
}

/** A goal for the product: some of its attributes, one value of each option, a price limit above its price. */
function writeGoal(rng: Rng, { type, attributes, options, price }: GoalSource, split: 'train' | 'val') {
  const wanted = pick(rng, attributes, rng.intBetween(1, 3));
  const chosen = Object.fromEntries(Object.entries(options).map(([name, values]) => [name, rng.choice(values)]));
  const priceUpper = (Math.floor(price / 10) + 1 + rng.int(3)) * 10;
  const optionText = Object.entries(chosen)
    .map(([name, value]) => `${name}: ${value}`)
    .join(', and ');
  const ask = rng.choice(ASKS).replace('{what}', type.ask).replace('{atts}', listing(wanted));
  return {
    instruction: `${ask}${optionText ? `, with ${optionText}` : ''}, and price lower than ${priceUpper.toFixed(2)} dollars`,
    instruction_attributes: wanted,
    instruction_options: chosen,
    price_upper: priceUpper,
    split,
  };
}

export interface GeneratedCatalog {
  products: string;
  goals: string;
}

export function generateCatalog(): GeneratedCatalog {
  const rng = Rng.fromSeed(SEED, 'webshop-catalog');
  const taken = new Set<string>();
  const products: Record<string, unknown>[] = [];
  const goals: Record<string, unknown> = {};
  let goalCount = 0;
  const trainProducts: Array<GoalSource & { id: string }> = [];

  for (const department of DEPARTMENTS) {
    for (const type of department.types) {
      for (let n = 0; n < PRODUCTS_PER_TYPE; n++) {
        const id = asin(rng, taken);
        const brand = rng.choice(BRANDS);
        const attributes = pick(rng, type.attributes, rng.intBetween(3, 4));
        const options = Object.fromEntries(
          Object.entries(type.options).map(([name, values]) => [name, pickInOrder(rng, values, rng.intBetween(2, values.length))]),
        );
        const low = type.price[0] + rng.float() * (type.price[1] - type.price[0]);
        const price = Math.floor(low) + 0.99;
        const pricing = rng.bernoulli(0.12) ? `$${price.toFixed(2)} to $${(price + 2 + rng.int(8)).toFixed(2)}` : `$${price.toFixed(2)}`;
        const inTitle = attributes.slice(0, rng.intBetween(1, 2));
        const name = `${brand} ${titleCase(inTitle[0]!)} ${type.noun}${inTitle[1] ? `, ${titleCase(inTitle[1])}` : ''}`;
        const rating = (3.4 + rng.float() * 1.6).toFixed(1);
        products.push({
          asin: id,
          name,
          category: department.category,
          query: type.query,
          product_category: [...department.path, type.leaf].join(' › '),
          pricing,
          small_description: attributes.map((a) => `${capitalize(a)}, ${rng.choice(FEATURE_ENDINGS)}.`),
          full_description: `The ${brand} ${type.noun.toLowerCase()} is ${listing(attributes)}. Backed by a 30-day return policy.`,
          customization_options: options,
          Rating: rating,
          Reviews: pick(rng, REVIEW_TITLES, rng.intBetween(1, 2)).map((title) => ({
            score: String(rng.intBetween(3, 5)),
            title,
            body: rng.choice(REVIEW_BODIES).replace('{a}', rng.choice(attributes)),
          })),
          attributes,
        });

        const split = goalCount % 5 === 4 ? 'val' : 'train';
        goals[id] = [writeGoal(rng, { type, attributes, options, price }, split)];
        if (split === 'train') trainProducts.push({ id, type, attributes, options, price });
        goalCount++;
      }
    }
  }
  const extra = Rng.fromSeed(SEED, 'webshop-extra-goals');
  for (const product of trainProducts) {
    const written = goals[product.id] as Array<{ instruction: string }>;
    for (let tries = 0; written.length <= EXTRA_TRAIN_GOALS && tries < 4 * EXTRA_TRAIN_GOALS; tries++) {
      const goal = writeGoal(extra, product, 'train');
      if (!written.some((g) => g.instruction === goal.instruction)) written.push(goal);
    }
  }
  const lines = (items: unknown[]) => `[\n${items.map((item) => JSON.stringify(item)).join(',\n')}\n]\n`;
  const entries = Object.entries(goals).map(([key, value]) => `${JSON.stringify(key)}: ${JSON.stringify(value)}`);
  return { products: lines(products), goals: `{\n${entries.join(',\n')}\n}\n` };
}

if (import.meta.main) {
  const { products, goals } = generateCatalog();
  const data = new URL('../data/', import.meta.url);
  await Bun.write(new URL('products.json', data), products);
  await Bun.write(new URL('goals.json', data), goals);
  console.log(`wrote plugins/envs/webshop/data/products.json (${products.length} bytes) and goals.json (${goals.length} bytes)`);
}
