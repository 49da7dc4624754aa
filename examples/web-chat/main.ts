// The example's own test: the server, and the page in a real headless Chromium (Debian's `chromium`,
// driven by playwright-core). It sends a message, sees the cell's output and its nested calls,
// approves a refund, sees a background result arrive once, reloads, and keeps screenshots
// (artifacts/web-chat-approval.png at the approval, artifacts/web-chat.png at the end; git-ignored).
// Without Chromium: skipped with the reason, or a failure in CI.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { refunds } from './agent';
import { startWebChatServer } from './server';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const here = dirname(fileURLToPath(import.meta.url));
const SCREENSHOT = join(here, 'artifacts', 'web-chat.png');
const APPROVAL_SCREENSHOT = join(here, 'artifacts', 'web-chat-approval.png');

if (!existsSync(CHROMIUM)) {
  const how = 'install it with `apt-get install -y chromium` (scripts/setup.mjs does when root), or set CHROMIUM_PATH';
  if (process.env.CI) {
    console.error(`web-chat: FAILED — no Chromium at ${CHROMIUM}; ${how}`);
    process.exit(1);
  }
  console.log(`web-chat: skipped — no Chromium at ${CHROMIUM}; ${how} (in CI this fails)`);
  process.exit(0);
}

const started = performance.now();
const seconds = (from: number) => ((performance.now() - from) / 1000).toFixed(1);
const server = await startWebChatServer();
const serverSeconds = seconds(started);
const profile = mkdtempSync(join(tmpdir(), 'web-chat-profile-'));
const launched = performance.now();
const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: 60_000 });
const browserSeconds = seconds(launched);
const conversation = performance.now();
context.setDefaultTimeout(30_000);
const pageErrors: string[] = [];

async function send(page: Page, text: string): Promise<void> {
  await page.locator('#send:not([disabled])').waitFor();
  await page.fill('#input', text);
  await page.click('#send');
}

try {
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(`${server.url}/?chat=browser-test`);
  await page.locator('body[data-ready="true"]').waitFor();

  // 1. a cell and its nested calls, then a call that asks first
  await send(page, 'Check the stock of apples and plums');
  const cell = page.locator('.cell').first();
  await cell.locator('.output').waitFor();
  assert.match(await cell.locator('.source').innerText(), /tools\.inventory__check_stock/);
  assert.match(await cell.locator('.output').innerText(), /apple: 7, plum: 0/);
  const nested = await cell.locator('.nested-call').allInnerTexts();
  assert.deepEqual(nested.sort(), ['inventory__check_stock({"sku":"apple"}) — completed', 'inventory__check_stock({"sku":"plum"}) — completed']);
  await page.locator('button.approve').waitFor();
  assert.match(await page.locator('.approval').innerText(), /billing__refund \{"order":7,"amount":120\} needs your approval/);
  mkdirSync(dirname(SCREENSHOT), { recursive: true });
  await page.screenshot({ path: APPROVAL_SCREENSHOT, fullPage: true });
  assert.deepEqual(refunds, [], 'nothing is refunded before the approval');
  await page.click('button.approve');
  await page.getByText('Plums are out, so I refunded order 7.').waitFor();
  assert.deepEqual(refunds, [7], 'the approved refund ran once');
  assert.match(await page.locator('.tool[data-tool="billing__refund"] .output').innerText(), /"refunded":7/);

  // 2. work that finishes after the turn: its result arrives in a turn of its own, followed by the page
  await send(page, 'Start the nightly report');
  await page.getByText('The report runs in the background').waitFor();
  await page.locator('.background').waitFor();
  assert.match(await page.locator('.background').innerText(), /report: 42 rows/);
  await page.getByText('The nightly report is ready: 42 rows.').waitFor();
  const reportCell = page.locator('.cell').nth(1);
  await reportCell.locator('.nested-call').first().waitFor();
  assert.deepEqual(await reportCell.locator('.nested-call').allInnerTexts(), ['reports__nightly_report({}) — completed']);
  // once: another follow round shows nothing new
  await page.waitForTimeout(1_500);
  assert.equal(await page.locator('.background').count(), 1);
  assert.equal(await page.getByText('The nightly report is ready: 42 rows.').count(), 1);
  await page.screenshot({ path: SCREENSHOT, fullPage: true });

  // 3. a reload shows the same conversation, under the same ids, once
  const ids = await page.locator('.message.assistant').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-message-id')));
  await page.reload();
  await page.locator('body[data-ready="true"]').waitFor();
  assert.deepEqual(await page.locator('.message.assistant').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-message-id'))), ids);
  assert.equal(await page.getByText('The nightly report is ready: 42 rows.').count(), 1);
  assert.deepEqual(pageErrors, [], 'the page threw');
  assert.equal(await page.locator('#error').innerText(), '');
  console.log(`web-chat ok: cell with 2 nested calls, refund approved and run once, background result shown once; screenshots ${APPROVAL_SCREENSHOT}, ${SCREENSHOT}`);
  console.log(`web-chat: server and bundle ${serverSeconds} s, browser start ${browserSeconds} s, the conversation ${seconds(conversation)} s`);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
  await server.close();
}
