// What nvidia-smi says about the local GPUs, as plain data: kept apart from the GPU setting (gpu-target.ts) so that
// the Node host, which runs nvidia-smi, needs nothing of the estimator.
const MIB = 1024 * 1024;

export interface LocalGpu {
  index: number;
  name: string;
  /** Bytes, as nvidia-smi reports them (MiB x 2^20). */
  total: number;
  free: number;
}

/** The rows of `nvidia-smi --query-gpu=index,name,memory.total,memory.free --format=csv,noheader,nounits`. */
export function parseNvidiaSmi(text: string): LocalGpu[] {
  const gpus: LocalGpu[] = [];
  for (const line of text.split(/\r?\n/)) {
    const fields = line.split(',').map((field) => field.trim());
    if (fields.length !== 4) continue;
    const [index, name, total, free] = fields as [string, string, string, string];
    if (!/^\d+$/.test(index) || !/^\d+$/.test(total) || !/^\d+$/.test(free) || name === '') continue;
    gpus.push({ index: Number(index), name, total: Number(total) * MIB, free: Number(free) * MIB });
  }
  return gpus;
}

export type LocalGpuQuery = { gpus: LocalGpu[] } | { error: string };
