// Byte counts as the editor, the CLI and the panel print them: binary units, as nvidia-smi and torch.cuda report.
const KIB = 1024;
const MIB = KIB * 1024;
const GIB = MIB * 1024;

export function formatBytes(bytes: number): string {
  if (bytes >= GIB) return `${(bytes / GIB).toFixed(bytes >= 100 * GIB ? 0 : 1)} GiB`;
  if (bytes >= MIB) return `${(bytes / MIB).toFixed(bytes >= 100 * MIB ? 0 : 1)} MiB`;
  if (bytes >= KIB) return `${Math.round(bytes / KIB)} KiB`;
  return `${Math.round(bytes)} B`;
}
