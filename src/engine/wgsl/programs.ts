/**
 * The WGSL programs of generation on the GPU (../../model/gpu_decode.ts): a transformer block's
 * pieces for rows of tokens, attention over a paged KV cache, and sampling. Every program computes
 * each output from its own row's inputs in a fixed order (products sum k = 0, 1, ... one after
 * the other; reductions run the same tree for any batch), so a token's bits never depend on which
 * other rows share its dispatch: a sequence generates the same alone or beside others, and a
 * prompt prefilled in one pass gets what token-by-token decoding would.
 *
 * Workgroups are 64 invocations and workgroup memory stays under 12 KiB, within WebGPU's
 * compatibility limits (16 KiB; Mesa's llvmpipe through OpenGL ES, where CI tests them). A grid
 * of more than 65,535 workgroups is folded into a second dimension (`grid` in ./runner.ts);
 * programs read their linear index back with `num_workgroups`.
 *
 * Page layout of the KV cache, per pool (keys or values): [pages, layers, kv heads, page size,
 * head dim]. A sequence owns a list of pages; growing the pool appends pages, so pages keep their
 * place and their contents.
 */

/** A WGSL program: its parameters a uniform at binding 0, its storage buffers after it in order; entry point main. */
export interface Program {
  name: string;
  code: string;
}

const GROUP = 64;

const LINEAR = /* wgsl */ `
fn linear(wg: vec3<u32>, groups: vec3<u32>) -> u32 { return wg.y * groups.x + wg.x; }`;

/**
 * The info buffer every program that places tokens reads (u32): for token row r, info[2r] is its
 * sequence's row in the page table and info[2r + 1] its position; the page table is [sequences,
 * max pages] from info[table].
 */
const PAGES = /* wgsl */ `
fn slotOf(sequence: u32, t: u32) -> u32 {
  let page = info[p.table + sequence * p.maxPages + t / p.pageSize];
  return (((page * p.layers + p.layer) * p.kvHeads) * p.pageSize + t % p.pageSize) * p.headDim;
}
fn slot(r: u32, t: u32) -> u32 { return slotOf(info[2u * r], t); }`;

/** Rows of `table` picked by index: out[r] = table[info[at + r]] (the embedding; the prompts' last rows). */
export const GATHER_ROWS: Program = {
  name: 'gather_rows',
  code: /* wgsl */ `
struct P { width: u32, rows: u32, at: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> table: array<f32>;
@group(0) @binding(2) var<storage, read> info: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
${LINEAR}
@compute @workgroup_size(${GROUP})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let e = linear(wg, groups) * ${GROUP}u + lid;
  if (e >= p.width * p.rows) { return; }
  let r = e / p.width;
  out[e] = table[info[p.at + r] * p.width + e % p.width];
}`,
};

/** RMSNorm of each row: x * rsqrt(mean(x^2) + eps) * weight, as the model's tfjs ops compute it. */
export const RMS_NORM: Program = {
  name: 'rms_norm',
  code: /* wgsl */ `
struct P { width: u32, rows: u32, eps: f32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
var<workgroup> part: array<f32, ${GROUP}>;
${LINEAR}
@compute @workgroup_size(${GROUP})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let r = linear(wg, groups);
  if (r >= p.rows) { return; }
  let at = r * p.width;
  var s = 0.0;
  for (var i = lid; i < p.width; i += ${GROUP}u) { s += x[at + i] * x[at + i]; }
  part[lid] = s;
  workgroupBarrier();
  for (var stride = ${GROUP / 2}u; stride > 0u; stride >>= 1u) {
    if (lid < stride) { part[lid] += part[lid + stride]; }
    workgroupBarrier();
  }
  let scale = inverseSqrt(part[0] / f32(p.width) + p.eps);
  for (var i = lid; i < p.width; i += ${GROUP}u) { out[at + i] = x[at + i] * scale * weight[i]; }
}`,
};

