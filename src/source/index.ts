export type * from './types.ts';
export { checkBaseUrl, createSiteClient, isLoopbackHost, type SiteClientOptions } from './site-client.ts';
export { describeNetworkError, tlsError, unreachable } from './retry.ts';
export { FileCredentialStore, parseCredentials, registerCredentialSecrets } from './credentials-file.ts';
export { AccessTokenRefused, SiteHttpError, SiteResponseError, SiteUnavailableError } from './errors.ts';
export { RateLimiter, Semaphore } from './throttle.ts';
export { objectBodyRecords, parseListPage, parseJson, unseenRecords } from './pagination.ts';
