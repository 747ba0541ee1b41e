// The server's features beyond diagnostics and quick fixes. Each one registers its own LSP handlers.
import type { ServerFeature } from './context';

export const FEATURES: ServerFeature[] = [];