/**
 * out [m, n] (=, or += alpha *) a [m, k] times w: w is [k, n] (the model's input-major weights)
 * or, transposed, [n, k] (the tied embedding as the language-model head); an optional bias [n].
 * `gated`: the MLP's gate and up projections at once (w and a second weight `up`, both [k, n]),
 * out = silu(a w) * (a up), as the SWIGLU program computes it from the two products.
 * 32x32 output tiles, each invocation a 4x4 block held as four vec4 rows, k in steps of 32
 * through workgroup memory, where the tiles are kept as vec4s (a: four k of a row; w: four
 * columns of a k). Each output sums k = 0, 1, ... in order.
 */
export function matMulProgram(options: { transposed?: boolean; bias?: boolean; accumulate?: boolean; gated?: boolean }): Program {
  const { transposed = false, bias = false, accumulate = false, gated = false } = options;
  const name = `matmul${transposed ? '_t' : ''}${bias ? '_bias' : ''}${accumulate ? '_acc' : ''}${gated ? '_gated' : ''}`;
  // the tile of w holds [k][column]; a transposed w is read along k so neighbours read neighbours
  const place = transposed
    ? 'let kk = e % 32u; let c = e / 32u; let wk = k0 + kk; let wc = col0 + c; let wAt = wc * p.k + wk;'
    : 'let kk = e / 32u; let c = e % 32u; let wk = k0 + kk; let wc = col0 + c; let wAt = wk * p.n + wc;';
  const load = (tile: string, from: string) =>
    `${tile}[kk * 8u + c / 4u][c % 4u] = select(0.0, ${from}[min(wAt, arrayLength(&${from}) - 1u)], wk < p.k && wc < p.n);`;
  const sum = (into: string, tile: string) => `
      let ${tile}0 = ${tile}[(4u * k4) * 8u + lid.x];
      let ${tile}1 = ${tile}[(4u * k4 + 1u) * 8u + lid.x];
      let ${tile}2 = ${tile}[(4u * k4 + 2u) * 8u + lid.x];
      let ${tile}3 = ${tile}[(4u * k4 + 3u) * 8u + lid.x];
      for (var i = 0u; i < 4u; i++) {
        let av = as_[(lid.y * 4u + i) * 8u + k4];
        ${into}[i] = ${into}[i] + av.x * ${tile}0;
        ${into}[i] = ${into}[i] + av.y * ${tile}1;
        ${into}[i] = ${into}[i] + av.z * ${tile}2;
        ${into}[i] = ${into}[i] + av.w * ${tile}3;
      }`;
  const value = bias ? 'acc[i][j] + b[c]' : 'acc[i][j]';
  const store = gated
    ? 'let g = acc[i][j]; out[at] = g * (1.0 / (1.0 + exp(-g))) * accUp[i][j];'
    : accumulate
      ? `out[at] = out[at] + p.alpha * (${value});`
      : `out[at] = ${value};`;
  return {
    name,
    code: /* wgsl */ `
struct P { m: u32, n: u32, k: u32, alpha: f32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
${bias ? '@group(0) @binding(4) var<storage, read> b: array<f32>;' : ''}
${gated ? '@group(0) @binding(4) var<storage, read> up: array<f32>;\nvar<workgroup> us: array<vec4<f32>, 256>;' : ''}
var<workgroup> as_: array<vec4<f32>, 256>;
var<workgroup> ws: array<vec4<f32>, 256>;
@compute @workgroup_size(8, 8)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let row0 = wg.y * 32u;
  let col0 = wg.x * 32u;
  let t = lid.y * 8u + lid.x;
  var acc: array<vec4<f32>, 4>;
  ${gated ? 'var accUp: array<vec4<f32>, 4>;' : ''}
  for (var k0 = 0u; k0 < p.k; k0 += 32u) {
    for (var i = 0u; i < 16u; i++) {
      let e = i * 64u + t;
      let ar = row0 + e / 32u;
      let ak = k0 + e % 32u;
      as_[(e / 32u) * 8u + (e % 32u) / 4u][e % 4u] = select(0.0, a[min(ar * p.k + ak, arrayLength(&a) - 1u)], ar < p.m && ak < p.k);
      ${place}
      ${load('ws', 'w')}
      ${gated ? load('us', 'up') : ''}
    }
    workgroupBarrier();
    for (var k4 = 0u; k4 < 8u; k4++) {${sum('acc', 'ws')}${gated ? sum('accUp', 'us') : ''}
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i++) {
    let r = row0 + lid.y * 4u + i;
    for (var j = 0u; j < 4u; j++) {
      let c = col0 + lid.x * 4u + j;
      if (r < p.m && c < p.n) {
        let at = r * p.n + c;
        ${store}
      }
    }
  }
}`,
  };
}

