import * as fs from 'node:fs';
import { parsePython } from './server/src/engine/parser';
import { buildProgramModel } from './server/src/engine/program/index';
