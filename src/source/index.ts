export type * from './types.ts';
export { checkBaseUrl, HttpSiteClient, type HttpSiteClientOptions } from './site-client.ts';
export { describeNetworkError, tlsError, unreachable } from './retry.ts';
export { preflight, probeConnect, probeSiteWithoutCredentials } from './site-check.ts';
export { AccessTokenRefused, SiteHttpError, SiteResponseError, SiteUnavailableError } from './errors.ts';
export { RateLimiter, Semaphore } from './throttle.ts';
export { objectBodyRecords, parseListPage, parseJson, unseenRecords } from './pagination.ts';
