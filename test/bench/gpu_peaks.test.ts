/** The datasheet peaks `agentic bench` computes MFU against, found by the adapter's name. */
import { expect, test } from 'bun:test';
import { knownPeak, parsePeakTflops } from '../../src/bench/gpu_peaks';

test("a card is found by the name its Vulkan driver gives (device, then the driver's description)", () => {
  expect(knownPeak('NVIDIA H200 NVIDIA: 565.57.1.0')).toEqual({ gpu: 'H200 SXM', fp32_tflops: 67, fp16_tflops: 989 });
  expect(knownPeak('NVIDIA H100 80GB HBM3 NVIDIA: 550.54')?.gpu).toBe('H100 SXM');
  expect(knownPeak('NVIDIA A100-SXM4-80GB')).toEqual({ gpu: 'A100', fp32_tflops: 19.5, fp16_tflops: 312 });
  expect(knownPeak('NVIDIA GeForce RTX 4090')?.fp32_tflops).toBe(82.6);
  expect(knownPeak('NVIDIA L4')?.gpu).toBe('L4');
});

test('the most specific name wins: NVL and PCIe variants, L40S over L40 over L4, A100 over A10', () => {
  expect(knownPeak('NVIDIA H200 NVL')?.gpu).toBe('H200 NVL');
  expect(knownPeak('NVIDIA H100 PCIe')?.gpu).toBe('H100 PCIe');
  expect(knownPeak('NVIDIA H100 NVL')?.gpu).toBe('H100 NVL');
  expect(knownPeak('NVIDIA L40S')?.gpu).toBe('L40S');
  expect(knownPeak('NVIDIA L40')?.gpu).toBe('L40');
  expect(knownPeak('NVIDIA A10G')?.gpu).toBe('A10');
  expect(knownPeak('NVIDIA A100 80GB PCIe')?.gpu).toBe('A100');
});

test('an unknown card, or a CPU rasterizer, has no peak', () => {
  expect(knownPeak('llvmpipe-llvm-15-0-6-256-bits OpenGL version OpenGL ES 3.2 Mesa 22.3.6')).toBeNull();
  expect(knownPeak('AMD Radeon RX 7900 XTX')).toBeNull();
  expect(knownPeak('')).toBeNull();
});

test('--peak-tflops takes float32, or float32 and float16; anything else is a problem in words', () => {
  expect(parsePeakTflops('67')).toEqual({ gpu: '--peak-tflops', fp32_tflops: 67, fp16_tflops: null });
  expect(parsePeakTflops('19.5, 312')).toEqual({ gpu: '--peak-tflops', fp32_tflops: 19.5, fp16_tflops: 312 });
  for (const bad of ['', 'fast', '67,', '0', '-1,2', '1,2,3']) expect(typeof parsePeakTflops(bad)).toBe('string');
});
