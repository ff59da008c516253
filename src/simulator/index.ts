/** The simulated site: deterministic data, the API over real HTTP, and test controls. See docs/simulator.md. */
export { startSimulator, type SimulatorHandle } from './server.ts';
export type { SimulatorControl } from './control.ts';
export { collectionNames } from './control.ts';
export type { ChangeRequest, ChangeResult } from './changes.ts';
export type { RequestCounts } from './counts.ts';
export { generateDataset, type GenerateOptions } from './generate.ts';
export { Dataset, type SimUser, type AppChildren } from './dataset.ts';
export { scales, isScaleName, type ScaleName, type ScaleSpec } from './scales.ts';
export {
  ALL_PERMISSIONS,
  type SimulatorOptions,
  type FaultOptions,
  type FaultKind,
  type LatencyOptions,
  type ListStyle,
  type Features,
} from './options.ts';
export { answerShapes, questionLabel, servedTask, type AnswerShape } from './task-answers.ts';
export {
  streamServing,
  servedRecords,
  recordStreamNames,
  routeTemplate,
  type ServedRecord,
  type StreamServing,
} from './stream-serving.ts';
export type { ExtraListRows } from './options.ts';
