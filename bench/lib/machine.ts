import { cpus, totalmem } from 'node:os';

export interface Machine {
  readonly cores: number;
  readonly cpu: string;
  readonly memoryGb: number;
  readonly node: string;
  readonly platform: string;
}

export function machine(): Machine {
  const list = cpus();
  return {
    cores: list.length,
    cpu: list[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}
