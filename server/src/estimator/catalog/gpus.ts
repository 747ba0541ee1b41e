// GPUs the fit check knows, with total memory as `nvidia-smi --query-gpu=memory.total` reports it (MiB x 2^20).
export interface GpuModel {
  name: string;
  /** Extra spellings users type: "4090", "A100-80GB", "h100 sxm". */
  aliases: string[];
  capacity: number;
}

const MIB = 1024 * 1024;

export const GPU_CATALOG: GpuModel[] = [
  { name: 'RTX 3060', aliases: ['3060', 'rtx 3060 12gb', 'geforce rtx 3060'], capacity: 12288 * MIB },
  { name: 'RTX 3080', aliases: ['3080', 'rtx 3080 10gb'], capacity: 10240 * MIB },
  { name: 'RTX 3090', aliases: ['3090', 'geforce rtx 3090'], capacity: 24576 * MIB },
  { name: 'RTX 4080', aliases: ['4080', 'rtx 4080 16gb'], capacity: 16376 * MIB },
  { name: 'RTX 4090', aliases: ['4090', 'geforce rtx 4090'], capacity: 24564 * MIB },
  { name: 'T4', aliases: ['tesla t4', 't4 16gb'], capacity: 15360 * MIB },
  { name: 'V100 16GB', aliases: ['v100', 'tesla v100', 'v100-sxm2-16gb'], capacity: 16384 * MIB },
  { name: 'V100 32GB', aliases: ['v100-32gb', 'v100-sxm2-32gb'], capacity: 32768 * MIB },
  { name: 'A10G', aliases: ['a10g 24gb', 'nvidia a10g'], capacity: 23028 * MIB },
  { name: 'L4', aliases: ['nvidia l4', 'l4 24gb'], capacity: 23034 * MIB },
  { name: 'RTX A5000', aliases: ['a5000', 'rtx a5000'], capacity: 24564 * MIB },
  { name: 'RTX A6000', aliases: ['a6000', 'rtx a6000'], capacity: 49140 * MIB },
  { name: 'L40S', aliases: ['l40s', 'nvidia l40s'], capacity: 46068 * MIB },
  { name: 'A100 40GB', aliases: ['a100', 'a100-40gb', 'a100 sxm4 40gb', 'a100-sxm4-40gb', 'a100-pcie-40gb'], capacity: 40960 * MIB },
  { name: 'A100 80GB', aliases: ['a100-80gb', 'a100 sxm4 80gb', 'a100-sxm4-80gb', 'a100 80g'], capacity: 81920 * MIB },
  { name: 'H100 80GB', aliases: ['h100', 'h100-80gb', 'h100 sxm', 'h100 sxm5', 'h100-sxm5-80gb', 'h100 pcie'], capacity: 81559 * MIB },
  { name: 'H200', aliases: ['h200 141gb', 'h200-141gb', 'nvidia h200'], capacity: 143771 * MIB },
];

function normalise(name: string): string {
  return name.toLowerCase().replace(/^nvidia\s+/, '').replace(/geforce\s+/, '').replace(/[\s_-]+/g, ' ').replace(/\s*gb\b/, 'gb').trim();
}

/** Finds a GPU by its name or a common spelling ("RTX 4090", "4090", "a100-80gb", "H100"). */
export function findGpu(name: string): GpuModel | undefined {
  const key = normalise(name);
  const exact = GPU_CATALOG.find((g) => normalise(g.name) === key || g.aliases.some((a) => normalise(a) === key));
  if (exact) return exact;
  // "A100 80" or "rtx4090": compare without spaces, then by prefix.
  const squashed = key.replace(/\s/g, '');
  return GPU_CATALOG.find((g) => [g.name, ...g.aliases].some((a) => normalise(a).replace(/\s/g, '') === squashed)) ??
    GPU_CATALOG.find((g) => normalise(g.name).replace(/\s/g, '').startsWith(squashed));
}
