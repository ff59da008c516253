import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/**
 * Charts are Vega-Lite specs compiled to Vega and rendered to an SVG string in Node when the report is built
 * (Vega's headless `toSVG`, which needs no canvas): the page carries the drawing, no script and no library, so it
 * opens from a file share with nothing to fetch. Data is always inline values; a spec naming a URL is refused, so a
 * chart can never make the build (or the page) read from the network.
 */

/**
 * Every chart is drawn twice, and the page's CSS shows the one that fits the screen (`html.ts`): a static SVG can only
 * be scaled as a whole, so one drawing wide enough for a desktop would shrink its text to a few pixels on a phone.
 * `width` is the whole drawing's (axes, labels and legend included); at the width where each variant is shown, its
 * text stays at least 10 px high on screen.
 */
export const chartSizes = {
  wide: { width: 680, labelFont: 12, titleFont: 13, labelLimit: 300 },
  narrow: { width: 340, labelFont: 11, titleFont: 12, labelLimit: 170 },
} as const;

export type ChartSize = keyof typeof chartSizes;

/** The look shared by every chart: the page's font and colours, no border, readable axis labels. */
function config(size: ChartSize): Record<string, unknown> {
  const s = chartSizes[size];
  return {
    font: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
    background: '#ffffff',
    view: { stroke: null },
    axis: {
      labelFontSize: s.labelFont,
      titleFontSize: s.titleFont,
      labelLimit: s.labelLimit,
      gridColor: '#e5e7eb',
      domainColor: '#9ca3af',
    },
    // One column on a phone: the legend starts where the bars do, and Vega's fit leaves it out of the width.
    legend: {
      labelFontSize: s.labelFont,
      titleFontSize: s.titleFont,
      orient: 'bottom',
      labelLimit: s.labelLimit,
      ...(size === 'narrow' ? { columns: 1 } : {}),
    },
    header: { labelFontSize: s.titleFont, titleFontSize: s.titleFont },
    mark: { color: '#2563eb' },
    range: { category: ['#2563eb', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#06b6d4', '#84cc16', '#ec4899'] },
  };
}

/** A chart as a Vega-Lite spec for each size: labels, titles and widths differ between a desktop and a phone. */
export type Chart = (size: ChartSize) => TopLevelSpec;

/** A single view fitted to the drawing's width, axes and labels included. */
const fitWidth = (size: ChartSize) => ({
  width: chartSizes[size].width,
  autosize: { type: 'fit-x', contains: 'padding' },
});

/** The width Vega gives a label when it has no canvas to measure text with (as in Node): 0.8 em per character. */
const vegaTextWidth = (text: string, fontSize: number): number => Math.floor(0.8 * text.length * fontSize);

/**
 * Vega-Lite's messages, to the console as by default, except the one saying a fitted chart keeps its height: the
 * height is meant to follow the number of bars.
 */
const compileLogger = {
  level(): number {
    return 2;
  },
  error(...args: unknown[]) {
    console.error(...args);
    return this;
  },
  warn(...args: unknown[]) {
    if (!args.some((a) => typeof a === 'string' && a.includes('Dropping "fit-y"'))) console.warn(...args);
    return this;
  },
  info() {
    return this;
  },
  debug() {
    return this;
  },
};

let chartCount = 0;

/** An SVG string of `spec` at one size, with ids made unique within the page (two charts may both define `clip1`). */
async function renderSvg(spec: TopLevelSpec, size: ChartSize): Promise<string> {
  if (JSON.stringify(spec).includes('"url"')) throw new Error('a report chart must carry its data inline, not a url');
  const withConfig = { ...spec, config: { ...config(size), ...(spec.config ?? {}) } } as TopLevelSpec;
  const view = new View(parse(compile(withConfig, { logger: compileLogger }).spec), { renderer: 'none' });
  try {
    const svg = await view.toSVG();
    const prefix = `c${++chartCount}-`;
    return svg
      .replace(/^<svg /, `<svg data-size="${size}" `)
      .replace(/\bid="([^"]+)"/g, `id="${prefix}$1"`)
      .replace(/url\(#([^)]+)\)/g, `url(#${prefix}$1)`);
  } finally {
    view.finalize();
  }
}

/** The chart drawn at every size (`data-size` on each SVG), for the page to show the one that fits. */
export async function renderChart(chart: Chart): Promise<string> {
  const svgs: string[] = [];
  for (const size of Object.keys(chartSizes) as ChartSize[]) svgs.push(await renderSvg(chart(size), size));
  return svgs.join('');
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
}

/**
 * A horizontal bar chart, labels in the order given, stacked (or grouped) by series when rows carry one. On a phone
 * the label axis has no title: its labels need the room, and the table below names them.
 */
export function barSpec(o: BarOptions): Chart {
  const labels = [...new Set(o.values.map((v) => v.label))];
  const hasSeries = o.values.some((v) => v.series !== undefined);
  const series = hasSeries ? [...new Set(o.values.map((v) => v.series ?? ''))] : [];
  const groups = [...new Set(o.values.map((v) => v.group).filter((g): g is string => g !== undefined))];
  const grouped = o.grouped === true && hasSeries;
  const data = { values: o.values.map((v) => ({ ...v })) };
  return (size) => {
    const narrow = size === 'narrow';
    const unit = {
      // Grouped: the step is each series' bar, so a label's group of bars stays compact.
      height: { step: grouped ? 9 : 20 },
      mark: { type: 'bar', tooltip: false },
      encoding: {
        y: {
          field: 'label',
          type: 'nominal',
          title: groups.length > 0 ? null : o.labelTitle,
          sort: labels,
          // Only the axis loses its title: the bars' descriptions for a screen reader keep naming the field.
          ...(narrow ? { axis: { title: null } } : {}),
        },
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
    if (groups.length === 0) return { description: o.description, data, ...fitWidth(size), ...unit } as TopLevelSpec;
    // Vega-Lite fits only single views: a panel gets the width its labels and the facet's title leave.
    const s = chartSizes[size];
    const labelWidth = Math.min(s.labelLimit, Math.max(...labels.map((l) => vegaTextWidth(l, s.labelFont))));
    const panelWidth = s.width - labelWidth - (narrow ? 20 : 50);
    return {
      description: o.description,
      data,
      facet: {
        row: {
          field: 'group',
          type: 'nominal',
          sort: groups,
          title: narrow ? null : o.labelTitle,
          // A group's name starts above its panel: longer than the panel, it would widen the drawing.
          header: {
            labelAngle: 0,
            labelOrient: 'top',
            labelAnchor: 'start',
            labelFontWeight: 600,
            labelLimit: panelWidth,
          },
        },
      },
      spec: { ...unit, width: panelWidth },
      resolve: { scale: { y: 'independent' } },
    } as TopLevelSpec;
  };
}

/** A vertical histogram of counts per value (bars at each whole number). */
export function histogramSpec(o: {
  description: string;
  values: readonly { value: number; count: number }[];
  valueTitle: string;
  countTitle: string;
}): Chart {
  return (size) =>
    ({
      description: o.description,
      ...fitWidth(size),
      height: 220,
      data: { values: o.values.map((v) => ({ ...v })) },
      mark: { type: 'bar', tooltip: false },
      encoding: {
        x: { field: 'value', type: 'ordinal', title: o.valueTitle, axis: { labelAngle: 0 } },
        y: { field: 'count', type: 'quantitative', title: o.countTitle, axis: { format: ',.0f', tickMinStep: 1 } },
      },
    }) as TopLevelSpec;
}
