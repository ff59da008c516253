import { isJsonObject } from '../util/json.ts';
import type { ExtractContext, StreamState } from './types.ts';

export async function readStreamState(
  ctx: Pick<ExtractContext, 'warehouse' | 'mutex'>,
  stream: string,
): Promise<StreamState> {
  const value = await ctx.mutex.run(() => ctx.warehouse.readState(stream));
  return isJsonObject(value) ? (value as StreamState) : {};
}