/**
 * Rotary embedding, rotate-half layout: out = x cos + rotate_half(x) sin, for x [rows, heads, head
 * dim]; cos and sin [rows, head dim] each, one after the other in `angles`.
 */
export const ROPE: Program = {
  name: 'rope',
  code: /* wgsl */ `
struct P { heads: u32, headDim: u32, rows: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> angles: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
${LINEAR}
@compute @workgroup_size(${GROUP})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let e = linear(wg, groups) * ${GROUP}u + lid;
  if (e >= p.rows * p.heads * p.headDim) { return; }
  let r = e / (p.heads * p.headDim);
  let i = e % p.headDim;
  let half = p.headDim / 2u;
  var partner: f32;
  if (i < half) { partner = -x[e + half]; } else { partner = x[e - half]; }
  let at = r * p.headDim + i;
  out[e] = x[e] * angles[at] + partner * angles[p.rows * p.headDim + at];
}`,
};

/** The SwiGLU gate in place: gate = silu(gate) * up. */
export const SWIGLU: Program = {
  name: 'swiglu',
  code: /* wgsl */ `
struct P { size: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> gate: array<f32>;
@group(0) @binding(2) var<storage, read> up: array<f32>;
${LINEAR}
@compute @workgroup_size(${GROUP})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let e = linear(wg, groups) * ${GROUP}u + lid;
  if (e >= p.size) { return; }
  let g = gate[e];
  gate[e] = g * (1.0 / (1.0 + exp(-g))) * up[e];
}`,
};

const PAGE_PARAMS = 'layers: u32, layer: u32, kvHeads: u32, headDim: u32, pageSize: u32, maxPages: u32, table: u32';

/**
 * Rotates each token row's keys [rows, kv heads, head dim] as ROPE does (cos and sin in
 * `angles`) and writes them, with its values, at the row's position of its sequence's pages.
 */
export const ROPE_KV_WRITE: Program = {
  name: 'rope_kv_write',
  code: /* wgsl */ `
struct P { ${PAGE_PARAMS}, rows: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> angles: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> keys: array<f32>;
@group(0) @binding(5) var<storage, read_write> values: array<f32>;
@group(0) @binding(6) var<storage, read> info: array<u32>;
${LINEAR}
${PAGES}
@compute @workgroup_size(${GROUP})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let e = linear(wg, groups) * ${GROUP}u + lid;
  if (e >= p.rows * p.kvHeads * p.headDim) { return; }
  let r = e / (p.kvHeads * p.headDim);
  let h = (e / p.headDim) % p.kvHeads;
  let i = e % p.headDim;
  let half = p.headDim / 2u;
  var partner: f32;
  if (i < half) { partner = -k[e + half]; } else { partner = k[e - half]; }
  let angle = r * p.headDim + i;
  let at = slot(r, info[2u * r + 1u]) + h * p.pageSize * p.headDim + i;
  keys[at] = k[e] * angles[angle] + partner * angles[p.rows * p.headDim + angle];
  values[at] = v[e];
}`,
};

/**
 * Moves keys or values between a sequence's pages and a dense [kv heads, columns, head dim]
 * tensor, positions [0, count) of the sequence in the page table's row `sequence`: `toPages`
 * fills the pages from a cached prefix, else the pages fill the tensor (a finished sequence's cache).
 */
