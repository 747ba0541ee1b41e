// The server's features beyond diagnostics and quick fixes. Each one registers its own LSP handlers.
import type { ServerFeature } from './context';
import { estimateCodeLens } from './estimate-codelens';
import { estimateHover } from './estimate-hover';
import { estimateRequest } from './estimate-request';
import { explainOom } from './explain';
import { leakSizes } from './leak-sizes';

export const FEATURES: ServerFeature[] = [estimateRequest, estimateCodeLens, estimateHover, leakSizes, explainOom];
