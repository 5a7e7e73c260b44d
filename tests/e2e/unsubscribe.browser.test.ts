// The unsubscribe page in a real browser (headless Chromium, tests/support/browser.ts) against
// the real platform server: the link of an alert email opens a page that asks; its button
// posts to the same URL and the person's alert emails are off. Skipped, saying why, without
// /usr/bin/chromium.

import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { unsubscribeUrl } from '../../application/notification/unsubscribe-links';
import { launchChromium, skipUnlessChromium } from '../support/browser';
import { type Account, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

describe('the unsubscribe page in headless Chromium', function () {
  this.timeout(60_000);
  let server: TestServer | null = null;
  let browser: Browser | null = null;
  let page: Page | null = null;
  let owner: Account;

  before(async function () {
    skipUnlessChromium(this);
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'chromium-unsub');
    browser = await launchChromium();
    page = await browser.newPage();
  });
  after(async () => {
    await page?.close();
    await browser?.close();
    await server?.close();
  });

  const alertsOn = async (): Promise<boolean> =>
    (await server!.request('GET', '/api/v1/me/notifications', { headers: { authorization: `Bearer ${owner.token}` } })).json.orchestration_alerts;

  it('asks, and its button turns the alert emails off', async () => {
    const link = unsubscribeUrl(server!.platform.secrets, server!.url, { tenant_id: owner.tenant_id, user_id: owner.user_id, kind: 'orchestration_alerts' })!;
    const opened = await page!.goto(link);
    expect(opened?.status()).to.equal(200);
    expect(await page!.textContent('#message')).to.equal('Stop the alert emails about orchestration events that were dead-lettered or expired from Org chromium-unsub?');
    // The page's only style is allowed by its hash in the Content-Security-Policy: it applies.
    expect(await page!.evaluate("getComputedStyle(document.getElementById('unsubscribe')).backgroundColor")).to.equal('rgb(59, 91, 219)');
    expect(await alertsOn()).to.equal(true);

    await Promise.all([page!.waitForLoadState('load'), page!.waitForResponse((response) => response.request().method() === 'POST'), page!.click('#unsubscribe')]);
    expect(await page!.textContent('h1')).to.equal('Unsubscribed');
    expect(await page!.textContent('#message')).to.equal('You will get no more alert emails about orchestration events that were dead-lettered or expired from Org chromium-unsub.');
    expect(await alertsOn()).to.equal(false);
  });
});
