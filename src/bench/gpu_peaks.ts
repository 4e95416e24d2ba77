/**
 * The peak TFLOPS of known GPUs, which `agentic bench` divides its achieved FLOP/s by (MFU). Two
 * figures per card, dense (no 2:4 sparsity): float32 on the CUDA cores (no tensor cores: tfjs's
 * WebGPU kernels are plain float32 shaders) and float16 on the tensor cores, the ceiling a
 * half-precision path could reach. From the vendors' datasheets:
 * - H100 and H200: NVIDIA H100 Tensor Core GPU datasheet and H200 product brief (SXM 67 / 989
 *   with sparsity halved from 1,979; PCIe 51 / 756; NVL 60 / 835).
 * - A100: NVIDIA A100 datasheet (19.5 / 312, SXM and PCIe alike).
 * - L40S, L40, L4, A10: their NVIDIA datasheets (91.6 / 362; 90.5 / 181; 30.3 / 121; 31.2 / 125).
 * - RTX 4090 and 3090: the Ada and Ampere GA102 whitepapers, tensor cores with float32
 *   accumulate, as training needs (82.6 / 165.2; 35.6 / 71).
 */

export interface GpuPeak {
  /** The card, as the table names it (or `--peak-tflops` for a figure given on the command line). */
  gpu: string;
  fp32_tflops: number;
  fp16_tflops: number | null;
}

/** Most specific first: an H200 NVL is not an H200 SXM, an L40S not an L40, an A100 not an A10. */
const KNOWN: ReadonlyArray<{ pattern: RegExp } & GpuPeak> = [
  { pattern: /\bH200 NVL\b/i, gpu: 'H200 NVL', fp32_tflops: 60, fp16_tflops: 835 },
  { pattern: /\bH200\b/i, gpu: 'H200 SXM', fp32_tflops: 67, fp16_tflops: 989 },
  { pattern: /\bH100 NVL\b/i, gpu: 'H100 NVL', fp32_tflops: 60, fp16_tflops: 835 },
  { pattern: /\bH100 PCIe\b/i, gpu: 'H100 PCIe', fp32_tflops: 51, fp16_tflops: 756 },
  { pattern: /\bH100\b/i, gpu: 'H100 SXM', fp32_tflops: 67, fp16_tflops: 989 },
  { pattern: /\bA100\b/i, gpu: 'A100', fp32_tflops: 19.5, fp16_tflops: 312 },
  { pattern: /\bL40S\b/i, gpu: 'L40S', fp32_tflops: 91.6, fp16_tflops: 362 },
  { pattern: /\bL40\b/i, gpu: 'L40', fp32_tflops: 90.5, fp16_tflops: 181 },
  { pattern: /\bL4\b/i, gpu: 'L4', fp32_tflops: 30.3, fp16_tflops: 121 },
  { pattern: /\bA10G?\b/i, gpu: 'A10', fp32_tflops: 31.2, fp16_tflops: 125 },
  { pattern: /\bRTX 4090\b/i, gpu: 'RTX 4090', fp32_tflops: 82.6, fp16_tflops: 165.2 },
  { pattern: /\bRTX 3090\b/i, gpu: 'RTX 3090', fp32_tflops: 35.6, fp16_tflops: 71 },
];

/** The peaks of the card an adapter names (its device string, then its description), or null. */
export function knownPeak(adapterName: string): GpuPeak | null {
  const found = KNOWN.find(({ pattern }) => pattern.test(adapterName));
  return found ? { gpu: found.gpu, fp32_tflops: found.fp32_tflops, fp16_tflops: found.fp16_tflops } : null;
}

/** `--peak-tflops 67` or `--peak-tflops 67,989`; the problem in words when it is neither. */
export function parsePeakTflops(text: string): GpuPeak | string {
  const parts = text.split(',').map((part) => part.trim());
  const numbers = parts.map(Number);
  if (parts.length > 2 || parts.some((part) => part === '') || numbers.some((n) => !Number.isFinite(n) || n <= 0)) {
    return `expected <fp32>[,<fp16>] in TFLOPS, positive numbers, got '${text}'`;
  }
  return { gpu: '--peak-tflops', fp32_tflops: numbers[0]!, fp16_tflops: numbers[1] ?? null };
}
