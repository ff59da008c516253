import type { FetchedPage, PaginateOptions, PaginationInfo, QueryParams, SiteClient } from '../source/types.ts';
import { StoppedError } from '../util/errors.ts';

/**
 * The client of a sync that can be told to stop: once `signal` is aborted, no new request starts (each stream then
 * fails with a StoppedError and its already-fetched work is committed or discarded as usual). The site client, given
 * the same signal, gives up the requests that wait for a slot or a backoff; requests already in flight, a token
 * refresh among them, are left to finish: abandoning a refresh would lose the rotated pair.
 */
export function stoppableClient(client: SiteClient, signal: AbortSignal): SiteClient {
  const check = (): void => {
    if (signal.aborted) throw new StoppedError('stopped before it finished: the run is stopping');
  };
  return {
    baseUrl: client.baseUrl,
    stats: client.stats,
    getJson(path: string, query?: QueryParams) {
      check();
      return client.getJson(path, query);
    },
    async *paginate(path: string, options?: PaginateOptions): AsyncGenerator<FetchedPage, PaginationInfo> {
      check();
      const pages = client.paginate(path, options);
      let done = false;
      try {
        for (;;) {
          check();
          const step = await pages.next();
          if (step.done) {
            done = true;
            return step.value;
          }
          yield step.value;
        }
      } finally {
        if (!done) await pages.return(undefined as unknown as PaginationInfo);
      }
    },
    close: () => client.close(),
  };
}
