// The real Chromium, driven by playwright-core, for tests of the web app. `npm test` provisions the browser
// (stack/provision.ts provisionBrowser) and passes its path as KBQA_CHROMIUM; a test run without it fails here with a
// message saying what to install, never skips.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestFn } from 'ava';
import { chromium, type Browser, type Page } from 'playwright-core';
import { TEST_PASSWORD } from '../factories/accounts.ts';
import { testWithApp, type HarnessOptions, type TestApp } from './app.ts';

export type ViewportKind = 'desktop' | 'phone';

const VIEWPORTS: Record<
  ViewportKind,
  { viewport: { width: number; height: number }; isMobile: boolean; hasTouch: boolean }
> = {
  desktop: { viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false },
  phone: { viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true },
};

/**
 * This machine's network is closed: without the background-networking flags Chromium keeps trying to reach Google's
 * services (component updates, sync, QUIC probes) and logs refused connections.
 */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export function chromiumExecutable(): string {
  return process.env.KBQA_CHROMIUM ?? '/usr/bin/chromium';
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumExecutable();
  if (!existsSync(executablePath)) {
    throw new Error(
      `Chromium not found at ${executablePath}: run the tests with \`npm test\` (it installs Chromium when it can), ` +
        'or install it (Debian/Ubuntu: `sudo apt-get install chromium`), or set KBQA_CHROMIUM to a Chromium binary',
    );
  }
  return chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
}

const viewportOf = new WeakMap<Page, ViewportKind>();

/** A page in a fresh context (no shared cookies or storage) at baseUrl; closing the page (or the browser) closes its context. */
export async function newPage(
  browser: Browser,
  baseUrl: string,
  options: { viewport?: ViewportKind } = {},
): Promise<Page> {
  const kind = options.viewport ?? 'desktop';
  const context = await browser.newContext({ baseURL: baseUrl, ...VIEWPORTS[kind] });
  const page = await context.newPage();
  viewportOf.set(page, kind);
  page.once('close', () => {
    // When the browser closes first, its contexts are already gone and close() rejects: nothing is left to clean.
    context.close().catch(() => {});
  });
  return page;
}

export function screenshotsDir(): string {
  return process.env.KBQA_SCREENSHOTS_DIR ?? join('.local', 'screenshots');
}

/** A full-page PNG at <KBQA_SCREENSHOTS_DIR or .local/screenshots>/<name>-<desktop|phone>.png; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const directory = screenshotsDir();
  mkdirSync(directory, { recursive: true });
  const path = join(directory, `${name}-${viewportOf.get(page) ?? 'desktop'}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Both widths of a page that is only reachable once (the first run, a one-time link): the desktop shot, then the
 * same page resized to 375 px for the phone one, then back.
 */
export async function screenshotBothWidths(page: Page, name: string): Promise<void> {
  const kind = viewportOf.get(page) ?? 'desktop';
  const original = page.viewportSize();
  for (const width of ['desktop', 'phone'] as const) {
    await page.setViewportSize(VIEWPORTS[width].viewport);
    viewportOf.set(page, width);
    await screenshot(page, name);
  }
  viewportOf.set(page, kind);
  if (original) await page.setViewportSize(original);
}

/** Signs `email` in through the sign-in page (TEST_PASSWORD unless given) and waits for the knowledge-base list. */
export async function signInThroughPage(page: Page, email: string, password = TEST_PASSWORD): Promise<void> {
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('kb-row').first().waitFor();
}

/**
 * ava's `test` for a file of browser tests: the harness's app on the file's own database (testWithApp in app.ts,
 * with the same options) and one Chromium, started before its tests, closed after them.
 */
export function testWithBrowser<Context extends object = Record<never, never>>(
  options: HarnessOptions<Context & { app: TestApp; databaseUrl: string; browser: Browser }> = {},
): TestFn<{ app: TestApp; databaseUrl: string; browser: Browser } & Context> {
  const test = testWithApp<{ browser: Browser } & Context>(options);
  test.serial.before(async (t) => {
    t.context.browser = await launchBrowser();
  });
  test.after.always(async (t) => {
    await t.context.browser?.close();
  });
  return test;
}
