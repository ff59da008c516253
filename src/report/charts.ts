import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/**
 * Charts are Vega-Lite specs compiled to Vega and rendered to an SVG string in Node when the report is built
 * (Vega's headless `toSVG`, which needs no canvas): the page carries the drawing, no script and no library, so it
 * opens from a file share with nothing to fetch. Data is always inline values; a spec naming a URL is refused, so a
 * chart can never make the build (or the page) read from the network.
 */

/** The look shared by every chart: the page's font and colours, no border, readable axis labels. */
const config = {
  font: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  background: '#ffffff',
  view: { stroke: null },
  axis: { labelFontSize: 11, titleFontSize: 12, labelLimit: 340, gridColor: '#e5e7eb', domainColor: '#9ca3af' },
  legend: { labelFontSize: 11, titleFontSize: 12, orient: 'bottom', labelLimit: 220 },
  mark: { color: '#2563eb' },
  range: { category: ['#2563eb', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#06b6d4', '#84cc16', '#ec4899'] },
} as const;

let chartCount = 0;

/** An SVG string of `spec`, with ids made unique within the page (two charts may both define `clip1`). */
export async function renderChart(spec: TopLevelSpec): Promise<string> {
  if (JSON.stringify(spec).includes('"url"')) throw new Error('a report chart must carry its data inline, not a url');
  const vegaSpec = compile({ ...spec, config: { ...config, ...(spec.config ?? {}) } } as TopLevelSpec).spec;
  const view = new View(parse(vegaSpec), { renderer: 'none' });
  try {
    const svg = await view.toSVG();
    const prefix = `c${++chartCount}-`;
    return svg.replace(/\bid="([^"]+)"/g, `id="${prefix}$1"`).replace(/url\(#([^)]+)\)/g, `url(#${prefix}$1)`);
  } finally {
    view.finalize();
  }
}

export interface BarOptions {
  readonly description: string;
  /**
   * Rows of the chart: `label` on one axis, `value` on the other, optional `series` for colour (stacked or grouped)
   * and optional `group` for a panel of its own per group (a program's stages), each panel with its own labels.
   */
  readonly values: readonly { label: string; value: number; series?: string; group?: string }[];
  readonly valueTitle: string;
  readonly labelTitle: string;
  readonly seriesTitle?: string;
  /** d3-format of the value axis, e.g. `,.0f`. */
  readonly format?: string;
  /** Series side by side instead of stacked. */
  readonly grouped?: boolean;
  /** Pixels of the plot's width (default 520). */
  readonly width?: number;
}

/** A horizontal bar chart, labels in the order given, stacked (or grouped) by series when rows carry one. */
export function barSpec(o: BarOptions): TopLevelSpec {
  const labels = [...new Set(o.values.map((v) => v.label))];
  const hasSeries = o.values.some((v) => v.series !== undefined);
  const series = hasSeries ? [...new Set(o.values.map((v) => v.series ?? ''))] : [];
  const groups = [...new Set(o.values.map((v) => v.group).filter((g): g is string => g !== undefined))];
  const grouped = o.grouped === true && hasSeries;
  const unit = {
    width: o.width ?? 520,
    // Grouped: the step is each series' bar, so a label's group of bars stays compact.
    height: { step: grouped ? 9 : 20 },
    mark: { type: 'bar', tooltip: false },
    encoding: {
      y: { field: 'label', type: 'nominal', title: groups.length > 0 ? null : o.labelTitle, sort: labels },
      x: {
        field: 'value',
        type: 'quantitative',
        title: o.valueTitle,
        axis: { format: o.format ?? ',.0f' },
        ...(hasSeries && !grouped ? { stack: 'zero' } : {}),
      },
      ...(hasSeries
        ? {
            color: { field: 'series', type: 'nominal', title: o.seriesTitle ?? '', sort: series },
            ...(grouped ? { yOffset: { field: 'series', type: 'nominal', sort: series } } : {}),
          }
        : {}),
    },
  };
  const data = { values: o.values.map((v) => ({ ...v })) };
  if (groups.length === 0) return { description: o.description, data, ...unit } as TopLevelSpec;
  return {
    description: o.description,
    data,
    facet: {
      row: {
        field: 'group',
        type: 'nominal',
        sort: groups,
        title: o.labelTitle,
        header: { labelAngle: 0, labelOrient: 'top', labelAnchor: 'start', labelFontWeight: 600, labelFontSize: 12 },
      },
    },
    spec: unit,
    resolve: { scale: { y: 'independent' } },
  } as TopLevelSpec;
}

/** A vertical histogram of counts per value (bars at each whole number). */
export function histogramSpec(o: {
  description: string;
  values: readonly { value: number; count: number }[];
  valueTitle: string;
  countTitle: string;
}): TopLevelSpec {
  return {
    description: o.description,
    width: 520,
    height: 220,
    data: { values: o.values.map((v) => ({ ...v })) },
    mark: { type: 'bar', tooltip: false },
    encoding: {
      x: { field: 'value', type: 'ordinal', title: o.valueTitle, axis: { labelAngle: 0 } },
      y: { field: 'count', type: 'quantitative', title: o.countTitle, axis: { format: ',.0f', tickMinStep: 1 } },
    },
  } as TopLevelSpec;
}
