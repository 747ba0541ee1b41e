// torchvision's detectors (Faster / Mask / Keypoint R-CNN, RetinaNet, FCOS, SSD, SSDlite) as layer nets per image, derived from their
// code: GeneralizedRCNNTransform resizes every image (the shorter side to min_size, the longer at most max_size)
// and pads the batch to a multiple of 32; the backbone runs at that size; the FPN makes 256-channel maps per level;
// the heads score anchors at every location of every level (RPN, RetinaNet) and pool a fixed number of regions
// (RoI heads: 512 sampled proposals an image in training, 1000 in evaluation). What depends on the data or the
// weights (how many proposals match a box, how many detections pass the score threshold) is taken at the bound the
// code sets and said in the estimate's assumptions. SSD and SSDlite resize every image to a fixed square instead
// (see ssdNet).
import { frozenPrefixCut, NetBuilder, withFrozenPrefix, type BranchPoint } from '../layers';
import { MOBILENET_V3_LARGE, mobilenetV3Features, reducedTail, resnetStages } from './vision';
import type { LayerNetSpec } from '../types';

type Backbone = 'resnet50' | 'mobilenet_v3_large' | 'vgg16';
/**
 * `fcos`: RetinaNet's dense heads with one anchor a location, a centerness branch, GroupNorm in the head. `ssd`:
 * one 3x3 convolution per feature map for the class scores and one for the boxes; `ssdlite`: a depthwise 3x3
 * convolution, BatchNorm and ReLU6, then a 1x1 convolution, for each.
 */
type Head = 'faster-rcnn' | 'mask-rcnn' | 'keypoint-rcnn' | 'retinanet' | 'fcos' | 'ssd' | 'ssdlite';

export interface DetectionModel {
  names: string[];
  /** torchvision's figure: COCO's 91 classes (keypoint R-CNN: 2), pretrained backbone. */
  publishedParameters: number;
  backbone: Backbone;
  head: Head;
  /** GeneralizedRCNNTransform's min_size and max_size (the builders' defaults). */
  minSize: number;
  maxSize: number;
  /** Anchors per location of each feature map (SSD300: the most of any map, see SSD_ASPECT_RATIOS). */
  anchorsPerLocation: number;
  /** num_classes when the script gives none. */
  defaultClasses: number;
  /**
   * The _v2 builders: BatchNorm2d in the backbone even over pretrained weights; for the R-CNNs BatchNorm in the FPN,
   * an RPN head of two convs, a   * box head of four conv-BN-ReLU blocks before one linear, a mask head with BatchNorm.
   */
  v2?: boolean;
  /**
   * SSD's transform: every image resized to this square whatever its size (fixed_size, size_divisible=1), so what
   * the network keeps does not follow the images' size.
   */
  fixedSize?: number;
}

export const DETECTION_CATALOG: DetectionModel[] = [
  { names: ['fasterrcnn_resnet50_fpn'], publishedParameters: 41_755_286, backbone: 'resnet50', head: 'faster-rcnn', minSize: 800, maxSize: 1333, anchorsPerLocation: 3, defaultClasses: 91 },
  { names: ['maskrcnn_resnet50_fpn'], publishedParameters: 44_401_393, backbone: 'resnet50', head: 'mask-rcnn', minSize: 800, maxSize: 1333, anchorsPerLocation: 3, defaultClasses: 91 },
  { names: ['keypointrcnn_resnet50_fpn'], publishedParameters: 59_137_258, backbone: 'resnet50', head: 'keypoint-rcnn', minSize: 800, maxSize: 1333, anchorsPerLocation: 3, defaultClasses: 2 },
  { names: ['fasterrcnn_resnet50_fpn_v2'], publishedParameters: 43_712_278, backbone: 'resnet50', head: 'faster-rcnn', minSize: 800, maxSize: 1333, anchorsPerLocation: 3, defaultClasses: 91, v2: true },
  { names: ['maskrcnn_resnet50_fpn_v2'], publishedParameters: 46_359_409, backbone: 'resnet50', head: 'mask-rcnn', minSize: 800, maxSize: 1333, anchorsPerLocation: 3, defaultClasses: 91, v2: true },
  { names: ['retinanet_resnet50_fpn'], publishedParameters: 34_014_999, backbone: 'resnet50', head: 'retinanet', minSize: 800, maxSize: 1333, anchorsPerLocation: 9, defaultClasses: 91 },
  { names: ['retinanet_resnet50_fpn_v2'], publishedParameters: 38_198_935, backbone: 'resnet50', head: 'retinanet', minSize: 800, maxSize: 1333, anchorsPerLocation: 9, defaultClasses: 91, v2: true },
  { names: ['fcos_resnet50_fpn'], publishedParameters: 32_269_600, backbone: 'resnet50', head: 'fcos', minSize: 800, maxSize: 1333, anchorsPerLocation: 1, defaultClasses: 91 },
  { names: ['fasterrcnn_mobilenet_v3_large_fpn'], publishedParameters: 19_386_354, backbone: 'mobilenet_v3_large', head: 'faster-rcnn', minSize: 800, maxSize: 1333, anchorsPerLocation: 15, defaultClasses: 91 },
  { names: ['fasterrcnn_mobilenet_v3_large_320_fpn'], publishedParameters: 19_386_354, backbone: 'mobilenet_v3_large', head: 'faster-rcnn', minSize: 320, maxSize: 640, anchorsPerLocation: 15, defaultClasses: 91 },
  { names: ['ssd300_vgg16'], publishedParameters: 35_641_826, backbone: 'vgg16', head: 'ssd', minSize: 300, maxSize: 300, fixedSize: 300, anchorsPerLocation: 6, defaultClasses: 91 },
  { names: ['ssdlite320_mobilenet_v3_large'], publishedParameters: 3_440_060, backbone: 'mobilenet_v3_large', head: 'ssdlite', minSize: 320, maxSize: 320, fixedSize: 320, anchorsPerLocation: 6, defaultClasses: 91 },
];

