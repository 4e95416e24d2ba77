/**
 * Runs ./programs.ts's WGSL programs on the device tfjs's webgpu backend uses, beside tfjs and on
 * its tensors' buffers: a batch of dispatches is recorded into one command buffer, each with its
 * parameters in a 256-byte slot of one uniform buffer written once per batch, and submitted after
 * whatever tfjs has queued (so it reads what tfjs wrote, and tfjs's later work reads what it
 * wrote). Pipelines are compiled once per device; bind groups are kept while their buffers live,
 * so a steady decode step creates no GPU object at all.
 */
import { AgenticError } from '../../errors';
import { tf } from '../tf';
import type { Program } from './programs';

/** A parameter stored as f32 in a program's uniform struct (the rest are u32). */
export interface F32 {
  f32: number;
}

export const f32 = (value: number): F32 => ({ f32: value });

/** Bytes of one dispatch's parameters: WebGPU's uniform offset alignment is at most 256. */
const SLOT_BYTES = 256;
/** Workgroups per grid dimension that every device allows. */
const MAX_GROUPS = 65_535;

/** Workgroups for `count` independent groups, folded into a second dimension past the limit (programs read linear()). */
export function grid(count: number): [number, number] {
  const x = Math.min(Math.max(1, count), MAX_GROUPS);
  return [x, Math.ceil(Math.max(1, count) / x)];
}

/** Pipelines by program name, per device. */
const compiled = new WeakMap<GPUDevice, Map<string, GPUComputePipeline>>();

/** The tfjs webgpu backend's members this file reaches (some private in its types). */
interface TfjsWebGpu {
  device: GPUDevice;
  tensorMap: { get(dataId: object): { resource?: unknown } | undefined };
  uploadToGPU(dataId: object): void;
  commandEncoder: GPUCommandEncoder | null;
  endComputePassEncoder(): void;
  submitQueue(): void;
}

export class WgslRunner {
  readonly device: GPUDevice;
  private readonly backend: TfjsWebGpu;
  private readonly uniforms: GPUBuffer;
  private readonly uniformData: ArrayBuffer;
  private slot = 0;
  private encoder: GPUCommandEncoder | null = null;
  private pass: GPUComputePassEncoder | null = null;
  private readonly bindGroups = new Map<string, GPUBindGroup>();
  private readonly ids = new WeakMap<GPUBuffer, number>();
  private nextId = 1;
  private readonly owned = new Set<GPUBuffer>();
  private staging: GPUBuffer | null = null;
  private reads: Array<{ buffer: GPUBuffer; offset: number; bytes: number }> = [];

