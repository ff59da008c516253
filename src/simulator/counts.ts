/**
 * Requests served, keyed `METHOD template` (e.g. `GET /api/applications/{id}/tasks/`), `METHOD path` and `METHOD
 * path?query` (one page of a list: what a test checks was not fetched twice).
 */
export interface RequestCounts {
  readonly total: number;
  readonly byTemplate: Readonly<Record<string, number>>;
  readonly byPath: Readonly<Record<string, number>>;
  readonly byRequest: Readonly<Record<string, number>>;
  readonly byStatus: Readonly<Record<string, number>>;
}

export class RequestCounter {
  private total = 0;
  private byTemplate = new Map<string, number>();
  private byPath = new Map<string, number>();
  private byRequest = new Map<string, number>();
  private byStatus = new Map<string, number>();

  record(method: string, template: string, path: string, search = ''): void {
    this.total++;
    bump(this.byTemplate, `${method} ${template}`);
    bump(this.byPath, `${method} ${path}`);
    bump(this.byRequest, `${method} ${path}${search}`);
  }

  status(code: number | 'reset'): void {
    bump(this.byStatus, String(code));
  }

  snapshot(): RequestCounts {
    return {
      total: this.total,
      byTemplate: Object.fromEntries(this.byTemplate),
      byPath: Object.fromEntries(this.byPath),
      byRequest: Object.fromEntries(this.byRequest),
      byStatus: Object.fromEntries(this.byStatus),
    };
  }

  reset(): void {
    this.total = 0;
    this.byTemplate = new Map();
    this.byPath = new Map();
    this.byRequest = new Map();
    this.byStatus = new Map();
  }
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}