/** The single-shot detectors (SSD, SSDlite): a fixed input size, no FPN, no proposals. */
export function isSingleShot(model: Pick<DetectionModel, 'head'>): boolean {
  return model.head === 'ssd' || model.head === 'ssdlite';
}

export function findDetectionModel(name: string): DetectionModel | undefined {
  return DETECTION_CATALOG.find((m) => m.names.includes(name));
}

/** What the RoI heads of a two-stage detector pool, per image (torchvision's defaults). */
const SAMPLED_PROPOSALS_TRAIN = 512;
const PROPOSALS_EVAL = 1000;
/** The proposal sampler's positive share (positive_fraction 0.25): the most regions a mask or keypoint head trains on. */
const POSITIVE_PROPOSALS_TRAIN = 128;
/**
 * With random weights the proposals are anchors scored at random: few overlap a box enough, and the positives are
 * about the ground-truth boxes themselves (the sampler always adds them). Measured: 11 positive regions an image
 * for 8 boxes (the mask head's share of the RoI heads' memory, probe_detection.py).
 */
const POSITIVE_PROPOSALS_RANDOM = 16;
/** box_detections_per_img: the most detections the mask / keypoint head sees in evaluation. */
const DETECTIONS_EVAL = 100;
/** box_score_thresh: a class score a detection needs. */
const SCORE_THRESHOLD = 0.05;
const FPN_CHANNELS = 256;
const KEYPOINTS = 17;

const conv2d = (inC: number, out: number, kernel: number, bias = true): number => inC * out * kernel * kernel + (bias ? out : 0);

/** The size GeneralizedRCNNTransform resizes an image of height x width to, and the batch's padded size. */
export function detectionInputSize(model: Pick<DetectionModel, 'minSize' | 'maxSize' | 'fixedSize'>, height: number, width: number): { height: number; width: number; paddedHeight: number; paddedWidth: number } {
  const fixed = model.fixedSize;
  if (fixed !== undefined) return { height: fixed, width: fixed, paddedHeight: fixed, paddedWidth: fixed };
  const scale = Math.min(model.minSize / Math.min(height, width), model.maxSize / Math.max(height, width));
  // interpolate(scale_factor=..., recompute_scale_factor=True): floor of each side times the scale.
  const h = Math.floor(height * scale + 1e-6);
  const w = Math.floor(width * scale + 1e-6);
  return { height: h, width: w, paddedHeight: Math.ceil(h / 32) * 32, paddedWidth: Math.ceil(w / 32) * 32 };
}

/**
 * Whether a detector makes detections for its mask or keypoint head in evaluation: pretrained weights do (up to
 * box_detections_per_img); random ones score every class about 1/K (RetinaNet: its prior, 0.01), under the
 * threshold unless there are few classes.
 */
export function detectsInEvaluation(model: DetectionModel, classes: number, pretrained: boolean): boolean {
  if (isSingleShot(model)) return false;
  return pretrained || (model.head !== 'retinanet' && model.head !== 'fcos' && 1 / classes >= SCORE_THRESHOLD * 0.8);
}

interface Level {
  h: number;
  w: number;
}

/** Output size of a 3x3 / stride-2 / padding-1 convolution and of max_pool2d(kernel 1, stride 2). */
const halved = (n: number): number => Math.floor((n - 1) / 2) + 1;

