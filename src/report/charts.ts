/**
 * Server-side PNGs of the report's charts: Chart.js on @napi-rs/canvas (prebuilt, no system libraries; DESIGN.md).
 * Static rendering: no animation, not responsive, a fixed devicePixelRatio, and a white background (a PNG is
 * transparent otherwise, which is unreadable in dark-mode viewers).
 */
import type { ChartConfiguration, Plugin } from 'chart.js';
import type { ChartJson } from './chart-configs.js';

/** The canvas binding and Chart.js, every part of it registered. */
interface Drawing {
  canvas: typeof import('@napi-rs/canvas');
  Chart: typeof import('chart.js').Chart;
}

let drawing: Promise<Drawing> | null = null;

/** Loads the drawing libraries with the first chart: only a report draws, and they cost about 100 ms of CPU to load. */
function loadDrawing(): Promise<Drawing> {
  drawing ??= Promise.all([import('@napi-rs/canvas'), import('chart.js')]).then(
    ([canvas, { Chart, registerables }]) => {
      Chart.register(...registerables);
      return { canvas, Chart };
    },
  );
  return drawing;
}

/** Paints the canvas white before anything else is drawn. */
export const whiteBackground: Plugin = {
  id: 'whiteBackground',
  beforeDraw(chart) {
    const { ctx, width, height } = chart;
    ctx.save();
    ctx.globalCompositeOperation = 'destination-over';
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, width, height);
    ctx.restore();
  },
};

/** Size of a report PNG in CSS pixels; devicePixelRatio 2 doubles the bitmap for sharp text. */
const PNG_SIZE = { width: 900, height: 450, devicePixelRatio: 2 };

/** Whether any font is available to draw labels with (a bare container may have none). */
export async function fontsAvailable(): Promise<boolean> {
  const { canvas } = await loadDrawing();
  return canvas.GlobalFonts.families.length > 0;
}

/** Renders one chart configuration to PNG bytes. */
export async function renderChartPng(json: ChartJson, size = PNG_SIZE): Promise<Buffer> {
  const {
    canvas: { createCanvas },
    Chart,
  } = await loadDrawing();
  const canvas = createCanvas(size.width * size.devicePixelRatio, size.height * size.devicePixelRatio);
  const config = structuredClone(json) as unknown as ChartConfiguration;
  config.options = { ...config.options, devicePixelRatio: size.devicePixelRatio, animation: false, responsive: false };
  config.plugins = [whiteBackground];
  // Chart.js sizes from the canvas element; @napi-rs/canvas exposes width/height, which Chart.js reads.
  const chart = new Chart(canvas as unknown as HTMLCanvasElement, config);
  try {
    chart.resize(size.width, size.height);
    chart.draw();
    return await canvas.encode('png');
  } finally {
    chart.destroy();
  }
}
