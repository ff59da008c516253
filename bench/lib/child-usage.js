// What a benchmark child reports of itself. The children are plain JavaScript over the compiled build (dist/), so
// their time, CPU and memory are those of the CLI users run, without the TypeScript loader.

/** CPU time this process has used so far, in ms, over all its threads. */
export function processCpuMs() {
  const u = process.resourceUsage();
  return (u.userCPUTime + u.systemCPUTime) / 1000;
}

/** Peak resident memory of this process so far, in MB (maxRSS is in kilobytes). */
export function maxRssMb() {
  return process.resourceUsage().maxRSS / 1024;
}
