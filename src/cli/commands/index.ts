import type { Command } from 'commander';
import { registerDemo } from './demo.ts';
import { registerDoctor } from './doctor.ts';
import { registerReplay } from './replay.ts';
import { registerSim } from './sim.ts';
import { registerStatus } from './status.ts';
import { registerSync } from './sync.ts';
import { registerModels } from './models.ts';
import { registerSnapshot } from './snapshot.ts';
import { registerDocs } from './docs.ts';
import { registerConfig } from './config.ts';
import { registerReset } from './reset.ts';
import { registerReport } from './report.ts';
import { registerQuery } from './query.ts';
import { registerPurge } from './purge.ts';

/** Each command lives in its own file and registers itself on the program. */
export type RegisterCommand = (program: Command) => void;

export const commands: readonly RegisterCommand[] = [
  registerSync,
  registerReplay,
  registerDemo,
  registerStatus,
  registerQuery,
  registerDoctor,
  registerSim,
  registerModels,
  registerSnapshot,
  registerReport,
  registerDocs,
  registerConfig,
  registerReset,
  registerPurge,
];