export interface DetectorOptions {
  classes: number;
  /** A pretrained backbone (weights_backbone given): FrozenBatchNorm2d, whose weights are buffers. */
  frozenNorms: boolean;
  /** See detectsInEvaluation. */
  detections: boolean;
  /** Pretrained weights (`weights=` given): the RPN's proposals overlap the boxes, up to the sampler's positives. */
  pretrained: boolean;
  /** Pixels of one image as the script gives it (masks are pasted back at that size); absent: the padded size. */
  imageElements?: number;
  /**
   * trainable_backbone_layers: how many of the backbone's stages from the top train; the rest are frozen and, fed
   * by the images, record nothing. The builders take 3 over pretrained weights (a backbone's default ImageNet
   * weights included); absent: every stage trains.
   */
  trainableLayers?: number;
  /**
   * ImageNet backbone weights loaded (weights_backbone given, no `weights`): SSDlite's MobileNetV3 then keeps its
   * full-width last stage; without them (and under COCO weights) torchvision builds it with reduced_tail.
   */
  imagenetBackbone?: boolean;
}

/**
 * The first backbone part that trains (LayerNetSpec.parts' names): ResNet's `layers_to_train` are the last
 * `trainable` of conv1, layer1..layer4; MobileNetV3's `_mobilenet_extractor` freezes `features[:i]` up to the start
 * of a stage (the stem, each stride-2 block, the last conv). Undefined: the whole backbone is frozen.
 */
function firstTrainablePart(model: DetectionModel, trainable: number): string | undefined {
  if (model.backbone === 'resnet50') return ['layer4', 'layer3', 'layer2', 'layer1', 'conv1'][trainable - 1];
  // SSD's _vgg_extractor freezes `features[:i]` to a max-pool (i = 0, 4, 9, 16, 23), or all of them (conv5_3 too).
  if (model.backbone === 'vgg16') return trainable > 0 ? `features.${VGG_STAGE_STARTS[VGG_STAGE_STARTS.length - trainable]}` : 'fc6';
  const starts = [0, ...MOBILENET_V3_LARGE.map((block, i) => (block[6] > 1 ? i + 1 : -1)).filter((i) => i >= 0), MOBILENET_V3_LARGE.length + 1];
  return trainable > 0 ? `features.${starts[Math.max(0, starts.length - trainable)]}` : undefined;
}

/**
 * The detector per image at the padded input size. Saved elements are training's (sampled proposals, the loss over
 * every anchor); the live elements of a no-grad forward are evaluation's (1000 proposals, the class scores of every
 * anchor at once). Parameters as torchvision counts them.
 */
