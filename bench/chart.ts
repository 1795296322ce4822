// `entelechy bench --chart FILE.svg`: the rounds' ratios to C as a picture, drawn by Vega-Lite
// and rendered to SVG by Vega in Node (no browser; without the optional `canvas` package Vega
// estimates text widths, which is fine for labels this short).
//
// One panel per size (and a second row of panels against Halide when it ran); in each, per pipeline,
// a point per worker count at the median ratio and a whisker from the lowest round to the highest; a
// dashed line marks parity. The scale is
// logarithmic: ratios are, and under load one round can be 30 times another.

import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { plural, runsAt, type RoundsReport, type Spread } from './rounds.js';

export function chartSpec(report: RoundsReport): TopLevelSpec {
  const against = (reference: string, ratio: (s: RoundsReport['summary'][number]) => Spread | undefined) =>
    report.summary
      .filter((s) => ratio(s))
      .map((s) => ({
        pipeline: s.pipeline,
        size: `${s.size} x ${s.size}`,
        workers: `${s.workers} worker${s.workers > 1 ? 's' : ''}`,
        min: round(ratio(s)!.min),
        median: round(ratio(s)!.median),
        max: round(ratio(s)!.max),
        reference,
      }));
  const values = against('C', (s) => s.vs_c);
  const halide = against('Halide', (s) => s.vs_halide);
  if (values.length === 0) throw new Error('the chart draws the ratios to the C reference, and this run has none');
  const x = { field: 'pipeline', type: 'nominal', title: null, sort: report.pipelines, axis: { labelAngle: 0 } } as const;
  const xOffset = { field: 'workers', type: 'nominal', sort: report.workers.map((w) => `${w} worker${w > 1 ? 's' : ''}`) } as const;
  const color = { field: 'workers', type: 'nominal', title: null, sort: xOffset.sort } as const;
  const { start, end } = report.load;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `Engine throughput against the C reference${halide.length ? ' and Halide' : ''}, same round`,
      subtitle: [
        `median of ${plural(report.rounds, 'round')} (whiskers: lowest and highest round), ${report.sizes.map((s) => `${runsAt(report.runs, s)} runs at ${s}`).join(', ')} per figure`,
        `${report.date.slice(0, 16).replace('T', ' ')} UTC, load average ${start[0]} at the start, ${end[0]} at the end (${report.machine.split(',')[0]})`,
      ],
    },
    data: { values: [...values, ...halide] },
    facet: {
      column: { field: 'size', type: 'ordinal', title: null, sort: report.sizes.map((s) => `${s} x ${s}`) },
      ...(halide.length ? { row: { field: 'reference', type: 'nominal', title: null, sort: ['C', 'Halide'] } } : {}),
    },
    spec: {
      width: Math.max(120, 34 * report.pipelines.length * report.workers.length),
      height: 220,
      layer: [
        { mark: { type: 'rule', strokeDash: [4, 4], color: '#888' }, encoding: { y: { datum: 1 } } },
        {
          mark: { type: 'rule', strokeWidth: 2 },
          encoding: { x, xOffset, color, y: { field: 'min', type: 'quantitative', title: halide.length ? 'engine / reference (log scale)' : 'engine / C (log scale)', scale: { type: 'log' } }, y2: { field: 'max' } },
        },
        {
          mark: { type: 'point', filled: true, size: 70 },
          encoding: {
            x, xOffset, color,
            y: { field: 'median', type: 'quantitative' },
            tooltip: [{ field: 'pipeline' }, { field: 'size' }, { field: 'workers' }, { field: 'median' }, { field: 'min' }, { field: 'max' }, { field: 'reference' }],
          },
        },
      ],
    },
  } as TopLevelSpec;
}

const round = (v: number) => Math.round(v * 1000) / 1000;

export async function chartSvg(report: RoundsReport): Promise<string> {
  const view = new vega.View(vega.parse(compile(chartSpec(report)).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