export function kvCopyProgram(toPages: boolean): Program {
  const [from, to] = toPages ? ['dense', 'pages'] : ['pages', 'dense'];
  return {
    name: toPages ? 'kv_fill' : 'kv_gather',
    code: /* wgsl */ `
struct P { ${PAGE_PARAMS}, sequence: u32, columns: u32, count: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, ${toPages ? 'read' : 'read_write'}> dense: array<f32>;
@group(0) @binding(2) var<storage, ${toPages ? 'read_write' : 'read'}> pages: array<f32>;
@group(0) @binding(3) var<storage, read> info: array<u32>;
${LINEAR}
${PAGES}
@compute @workgroup_size(${GROUP})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let e = linear(wg, groups) * ${GROUP}u + lid;
  if (e >= p.kvHeads * p.count * p.headDim) { return; }
  let h = e / (p.count * p.headDim);
  let t = (e / p.headDim) % p.count;
  let d = e % p.headDim;
  let paged = slotOf(p.sequence, t) + h * p.pageSize * p.headDim + d;
  let packed = (h * p.columns + t) * p.headDim + d;
  ${to}[${to === 'pages' ? 'paged' : 'packed'}] = ${from}[${from === 'pages' ? 'paged' : 'packed'}];
}`,
  };
}

/** Most query heads times head-dimension slices of 64 one attention workgroup holds (its private sums). */
export const ATTENTION_SLOTS = 16;

/**
 * Attention of each token row's queries over positions 0..its own of its sequence's pages (causal
 * by construction). One workgroup per (row, kv head) serves that kv head's group of query heads
 * (grouped-query attention: query head h reads kv head h / (heads / kv heads)), so each key and
 * value is read once for the whole group. It walks the positions 64 at a time: each invocation
 * scores one position for every head of the group, the tile's weights go through workgroup
 * memory with a running maximum per head (online softmax: what was summed is rescaled when the
 * maximum grows), and each invocation sums its head dimensions over the tile's positions in order.
 */
export const PAGED_ATTENTION: Program = {
  name: 'paged_attention',
  code: /* wgsl */ `
struct P { ${PAGE_PARAMS}, heads: u32, rows: u32, scale: f32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> keys: array<f32>;
@group(0) @binding(3) var<storage, read> values: array<f32>;
@group(0) @binding(4) var<storage, read> info: array<u32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
var<workgroup> query: array<f32, 1024>;
var<workgroup> scores: array<f32, ${ATTENTION_SLOTS * GROUP}>;
var<workgroup> starts: array<u32, ${GROUP}>;
var<workgroup> positions: u32;
${LINEAR}
${PAGES}
@compute @workgroup_size(${GROUP})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let g = linear(wg, groups);
  if (g >= p.rows * p.kvHeads) { return; }
  let r = g / p.kvHeads;
  let h = g % p.kvHeads;
  let group = p.heads / p.kvHeads;
  let slices = (p.headDim + ${GROUP - 1}u) / ${GROUP}u;
  // the group's query heads are neighbours in q and in out
  let qAt = (r * p.heads + h * group) * p.headDim;
  for (var e = lid; e < group * p.headDim; e += ${GROUP}u) { query[e] = q[qAt + e]; }
  if (lid == 0u) { positions = info[2u * r + 1u] + 1u; }
  let n = workgroupUniformLoad(&positions);
  var top: array<f32, ${ATTENTION_SLOTS}>;
  var total: array<f32, ${ATTENTION_SLOTS}>;
  var acc: array<f32, ${ATTENTION_SLOTS}>;
  for (var i = 0u; i < group; i++) { top[i] = -3.0e38; }
  for (var base = 0u; base < n; base += ${GROUP}u) {
    let span = min(${GROUP}u, n - base);
    if (lid < span) {
      let at = slot(r, base + lid) + h * p.pageSize * p.headDim;
      starts[lid] = at;
      var dots: array<f32, ${ATTENTION_SLOTS}>;
      for (var d = 0u; d < p.headDim; d++) {
        let k = keys[at + d];
        for (var i = 0u; i < group; i++) { dots[i] += query[i * p.headDim + d] * k; }
      }
      for (var i = 0u; i < group; i++) { scores[i * ${GROUP}u + lid] = dots[i] * p.scale; }
    }
    workgroupBarrier();
    for (var i = 0u; i < group; i++) {
      var tileTop = top[i];
      for (var j = 0u; j < span; j++) { tileTop = max(tileTop, scores[i * ${GROUP}u + j]); }
      let rescale = exp(top[i] - tileTop);
      total[i] *= rescale;
      for (var a = 0u; a < slices; a++) { acc[i * slices + a] *= rescale; }
      top[i] = tileTop;
    }
    workgroupBarrier();
    if (lid < span) {
      for (var i = 0u; i < group; i++) { scores[i * ${GROUP}u + lid] = exp(scores[i * ${GROUP}u + lid] - top[i]); }
    }
    workgroupBarrier();
    for (var j = 0u; j < span; j++) {
      for (var i = 0u; i < group; i++) { total[i] += scores[i * ${GROUP}u + j]; }
      for (var a = 0u; a < slices; a++) {
        let d = lid + a * ${GROUP}u;
        if (d < p.headDim) {
          let v = values[starts[j] + d];
          for (var i = 0u; i < group; i++) { acc[i * slices + a] += scores[i * ${GROUP}u + j] * v; }
        }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < group; i++) {
    for (var a = 0u; a < slices; a++) {
      let d = lid + a * ${GROUP}u;
      if (d < p.headDim) { out[qAt + i * p.headDim + d] = acc[i * slices + a] / total[i]; }
    }
  }
}`,
};