export function detectorNet(model: DetectionModel, paddedHeight: number, paddedWidth: number, options: DetectorOptions): LayerNetSpec {
  if (isSingleShot(model)) return ssdNet(model, options);
  const K = options.classes;
  const net = new NetBuilder({ kind: 'image', channels: 3, size: paddedHeight, width: paddedWidth });
  // A pretrained backbone's FrozenBatchNorm2d (the v2 builders keep BatchNorm2d).
  net.frozenNorms = options.frozenNorms && model.v2 !== true;
  // The backbone's returned feature maps (channels, size) and what is alive beside the FPN in a no-grad forward.
  const returned: BranchPoint[] = [];
  if (model.backbone === 'resnet50') {
    const stages: BranchPoint[] = [];
    resnetStages(net, [3, 4, 6, 3], true, 1, 1, false, false, stages);
    // RetinaNet's FPN reads C3-C5; the R-CNNs' C2-C5.
    returned.push(...(model.head === 'retinanet' || model.head === 'fcos' ? stages.slice(1) : stages));
  } else {
    // _mobilenet_extractor: the output of the last stride-2 block (160 channels) and of the final 1x1 conv (960),
    // both at stride 32.
    const stride32 = mobilenetV3Features(net, MOBILENET_V3_LARGE, false, MOBILENET_V3_LARGE.length - 3);
    if (stride32) returned.push(stride32);
    returned.push(net.mark());
  }
  const v2 = model.v2 === true;
  /** The dense detectors (RetinaNet, FCOS): C3-C5 and P6, P7; their v2 puts GroupNorm in the head, not BatchNorm in the FPN. */
  const dense = model.head === 'retinanet' || model.head === 'fcos';
  const fpnNorm = v2 && !dense;
  const bodyParameters = net.parameters - (options.frozenNorms && !v2 ? net.normParameters : 0);
  const bodyLive = net.liveNoGrad;
  let largest = net.largest;
  let bodySaved = net.saved;
  let fixedBytes = net.fixedBytes;
  let castParameters = net.castParameters;
  const shapeOf = (point: BranchPoint): { c: number; h: number; w: number } =>
    (point.shape.kind === 'image' ? point.shape : { c: 0, h: 1, w: 1 });
  const inputs = returned.map(shapeOf);
  const returnedElements = inputs.reduce((sum, s) => sum + s.c * s.h * s.w, 0);
  // A frozen prefix of the backbone records nothing: what it keeps starts with the first trainable part's input, and
  // the FPN's lateral convolutions keep the maps the frozen stages return.
  let frozenPrefix: LayerNetSpec['frozenPrefix'];
  if (options.trainableLayers !== undefined) {
    const parts = net.partsSoFar();
    const name = firstTrainablePart(model, options.trainableLayers);
    const from = name === undefined ? parts.length : parts.findIndex((part) => part.name === name);
    const part = parts[from];
    if (from > 0 && part?.parametersBefore !== 0) {
      const elements = (point: BranchPoint): number => { const s = shapeOf(point); return s.c * s.h * s.w; };
      const frozenMaps = returned.filter((point) => point.part < from && !(part && point.part === from - 1 && part.inputCounted && elements(point) === part.inputElements));
      const cut = frozenPrefixCut(part, { saved: net.saved, fixedBytes, castParameters, parameters: net.parameters, live: net.liveNoGrad });
      bodySaved = cut.saved + frozenMaps.reduce((sum, point) => sum + elements(point), 0);
      ({ fixedBytes, castParameters, largest } = cut);
      // Frozen BatchNorm weights are buffers, not parameters.
      frozenPrefix = {
        ...cut.frozenPrefix,
        parameters: cut.frozenPrefix.parameters - (options.frozenNorms && !v2 ? part?.normParametersBefore ?? net.normParameters : 0),
      };
    }
  }

  // FPN: a 1x1 lateral and a 3x3 output convolution per level; the top-down sum is what each output conv keeps,
  // and each output map is kept by the head convolution that reads it. v2: each convolution is followed by a
  // BatchNorm (no bias), which keeps the convolution's output.
  const norm = fpnNorm ? 2 * FPN_CHANNELS : 0;
  let parameters = bodyParameters + inputs.reduce((sum, s) => sum + conv2d(s.c, FPN_CHANNELS, 1, !fpnNorm) + conv2d(FPN_CHANNELS, FPN_CHANNELS, 3, !fpnNorm) + 2 * norm, 0);
  castParameters += inputs.reduce((sum, s) => sum + s.c * FPN_CHANNELS + 9 * FPN_CHANNELS ** 2, 0);
  const levels: Level[] = inputs.map((s) => ({ h: s.h, w: s.w }));
  let saved = bodySaved + levels.reduce((sum, l) => sum + (fpnNorm ? 4 : 2) * FPN_CHANNELS * l.h * l.w, 0);
  const top = levels[levels.length - 1]!;
  if (dense) {
    // LastLevelP6P7: P6 a strided 3x3 conv of P5 (RetinaNet v2: of C5, 2048 channels), P7 one of relu(P6) (not in
    // place: relu keeps its output).
    const p6 = { h: halved(top.h), w: halved(top.w) };
    const p7 = { h: halved(p6.h), w: halved(p6.w) };
    const p6Input = v2 ? inputs[inputs.length - 1]!.c : FPN_CHANNELS;
    parameters += conv2d(p6Input, FPN_CHANNELS, 3) + conv2d(FPN_CHANNELS, FPN_CHANNELS, 3);
    castParameters += 9 * FPN_CHANNELS * (p6Input + FPN_CHANNELS);
    saved += FPN_CHANNELS * (2 * p6.h * p6.w + p7.h * p7.w);
    levels.push(p6, p7);
  } else {
    // LastLevelMaxPool: max_pool2d(kernel 1, stride 2) of the top map, whose int64 indices are kept.
    const pool = { h: halved(top.h), w: halved(top.w) };
    fixedBytes += 8 * FPN_CHANNELS * pool.h * pool.w;
    saved += FPN_CHANNELS * pool.h * pool.w;
    levels.push(pool);
  }
  const locations = levels.reduce((sum, l) => sum + l.h * l.w, 0);
  const featureElements = FPN_CHANNELS * locations;
  const largestLevel = Math.max(...levels.map((l) => l.h * l.w));
  const A = model.anchorsPerLocation;
  const anchors = A * locations;
  // The FPN runs with the returned maps held, the coarser levels' outputs made, and at the finest level its lateral,
  // the upsampled coarser map, their sum and the output, plus the 3x3 convolution's workspace: measured on the H200
  // (probe_detection.py), six maps of the finest level's size beside the rest in Faster and Mask R-CNN's no-grad
  // forward (114M and 128M values an image at 800x1088 and 800x1216, as computed).
  const finest = FPN_CHANNELS * largestLevel;
  let live = Math.max(bodyLive, returnedElements + featureElements - finest + FPN_EVAL_FINEST_MAPS * finest);
  /** What the RoI heads keep: backward runs through them first and frees it before it reaches the FPN. */
  let roiSaved = 0;
  /** Saved elements autocast keeps in fp32 (see LayerNetSpec.autocastSavedBytesPerSample): the GroupNorm heads'. */
  let headFp32UnderAutocast = 0;

  if (dense) {
    // Two heads of four 3x3 convs (ReLU in place: each conv's output is the next one's kept input) and a predictor.
    // With GroupNorm (RetinaNet v2: convs without bias; FCOS: with) each conv's output is also kept by the norm.
    // FCOS predicts the classes, the box and its centerness at each location.
    const groupNorm = v2 || model.head === 'fcos';
    const predictors = model.head === 'fcos' ? conv2d(FPN_CHANNELS, K, 3) + conv2d(FPN_CHANNELS, 4, 3) + conv2d(FPN_CHANNELS, 1, 3)
      : conv2d(FPN_CHANNELS, A * K, 3) + conv2d(FPN_CHANNELS, A * 4, 3);
    parameters += 8 * (conv2d(FPN_CHANNELS, FPN_CHANNELS, 3, !v2) + (groupNorm ? 2 * FPN_CHANNELS : 0)) + predictors;
    castParameters += 8 * 9 * FPN_CHANNELS ** 2 + 9 * FPN_CHANNELS * A * (K + 4 + (model.head === 'fcos' ? 1 : 0));
    saved += 2 * 4 * (groupNorm ? 2 : 1) * FPN_CHANNELS * locations;
    // group_norm is on autocast's fp32 list: under autocast each head conv's half output is cast to an fp32 copy the
    // norm keeps, the norm's fp32 output is what ReLU keeps, and the next conv keeps a half copy of it: 10 bytes a
    // location and channel where fp32 keeps two 4-byte tensors, 3 half units over the 2 counted.
    if (groupNorm) headFp32UnderAutocast = 3 * 2 * 4 * FPN_CHANNELS * locations;
    // The focal loss over every anchor's class scores, image by image: the indexed scores and targets, the sigmoid,
    // 1 - p, 1 - targets, 1 - p_t, its power, the cross-entropy, their product and alpha_t are kept.
    saved += FOCAL_LOSS_TENSORS * anchors * K;
    // Evaluation: each level's scores reshaped, then concatenated for every level at once, beside the features.
    live = Math.max(live, featureElements + 2 * anchors * (K + 4) + A * K * largestLevel);
  } else {
    // RPN: one 3x3 conv (v2: two; ReLU in place, each output kept by what reads it) per level, then objectness and
    // box deltas.
    const rpnConvs = v2 ? 2 : 1;
    parameters += rpnConvs * conv2d(FPN_CHANNELS, FPN_CHANNELS, 3) + conv2d(FPN_CHANNELS, A, 1) + conv2d(FPN_CHANNELS, 4 * A, 1);
    castParameters += rpnConvs * 9 * FPN_CHANNELS ** 2 + FPN_CHANNELS * 5 * A;
    saved += rpnConvs * FPN_CHANNELS * locations;
    // Box head: RoIAlign to 7x7 (kept by fc6), two 1024-wide linears (F.relu keeps each output), class and box
    // predictors. v2: four 3x3 conv-BN-ReLU blocks on the 7x7 regions (each conv's input and output kept), then one
    // 1024-wide linear.
    const pooled = FPN_CHANNELS * 7 * 7;
    const boxConvs = v2 ? 4 : 0;
    parameters += boxConvs * (conv2d(FPN_CHANNELS, FPN_CHANNELS, 3, false) + 2 * FPN_CHANNELS) + conv2d(pooled, 1024, 1) +
      (v2 ? 0 : conv2d(1024, 1024, 1)) + conv2d(1024, K, 1) + conv2d(1024, 4 * K, 1);
    castParameters += boxConvs * 9 * FPN_CHANNELS ** 2 + pooled * 1024 + (v2 ? 0 : 1024 * 1024) + 1024 * 5 * K;
    // The linear's input, the ReLU outputs, the loss's log-softmax over the classes.
    const boxSaved = SAMPLED_PROPOSALS_TRAIN * ((1 + 2 * boxConvs) * pooled + (v2 ? 1 : 2) * 1024 + K);
    saved += boxSaved;
    roiSaved += boxSaved;
    // Evaluation: the pooled regions of every proposal and what the head makes of them, beside the features.
    live = Math.max(live, featureElements + PROPOSALS_EVAL * ((v2 ? 3 : 2) * pooled + 1024));
    const positives = options.pretrained ? POSITIVE_PROPOSALS_TRAIN : POSITIVE_PROPOSALS_RANDOM;
    if (model.head === 'mask-rcnn') {
      // Mask head: RoIAlign to 14x14, four 3x3 convs (ReLU in place; v2: each with a BatchNorm), a 2x transposed
      // conv to 28x28, per-class logits.
      const region = FPN_CHANNELS * 14 * 14;
      parameters += 4 * (conv2d(FPN_CHANNELS, FPN_CHANNELS, 3, !v2) + norm) + conv2d(FPN_CHANNELS, FPN_CHANNELS, 2) + conv2d(FPN_CHANNELS, K, 1);
      castParameters += 4 * 9 * FPN_CHANNELS ** 2 + 4 * FPN_CHANNELS ** 2 + FPN_CHANNELS * K;
      // Kept per positive region: the pooled input and four conv outputs (and the BatchNorms' outputs), the
      // upsampled map, the logits of every class and the mask loss's input and target.
      const perRegion = (v2 ? 9 : 5) * region + 4 * region + K * 28 * 28 + 2 * 28 * 28;
      saved += positives * perRegion;
      roiSaved += positives * perRegion;
      // Evaluation: the head on every detection, then each mask pasted into an fp32 map of the original image.
      if (options.detections) {
        live = Math.max(live, featureElements + DETECTIONS_EVAL * (3 * region + 4 * region + K * 28 * 28),
          DETECTIONS_EVAL * (K * 28 * 28 + 2 * (options.imageElements ?? paddedHeight * paddedWidth)));
      }
    } else if (model.head === 'keypoint-rcnn') {
      // Keypoint head: RoIAlign to 14x14, eight 3x3 convs to 512 channels (ReLU in place), a transposed conv to
      // 17 maps of 28x28, upsampled to 56x56; the loss is a cross-entropy over each keypoint's 56x56 positions.
      const region = FPN_CHANNELS * 14 * 14;
      const wide = 512 * 14 * 14;
      parameters += conv2d(FPN_CHANNELS, 512, 3) + 7 * conv2d(512, 512, 3) + conv2d(512, KEYPOINTS, 4);
      castParameters += 9 * FPN_CHANNELS * 512 + 7 * 9 * 512 * 512 + 16 * 512 * KEYPOINTS;
      const perRegion = region + 8 * wide + KEYPOINTS * 28 * 28 + 2 * KEYPOINTS * 56 * 56;
      saved += positives * perRegion;
      roiSaved += positives * perRegion;
      if (options.detections) live = Math.max(live, featureElements + DETECTIONS_EVAL * (region + 2 * wide + 2 * KEYPOINTS * 56 * 56));
    }
  }
  return {
    kind: 'layers',
    parameters,
    savedElementsPerSample: saved,
    ...(headFp32UnderAutocast > 0 ? { autocastSavedBytesPerSample: 2 * saved + 2 * headFp32UnderAutocast } : {}),
    fixedBytesPerSample: fixedBytes,
    largestElementsPerSample: largest,
    // The losses are counted in what forward keeps (their inputs are no model output a loop holds).
    outputElementsPerSample: 0,
    hasConvolution: true,
    inferenceLiveElementsPerSample: live,
    backwardPeakElementsPerSample: saved - roiSaved + BACKWARD_FINEST_MAPS * finest,
    blockSavedElements: [],
    blockInputElements: [],
    castParameters,
    input: { kind: 'image', channels: 3, size: paddedHeight, width: paddedWidth },
    scalesWithInput: true,
    ...(frozenPrefix ? { frozenPrefix } : {}),
  };
}

