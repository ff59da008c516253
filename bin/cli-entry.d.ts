/** Whether `root`/dist holds a build of `root`/src that no source file is newer than. */
export function compiledIsFresh(root: string): boolean;
