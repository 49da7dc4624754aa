import { afterAll, describe, expect, it } from 'vitest';
import { setup } from '../test/helpers';

// generatedImage({ image_url, output_hint? }) in a real cell (worker process or in-process isolate).
const env = setup();
afterAll(() => env.runtime.shutdown());

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
const REMOTE = 'Tool call failed: remote image URLs are not supported in tool outputs. Pass a base64 data URI instead';

describe('generatedImage()', () => {
  it('appends the image (default detail high, or its own), then the output hint as a text item, and returns undefined', async () => {
    const observation = await env.run(`
      text('before');
      const returned = generatedImage({ image_url: '${PNG}', output_hint: 'Saved as cat.png; show it to the user.' });
      generatedImage({ image_url: '${PNG}' });
      generatedImage({ image_url: '${PNG}', detail: 'low', output_hint: '' });
      text(String(returned));
    `);
    expect(observation).toMatchObject({ kind: 'completed' });
    expect('error' in observation && observation.error !== undefined).toBe(false);
    expect(observation.items).toEqual([
      { type: 'input_text', text: 'before' },
      { type: 'input_image', image_url: PNG, detail: 'high' },
      { type: 'input_text', text: 'Saved as cat.png; show it to the user.' },
      { type: 'input_image', image_url: PNG, detail: 'high' },
      { type: 'input_image', image_url: PNG, detail: 'low' },
      { type: 'input_text', text: '' },
      { type: 'input_text', text: 'undefined' },
    ]);
  });

  it('refuses http(s) URLs, non-objects and non-string hints with the reference texts, thrown as strings, appending nothing', async () => {
    const texts = await env.texts(`
      const attempts = [
        () => generatedImage({ image_url: 'https://example.com/a.png', output_hint: 'hint' }),
        () => generatedImage({ image_url: 'HTTP://example.com/a.png' }),
        () => generatedImage('${PNG}'),
        () => generatedImage(),
        () => generatedImage(null),
        () => generatedImage({ image_url: '${PNG}', output_hint: 5 }),
        () => generatedImage({ image_url: '${PNG}', output_hint: null }),
        () => generatedImage({ get output_hint() { throw new Error('no'); }, image_url: '${PNG}' }),
        () => generatedImage({ output_hint: 'no image' }),
      ];
      for (const attempt of attempts) { try { attempt(); text('accepted'); } catch (e) { text(typeof e + ': ' + e); } }
    `);
    expect(texts).toEqual([
      `string: ${REMOTE}`,
      `string: ${REMOTE}`,
      'string: generatedImage expects an image generation result object',
      'string: generatedImage expects an image generation result object',
      'string: generatedImage expects an image generation result object',
      'string: generatedImage output_hint must be a string when provided',
      'string: generatedImage output_hint must be a string when provided',
      'string: failed to read generatedImage output_hint',
      'string: image expects a non-empty image URL string, an object with image_url and optional detail, or a raw MCP image block',
    ]);
  });

  it('an uncaught remote URL fails the cell with exactly the reference text', async () => {
    const observation = await env.run(`generatedImage({ image_url: 'http://example.com/image.jpg', output_hint: 'x' });`);
    expect(observation).toMatchObject({ kind: 'completed', items: [], error: REMOTE });
  });
});