/** See the FPN's no-grad forward in detectorNet. */
const FPN_EVAL_FINEST_MAPS = 6;
/**
 * Backward through the finest FPN level holds the gradients of the RPN (or head) convolution's output and input,
 * of the level's output and of its top-down sum at once, beside what is kept: measured, 3.5 maps of that level an
 * image for ResNet-50 FPN at 800x1088 (MobileNetV3's levels are at stride 32, and its backward peaks in the body).
 */
const BACKWARD_FINEST_MAPS = 3.5;
/** fp32 tensors of every anchor's class scores that the focal loss keeps for backward (see detectorNet). */
const FOCAL_LOSS_TENSORS = 10;

/** The indices of the first four max-pools in torchvision's VGG16 `features`: SSD's stage starts (see firstTrainablePart). */
const VGG_STAGE_STARTS = [0, 4, 9, 16, 23];
/** DefaultBoxGenerator's aspect ratios per feature map ([2] or [2, 3]): 2 + 2 x their number anchors a location. */
const SSD_ASPECT_RATIOS = [1, 2, 2, 2, 1, 1];
const SSDLITE_ASPECT_RATIOS = [2, 2, 2, 2, 2, 2];
/** SSD300's extra blocks: a 1x1 convolution to `mid` channels, a 3x3 one to `out` (stride and padding), ReLU after each. */
const SSD_EXTRA: Array<{ mid: number; out: number; stride: number; padding: number }> = [
  { mid: 256, out: 512, stride: 2, padding: 1 }, { mid: 128, out: 256, stride: 2, padding: 1 },
  { mid: 128, out: 256, stride: 1, padding: 0 }, { mid: 128, out: 256, stride: 1, padding: 0 }];