/**
 * The next token of each row of logits [rows, vocab] and its log-prob under softmax(logits / T)
 * over the whole vocabulary. plan[4r..] = (mode, T, u, -): mode 0 takes the first most likely
 * token (greedy, T 1), mode 1 the first token whose cumulative probability passes u (inverse-CDF
 * sampling with the sequence's own uniform draw), mode 2 nothing (the host samples that row from
 * its logits). out[2r] is the token (bits of a u32), out[2r + 1] its log-prob.
 */
export const SAMPLE: Program = {
  name: 'sample',
  code: /* wgsl */ `
struct P { vocab: u32, rows: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> plan: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
var<workgroup> bestValue: array<f32, ${GROUP}>;
var<workgroup> bestIndex: array<u32, ${GROUP}>;
var<workgroup> sums: array<f32, ${GROUP}>;
${LINEAR}
@compute @workgroup_size(${GROUP})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let r = linear(wg, groups);
  if (r >= p.rows) { return; }
  let at = r * p.vocab;
  let mode = u32(plan[4u * r]);
  let temperature = plan[4u * r + 1u];
  var value = -3.0e38;
  var index = 0u;
  for (var i = lid; i < p.vocab; i += ${GROUP}u) {
    if (logits[at + i] > value) { value = logits[at + i]; index = i; }
  }
  bestValue[lid] = value;
  bestIndex[lid] = index;
  workgroupBarrier();
  for (var stride = ${GROUP / 2}u; stride > 0u; stride >>= 1u) {
    if (lid < stride) {
      let other = bestValue[lid + stride];
      if (other > bestValue[lid] || (other == bestValue[lid] && bestIndex[lid + stride] < bestIndex[lid])) {
        bestValue[lid] = other;
        bestIndex[lid] = bestIndex[lid + stride];
      }
    }
    workgroupBarrier();
  }
  let top = bestValue[0];
  let chunk = (p.vocab + ${GROUP - 1}u) / ${GROUP}u;
  let first = lid * chunk;
  let end = min(p.vocab, first + chunk);
  var s = 0.0;
  for (var i = first; i < end; i++) { s += exp((logits[at + i] - top) / temperature); }
  sums[lid] = s;
  workgroupBarrier();
  if (lid != 0u) { return; }
  var total = 0.0;
  for (var c = 0u; c < ${GROUP}u; c++) { total += sums[c]; }
  var token = bestIndex[0];
  if (mode == 1u) {
    let threshold = plan[4u * r + 2u] * total;
    var seen = 0.0;
    var c = 0u;
    while (c < ${GROUP - 1}u && seen + sums[c] <= threshold) { seen += sums[c]; c++; }
    token = p.vocab - 1u;
    for (var i = c * chunk; i < min(p.vocab, (c + 1u) * chunk); i++) {
      seen += exp((logits[at + i] - top) / temperature);
      if (seen > threshold) { token = i; break; }
    }
  }
  out[2u * r] = bitcast<f32>(token);
  out[2u * r + 1u] = (logits[at + token] - top) / temperature - log(total);
}`,
};
