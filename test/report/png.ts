import { loadImage, createCanvas } from '@napi-rs/canvas';

/** Share of pixels that are not (near) white, and how many distinct coarse colours appear. */
export async function inkStats(png: Buffer): Promise<{ width: number; height: number; ink: number; colours: number }> {
  const image = await loadImage(png);
  const canvas = createCanvas(image.width, image.height);
  const ctx = canvas.getContext('2d');
  ctx.drawImage(image, 0, 0);
  const { data } = ctx.getImageData(0, 0, image.width, image.height);
  let ink = 0;
  const colours = new Set<number>();
  for (let k = 0; k < data.length; k += 4) {
    const [r, g, b, a] = [data[k], data[k + 1], data[k + 2], data[k + 3]];
    if (a > 0 && (r < 235 || g < 235 || b < 235)) ink++;
    colours.add(((r >> 5) << 6) | ((g >> 5) << 3) | (b >> 5));
  }
  return { width: image.width, height: image.height, ink: ink / (data.length / 4), colours: colours.size };
}

/** Whether a colour close to `hex` covers at least `minPixels` pixels (a chart's series colour). */
export async function hasColour(png: Buffer, hex: string, minPixels: number): Promise<boolean> {
  const image = await loadImage(png);
  const canvas = createCanvas(image.width, image.height);
  const ctx = canvas.getContext('2d');
  ctx.drawImage(image, 0, 0);
  const { data } = ctx.getImageData(0, 0, image.width, image.height);
  const [R, G, B] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  let count = 0;
  for (let k = 0; k < data.length; k += 4) {
    if (Math.abs(data[k] - R) < 12 && Math.abs(data[k + 1] - G) < 12 && Math.abs(data[k + 2] - B) < 12) count++;
  }
  return count >= minPixels;
}