/** SSDlite's extra blocks' widths: a 1x1 convolution to half, a depthwise 3x3 of stride 2, a 1x1 to all, each with BatchNorm and ReLU6. */
const SSDLITE_EXTRA = [512, 256, 256, 128];
/**
 * VGG16's no-grad forward peaks in conv1_2 at four maps of its output's size an image: its input, its output and
 * cuDNN's workspace (measured on the H200 at batches 16, 32 and 64: 88 MiB an image at 300x300, probe_ssd.py and
 * probe_frozen.py; NetBuilder counts the first two).
 */
const VGG_EVAL_CONV1_MAPS = 4;

/**
 * SSD300-VGG16 and SSDlite320-MobileNetV3-Large per image at their fixed input size, derived from torchvision's
 * code. SSD300: VGG16's features to conv4_3 (max-pool 3 rounding up: 38x38), whose output L2Norm rescales
 * (F.normalize, then a learnt scale per channel: both kept) as the first feature map; conv5, a 3x3 max-pool of
 * stride 1, the dilated fc6 and fc7 (19x19), four extra blocks (10, 5, 3, 1); one 3x3 convolution per map for the
 * class scores and one for the boxes. SSDlite: MobileNetV3 to the expansion of its last stride-2 block (20x20, 672
 * channels), the rest of it (10x10), four extra blocks (5, 3, 2, 1); separable heads whose depthwise convolution,
 * BatchNorm and ReLU6 keep three maps each. The loss: cross-entropy over every anchor's class scores (its fp32
 * log-softmax kept), hard negatives chosen by sorting every anchor's loss; evaluation: the scores of every anchor
 * and their softmax beside the feature maps, then top-k per class image by image (small).
 */
