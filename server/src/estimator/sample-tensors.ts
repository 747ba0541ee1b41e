// Inputs of library models whose sizes are not a square image or a token sequence: a waveform (Wav2Vec2 reads raw
// samples) and images of any height and width (torchvision's detectors resize them themselves). Read from the
// tensors the script makes: one sample in a Dataset's `__getitem__`, or a batch made in the step's loop.
import type { ProgramModel } from '../engine/program/interpreter';
import { isIntegerTensor, tensorShape } from '../engine/program/values';
import type { How } from '../engine/program/values';
import type { Located } from './types';

/** The shortest waveform read as one: 25 ms at 16 kHz (a shorter 1-D draw is a few numbers, not audio). */
const MIN_WAVEFORM = 400;

/**
 * The samples of one waveform: a 1-D float tensor a `__getitem__` makes (`torch.randn(NUM_SAMPLES)`), or the
 * second size of a (batch, samples) float tensor made elsewhere in the script.
 */
export function waveformSamples(program: ProgramModel): Located<number> | undefined {
  for (const { value: call, inFunction } of program.tensorCalls) {
    if (isIntegerTensor(call)) continue;
    const shape = tensorShape(call);
    if (!shape) continue;
    const { dims } = shape;
    const one = inFunction === '__getitem__' && dims.length === 1 ? 0 : dims.length === 2 && inFunction !== '__getitem__' ? 1 : -1;
    if (one < 0 || dims[one]! < MIN_WAVEFORM) continue;
    const origin = shape.dimOrigins?.[one] ?? { line: shape.line, how: shape.how };
    return { value: dims[one]!, line: origin.line, how: origin.how };
  }
  return undefined;
}

export interface ImageExtent {
  height: number;
  width: number;
  line: number;
  how: How;
  /** Sizes drawn at random per image: the smallest height and width (height and width are the largest). */
  least?: { height: number; width: number };
}

/**
 * The height and width of the images the step receives: the last two sizes of a float (C, H, W) tensor (one image,
 * as a `__getitem__` or a list of images makes it), or of a (B, C, H, W) batch, with 1, 3 or 4 channels.
 */
export function imageExtent(program: ProgramModel): ImageExtent | undefined {
  for (const { value: call, inFunction } of program.tensorCalls) {
    if (isIntegerTensor(call)) continue;
    const shape = tensorShape(call);
    if (!shape) continue;
    const { dims } = shape;
    const channelsAt = dims.length === 3 ? 0 : dims.length === 4 && inFunction !== '__getitem__' ? 1 : -1;
    if (channelsAt < 0 || ![1, 3, 4].includes(dims[channelsAt]!) || dims[channelsAt + 1]! < 8 || dims[channelsAt + 2]! < 8) continue;
    const [height, width] = [dims[channelsAt + 1]!, dims[channelsAt + 2]!];
    const least = shape.least ? { height: shape.least[channelsAt + 1] ?? height, width: shape.least[channelsAt + 2] ?? width } : undefined;
    return { height, width, line: shape.line, how: shape.how, ...(least && (least.height < height || least.width < width) ? { least } : {}) };
  }
  return undefined;
}
