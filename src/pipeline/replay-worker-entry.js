// A worker thread does not inherit the tsx loader the CLI registered: register it, then load the TypeScript body.
import { register } from 'tsx/esm/api';

register();
await import('./replay-worker.ts');