  /** `slots`: the most dispatches one batch records. */
  constructor(private readonly slots: number) {
    this.backend = tf.backend() as unknown as TfjsWebGpu;
    if (tf.getBackend() !== 'webgpu') throw new Error('WgslRunner needs the webgpu backend');
    this.device = this.backend.device;
    this.uniformData = new ArrayBuffer(slots * SLOT_BYTES);
    this.uniforms = this.create(slots * SLOT_BYTES, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
  }

  /** GPU buffers this runner holds now, and their bytes (tests check that a steady loop adds none). */
  get memory(): { buffers: number; bytes: number } {
    let bytes = 0;
    for (const buffer of this.owned) bytes += buffer.size;
    return { buffers: this.owned.size, bytes };
  }

  /** A storage buffer of at least `bytes`, owned by this runner until `destroy`. */
  storage(bytes: number): GPUBuffer {
    return this.create(Math.max(16, Math.ceil(bytes / 16) * 16), GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST);
  }

  destroy(buffer: GPUBuffer): void {
    if (!this.owned.delete(buffer)) return;
    for (const key of [...this.bindGroups.keys()]) if (key.includes(`:${this.idOf(buffer)}:`)) this.bindGroups.delete(key);
    buffer.destroy();
  }

  dispose(): void {
    for (const buffer of [...this.owned]) this.destroy(buffer);
    this.bindGroups.clear();
  }

  /** The GPU buffer holding a tfjs tensor's data (uploaded first if it still lies on the host). */
  tensorBuffer(t: tf.Tensor): GPUBuffer {
    let data = this.backend.tensorMap.get(t.dataId);
    if (!data?.resource) {
      this.backend.uploadToGPU(t.dataId);
      // the upload is queued in tfjs's encoder: submit it ahead of this batch
      this.flushTfjs();
      data = this.backend.tensorMap.get(t.dataId);
    }
    if (!(data?.resource instanceof GPUBuffer)) throw new Error('tensor data is not in a GPU buffer');
    return data.resource;
  }

  /**
   * Records a batch of dispatches (`record` calls run, write and read) and submits it after
   * whatever tfjs has queued, so it sees tfjs's results; resolves to what `read` asked for (one
   * copy, the batch's only wait on the GPU). A batch the device rejects is recorded once more with
   * new bind groups and pipelines, then fails with the device's message: bun-webgpu packs a
   * descriptor's nested arrays in buffers that only a raw pointer holds, so a garbage collection
   * at the wrong moment can hand Dawn a freed array ("nextInChain must be nullptr"), and the
   * object made from it, if kept, would fail every later batch.
   */
  async batch(record: () => void): Promise<ArrayBuffer | null> {
    for (let attempt = 1; ; attempt++) {
      this.flushTfjs();
      this.device.pushErrorScope('validation');
      this.encoder = this.device.createCommandEncoder();
      this.slot = 0;
      this.reads = [];
      record();
      this.submit();
      const error = await this.device.popErrorScope();
      if (!error) return this.readBack();
      this.bindGroups.clear();
      compiled.delete(this.device);
      if (attempt === 2) throw new AgenticError(`webgpu: ${error.message.split('\n')[0]}`);
    }
  }

  /** Records one dispatch of `program` with its storage `buffers` (in binding order) and parameters. */
  run(program: Program, buffers: readonly GPUBuffer[], params: ReadonlyArray<number | F32>, groups: readonly [number, number?]): void {
    if (this.slot >= this.slots) throw new Error(`a batch records at most ${this.slots} dispatches`);
    const view = new DataView(this.uniformData, this.slot * SLOT_BYTES, SLOT_BYTES);
    params.forEach((value, i) => {
      if (typeof value === 'number') view.setUint32(4 * i, value, true);
      else view.setFloat32(4 * i, value.f32, true);
    });
    const pipeline = this.pipeline(program);
    const key = `${program.name}/${this.slot}:${buffers.map((b) => this.idOf(b)).join(':')}:`;
    let bindGroup = this.bindGroups.get(key);
    if (!bindGroup) {
      // weights replaced by training leave groups of buffers that no longer serve
      if (this.bindGroups.size >= 8 * this.slots) this.bindGroups.clear();
      bindGroup = this.device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: this.uniforms, offset: this.slot * SLOT_BYTES, size: SLOT_BYTES } },
          ...buffers.map((buffer, i) => ({ binding: i + 1, resource: { buffer } })),
        ],
      });
      this.bindGroups.set(key, bindGroup);
    }
    this.slot++;
    this.pass ??= this.encoder!.beginComputePass();
    this.pass.setPipeline(pipeline);
    this.pass.setBindGroup(0, bindGroup);
    this.pass.dispatchWorkgroups(groups[0], groups[1] ?? 1);
  }

  /** Copies the first `bytes` of one buffer into another, submitted now (ahead of any later batch: the queue keeps the order). */
  copyNow(from: GPUBuffer, to: GPUBuffer, bytes: number): void {
    const encoder = this.device.createCommandEncoder();
    encoder.copyBufferToBuffer(from, 0, to, 0, bytes);
    this.device.queue.submit([encoder.finish()]);
  }

  /** Asks for `bytes` of `buffer` from `offset` once the batch has run; `batch` returns the reads one after the other. */
  read(buffer: GPUBuffer, offset: number, bytes: number): void {
    this.reads.push({ buffer, offset, bytes });
  }

  /** Writes host data into a buffer ahead of the batch's commands. */
  write(buffer: GPUBuffer, data: ArrayBufferView): void {
    this.device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
  }

  private submit(): void {
    this.endPass();
    const bytes = this.reads.reduce((total, r) => total + r.bytes, 0);
    const mapped = Math.ceil(bytes / 16) * 16;
    const stagingBytes = this.staging?.size ?? 0;
    if (bytes > 0 && stagingBytes < mapped) {
      if (this.staging) this.destroy(this.staging);
      this.staging = this.create(Math.max(mapped, 2 * stagingBytes), GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
    }
    let at = 0;
    for (const { buffer, offset, bytes: size } of this.reads) {
      this.encoder!.copyBufferToBuffer(buffer, offset, this.staging!, at, size);
      at += size;
    }
    this.device.queue.writeBuffer(this.uniforms, 0, this.uniformData, 0, this.slot * SLOT_BYTES);
    this.device.queue.submit([this.encoder!.finish()]);
    this.encoder = null;
  }

  private async readBack(): Promise<ArrayBuffer | null> {
    const bytes = this.reads.reduce((total, r) => total + r.bytes, 0);
    if (bytes === 0) return null;
    const mapped = Math.ceil(bytes / 16) * 16;
    const staging = this.staging!;
    await staging.mapAsync(GPUMapMode.READ, 0, mapped);
    const copy = staging.getMappedRange(0, mapped).slice(0, bytes);
    staging.unmap();
    return copy;
  }

  private flushTfjs(): void {
    if (!this.backend.commandEncoder) return;
    this.backend.endComputePassEncoder();
    this.backend.submitQueue();
  }

  private endPass(): void {
    this.pass?.end();
    this.pass = null;
  }

  private create(size: number, usage: number): GPUBuffer {
    const buffer = this.device.createBuffer({ size, usage });
    this.owned.add(buffer);
    return buffer;
  }

  private idOf(buffer: GPUBuffer): number {
    let id = this.ids.get(buffer);
    if (id === undefined) {
      id = this.nextId++;
      this.ids.set(buffer, id);
    }
    return id;
  }

  private pipeline(program: Program): GPUComputePipeline {
    let pipelines = compiled.get(this.device);
    if (!pipelines) compiled.set(this.device, (pipelines = new Map()));
    let pipeline = pipelines.get(program.name);
    if (!pipeline) {
      const module = this.device.createShaderModule({ code: program.code });
      pipeline = this.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
      pipelines.set(program.name, pipeline);
    }
    return pipeline;
  }
}
