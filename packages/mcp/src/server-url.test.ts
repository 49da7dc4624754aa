import { describe, expect, it } from 'vitest';
import { createElicitationGate } from './elicitation-gate';
import { urlOrigin, withoutUrlSecrets } from './server-url';

describe('server URLs in model-visible texts', () => {
  const url = 'https://user:pa55word@mcp.example.com:8443/tenants/t0k3n-abc123/mcp?api_key=k3y-9f8e7d&region=eu';

  it('names a server by its origin only', () => {
    expect(urlOrigin(url)).toBe('https://mcp.example.com:8443');
    expect(urlOrigin('not a url')).toBe('its configured URL');
  });

  it('cuts the URL, its path, query, user info, long segments and values (decoded too), and leaves short ones', () => {
    const said = `POST ${url} failed; path /tenants/t0k3n-abc123/mcp; key k3y-9f8e7d; user pa55word; encoded ${encodeURIComponent('t0k3n-abc123')}; region eu, mcp`;
    const cut = withoutUrlSecrets(said, url);
    for (const secret of ['t0k3n-abc123', 'k3y-9f8e7d', 'pa55word', 'tenants']) expect(cut).not.toContain(secret);
    expect(cut).toBe('POST … failed; path …; key …; user …; encoded …; region eu, mcp');
    // control: a text without the URL's parts is left alone
    expect(withoutUrlSecrets('members only', url)).toBe('members only');
  });
});

describe('the elicitation gate', () => {
  const form = { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: {} } } as never;
  const link = (href: string) => ({ mode: 'url', message: 'Open.', url: href, elicitationId: 'e1' }) as never;

  it('admits only while a call is in flight, one waiting per call, https URLs only; each reason is said once', () => {
    let calls = 0;
    const said: string[] = [];
    const gate = createElicitationGate(() => calls, (message) => said.push(message));
    expect(gate.admit(form)).toEqual({ refused: 'an elicitation while no call of the server was in flight' });
    calls = 1;
    const first = gate.admit(link('https://example.com/connect'));
    expect('done' in first).toBe(true);
    expect(gate.admit(form)).toEqual({ refused: 'more elicitations waiting for the user than calls in flight (1)' });
    for (const href of ['javascript:alert(1)', 'file:///etc/passwd', 'http://example.com', 'nonsense']) expect('refused' in gate.admit(link(href))).toBe(true);
    // answered: the next one is admitted (and `done` twice releases once)
    (first as { done(): void }).done();
    (first as { done(): void }).done();
    const second = gate.admit(form);
    expect('done' in second).toBe(true);
    expect('refused' in gate.admit(form)).toBe(true);
    gate.admit(form);
    expect(said).toEqual([
      'declined an elicitation while no call of the server was in flight',
      'declined more elicitations waiting for the user than calls in flight (1)',
      'declined a URL elicitation to a javascript: URL (https: only)',
      'declined a URL elicitation to a file: URL (https: only)',
      'declined a URL elicitation to a http: URL (https: only)',
      'declined a URL elicitation to a malformed URL (https: only)',
    ]);
  });
});