function ssdNet(model: DetectionModel, options: DetectorOptions): LayerNetSpec {
  const size = model.fixedSize ?? model.minSize;
  const K = options.classes;
  const net = new NetBuilder({ kind: 'image', channels: 3, size });
  const levels: BranchPoint[] = [];
  const vgg = model.backbone === 'vgg16';
  let conv1Elements = 0;
  if (vgg) {
    // 3x3 convolutions with bias, ReLU in place; each stage named by the index of the pool before it (what a
    // frozen prefix of `features` ends at: the pool, fed by a frozen stage, keeps nothing).
    const stages = [[64, 64], [128, 128], [256, 256, 256], [512, 512, 512], [512, 512, 512]];
    stages.forEach((widths, stage) => {
      if (stage > 0) net.maxPool(2, 2, 0, stage === 3);
      net.part(`features.${VGG_STAGE_STARTS[stage]}`);
      for (const width of widths) net.conv(width, 3, 1, 1, true, 1).relu();
      if (stage === 0) conv1Elements = net.elements;
      if (stage === 3) levels.push(net.mark());
    });
    // maxpool5 (3x3, stride 1, padding 1), then fc6: a 3x3 convolution of dilation 6 and padding 6, which keeps the
    // size (as a 3x3 of padding 1 does), and fc7.
    net.maxPool(3, 1, 1);
    net.part('fc6').conv(1024, 3, 1, 1, true, 1).relu().conv(1024, 1, 1, 1, true, 0).relu();
    levels.push(net.mark());
    SSD_EXTRA.forEach(({ mid, out, stride, padding }, i) => {
      net.part(`extra.${i + 1}`).conv(mid, 1, 1, 1, true, 0).relu().conv(out, 3, stride, 1, true, padding).relu();
      levels.push(net.mark());
    });
  } else {
    const blocks = options.imagenetBackbone ? MOBILENET_V3_LARGE : reducedTail(MOBILENET_V3_LARGE);
    const c4 = mobilenetV3Features(net, blocks, false, -1, blocks.length - 3);
    if (c4) levels.push(c4);
    levels.push(net.mark());
    SSDLITE_EXTRA.forEach((out, i) => {
      const mid = out / 2;
      net.part(`extra.${i}`).conv(mid, 1, 1, 1, false, 0).batchNorm().relu6().conv(mid, 3, 2, mid, false, 1).batchNorm().relu6()
        .conv(out, 1, 1, 1, false, 0).batchNorm().relu6();
      levels.push(net.mark());
    });
  }
  const bodyLive = net.liveNoGrad;
  const shapes = levels.map((point) => (point.shape.kind === 'image' ? point.shape : { c: 0, h: 1, w: 1 }));
  const levelElements = shapes.reduce((sum, l) => sum + l.c * l.h * l.w, 0);
  // Added after the body, so that a frozen prefix (withFrozenPrefix below) leaves them counted: the L2Norm, the
  // heads and the loss record whatever the backbone's stages do.
  if (vgg) {
    const first = shapes[0]!;
    // L2Norm's 512 scales; F.normalize keeps its input's norm (one channel, before and after the clamp), the scale
    // keeps the normalized map, and the heads the rescaled one.
    net.parameters += first.c;
    net.saved += 2 * first.c * first.h * first.w + 2 * first.h * first.w;
  }
  const ratios = vgg ? SSD_ASPECT_RATIOS : SSDLITE_ASPECT_RATIOS;
  let anchors = 0;
  shapes.forEach(({ c, h, w }, i) => {
    const A = 2 + 2 * ratios[i]!;
    anchors += A * h * w;
    const outputs = A * (K + 4);
    if (vgg) {
      net.parameters += conv2d(c, outputs, 3);
      net.castParameters += 9 * c * outputs;
    } else {
      // Per head: a depthwise 3x3 (no bias) with its BatchNorm, then a 1x1 with bias. Kept: the depthwise output
      // (by the norm), the norm's output (by ReLU6) and ReLU6's (by the 1x1), for each of the two heads.
      net.parameters += 2 * (9 * c + 2 * c) + c * outputs + outputs;
      net.normParameters += 2 * 2 * c;
      net.castParameters += 2 * 9 * c + c * outputs;
      net.saved += 2 * 3 * c * h * w;
    }
  });
  // The loss keeps the fp32 log-softmax of every anchor's class scores (fp32 under autocast too) and the int64 class
  // targets.
  net.fixedBytes += anchors * (4 * K + 8);
  const built = net.build(true);
  const { parts, ...spec } = built;
  const trainableFrom = options.trainableLayers === undefined ? -1
    // trainable_backbone_layers=0 freezes all of MobileNetV3: the extra blocks train from their first.
    : (parts ?? []).findIndex((part) => part.name === (firstTrainablePart(model, options.trainableLayers!) ?? 'extra.0'));
  const frozen = trainableFrom > 0 ? withFrozenPrefix(built, trainableFrom) : undefined;
  const { parts: _parts, ...chosen } = frozen ?? { ...spec, parts };
  void _parts;
  // No-grad: the body's worst point (VGG16's conv1_2 with cuDNN's workspace), or the feature maps beside every
  // anchor's class scores and boxes and their softmax.
  const live = Math.max(vgg ? Math.max(bodyLive, VGG_EVAL_CONV1_MAPS * conv1Elements) : bodyLive, levelElements + 2 * anchors * (K + 4));
  return {
    ...chosen,
    outputElementsPerSample: 0,
    hasConvolution: true,
    inferenceLiveElementsPerSample: live,
    blockSavedElements: [],
    blockInputElements: [],
    input: { kind: 'image', channels: 3, size },
    scalesWithInput: true,
  };
}

