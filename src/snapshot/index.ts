export { writeSnapshots, type SnapshotOptions, type SnapshotResult, type TableSnapshot } from './write-snapshots.ts';
export { checkSnapshotDir, snapshotStamp } from './snapshot-dir.ts';
export { readManifest, manifestName, type Manifest, type ManifestEntry, type ManifestColumn } from './manifest.ts';
export type { ParquetCompression } from './parquet-writer.ts';
export { checkTablesReadable, defaultSnapshotTables } from './table-list.ts';
export { checkSnapshotTarget, undoKilledSnapshotWrite } from './snapshot-target.ts';
export { tablesUnchangedByRun } from './changed-tables.ts';
export { latestFolder, latestPath } from './latest.ts';