/** A detector built for the script's images: its net, how to rebuild it at another image height, and the sizes. */
export interface DetectorBuild {
  spec: LayerNetSpec;
  /** Images `height` high and as wide as the script's aspect ratio gives. */
  rebuildAt: (height: number) => LayerNetSpec;
  resized: { height: number; width: number; paddedHeight: number; paddedWidth: number };
}

/**
 * The detector for images of height x width as the script makes them (fp32, on the GPU): the step holds them and
 * the transform's padded batch (the first convolution keeps it).
 */
export function buildDetector(model: DetectionModel, height: number, width: number, options: DetectorOptions, least?: { height: number; width: number }): DetectorBuild {
  const at = (h: number, w: number, smallest?: { height: number; width: number }): LayerNetSpec => {
    const size = drawnInputSize(model, h, w, smallest);
    const spec = detectorNet(model, size.paddedHeight, size.paddedWidth, { ...options, imageElements: h * w });
    return { ...spec, stepInputBytesPerSample: 4 * 3 * (h * w + size.paddedHeight * size.paddedWidth) };
  };
  return {
    spec: at(height, width, least),
    rebuildAt: (h: number) => {
      const scale = h / height;
      const smallest = least ? { height: Math.max(1, Math.round(least.height * scale)), width: Math.max(1, Math.round(least.width * scale)) } : undefined;
      return at(h, Math.max(1, Math.round(width * scale)), smallest);
    },
    resized: drawnInputSize(model, height, width, least),
  };
}

/**
 * The resized and padded size of a batch of images whose height and width are drawn at random between `least` and
 * height x width: the transform scales each image on its own (short side to min_size, long side at most max_size),
 * and the batch pads to its tallest and its widest image. A batch of an upright and a landscape image at the
 * extreme aspect ratios is the largest; `height` / `width` are then the tallest and widest resized sides. Measured
 * (FCOS, batch 8 of 640x480 and 480x640 images, padded to 1088x1088): estimate +1.9% (results/cat7.json).
 */
export function drawnInputSize(model: Pick<DetectionModel, 'minSize' | 'maxSize' | 'fixedSize'>, height: number, width: number, least?: { height: number; width: number }):
  { height: number; width: number; paddedHeight: number; paddedWidth: number } {
  // SSD resizes every image to its fixed square, whatever the draw.
  if (!least || model.fixedSize !== undefined) return detectionInputSize(model, height, width);
  let [tallest, widest] = [0, 0];
  for (const h of [Math.max(1, least.height), height]) {
    for (const w of [Math.max(1, least.width), width]) {
      const size = detectionInputSize(model, h, w);
      tallest = Math.max(tallest, size.height);
      widest = Math.max(widest, size.width);
    }
  }
  return { height: tallest, width: widest, paddedHeight: Math.ceil(tallest / 32) * 32, paddedWidth: Math.ceil(widest / 32) * 32 };
}
