// Drives the memory inspector (/inspector/) of cmd/agentmemory-server in
// headless Chromium (Debian's, through npm playwright-core): records turns
// for two users of two memory stores through the Memory Store API, signs
// in with the first store's key, finds an insight, follows it to its
// source session, forgets it, reads the receipt, checks the profile no
// longer shows it, and that the other user's pages never appear under the
// first user's key. Screenshots go to AGENTMEMORY_E2E_ARTIFACTS.
// Run by TestInspectorInBrowser (e2e_inspector_test.go).
'use strict';

const { chromium } = require('playwright-core');
const fs = require('node:fs');
const path = require('node:path');

const endpoint = process.env.AGENTMEMORY_E2E_ENDPOINT;
const keyA = process.env.AGENTMEMORY_E2E_KEY_A;
const keyB = process.env.AGENTMEMORY_E2E_KEY_B;
const artifacts = process.env.AGENTMEMORY_E2E_ARTIFACTS;
const executablePath = process.env.AGENTMEMORY_E2E_CHROMIUM || '/usr/bin/chromium';
const profileDir = process.env.AGENTMEMORY_E2E_PROFILE;

const t0 = Date.now();
function ok(step) { console.log('ok ' + step); console.error(`  (${step} at ${Date.now() - t0} ms)`); }
function check(cond, what) { if (!cond) throw new Error('check failed: ' + what); }

async function api(key, method, p, body) {
  const res = await fetch(endpoint + p, {
    method,
    headers: { 'api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const out = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(out)}`);
  return out;
}

// remember records texts for scope of memory store name as one update and
// waits until it completes.
async function remember(key, name, scope, texts) {
  await api(key, 'POST', '/memory_stores?api-version=v1', {
    name, definition: { kind: 'default', chat_model: 'offline', embedding_model: 'lexical' },
  });
  const items = texts.map((content) => ({ type: 'message', role: 'user', content }));
  const up = await api(key, 'POST', `/memory_stores/${name}:update_memories?api-version=v1`, { scope, items, update_delay: 0 });
  for (let i = 0; i < 600; i++) {
    const st = await api(key, 'GET', `/memory_stores/${name}/updates/${up.update_id}?api-version=v1`);
    if (st.status === 'completed') return;
    if (st.status !== 'queued' && st.status !== 'in_progress') throw new Error('update ' + JSON.stringify(st));
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('update did not complete');
}

async function main() {
  await remember(keyA, 'alpha', 'alice', ['I am a vegetarian and I live in Lisbon.', 'My daughter Ana plays the cello.']);
  await remember(keyB, 'beta', 'bob', ['I love to collect vintage typewriters.']);
  ok('record_two_users');

  // A fresh profile (--user-data-dir, which playwright passes itself).
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await context.newPage();
    // Nothing is fetched from anywhere but the server.
    const elsewhere = [];
    page.on('request', (req) => { if (!req.url().startsWith(endpoint)) elsewhere.push(req.url()); });
    const shot = async (name) => page.screenshot({ path: path.join(artifacts, name + '.png'), fullPage: true });
    // Every page bob's memory could show on, and what it must never show.
    const bobSeen = () => page.content().then((html) => /typewriter/i.test(html));

    await page.goto(endpoint + '/inspector/');
    check(page.url().includes('/inspector/sign-in'), 'sent to sign in: ' + page.url());
    await shot('01-sign-in');
    await page.fill('input[name=key]', keyA);
    await Promise.all([page.waitForURL(endpoint + '/inspector/'), page.click('#sign-in')]);
    const index = await page.textContent('main');
    check(index.includes('alpha') && !index.includes('beta'), 'the index lists alpha only: ' + index);
    await shot('02-index');
    ok('sign_in');

    await page.click('a[href="/inspector/s/alpha/"]');
    await page.click('a.scope');
    check(page.url().endsWith('/inspector/s/alpha/alice/'), 'the scope page: ' + page.url());
    check(/vegetarian/i.test(await page.textContent('section.profile')), 'the profile shows the insight');
    check((await page.locator('.plot svg').count()) === 1, 'the timeline');
    await shot('03-scope-overview');
    ok('overview');

    await page.click('nav.tabs a[href$="/insights"]');
    await shot('04-insights');
    const insight = page.locator('a.insight', { hasText: /vegetarian/i }).filter({ hasNotText: 'Long-term profile' }).first();
    await insight.click();
    const insightURL = page.url();
    check(/vegetarian/i.test(await page.textContent('#insight-text')), 'the insight page');
    await shot('05-insight');
    ok('find_insight');

    await page.locator('a.source-session').first().click();
    check(page.url().includes('/sessions/'), 'the source session: ' + page.url());
    check((await page.textContent('ol.turns')).includes('I am a vegetarian and I live in Lisbon.'), 'the session shows the turn');
    check((await page.locator(`a[href="${new URL(insightURL).pathname}"]`).count()) > 0, 'the session links back to the insight');
    await shot('06-source-session');
    ok('source_session');

    await page.goto(insightURL);
    await page.click('#forget-insight');
    check(/vegetarian/i.test(await page.textContent('main blockquote')), 'the confirmation shows what is forgotten');
    await shot('07-confirm-forget');
    await page.click('#confirm-forget');
    check(page.url().includes('/deletions/'), 'the receipt: ' + page.url());
    const receipt = await page.textContent('main');
    check(receipt.includes('forget_insight') && receipt.includes('The whole chain verifies'), 'the receipt: ' + receipt);
    await shot('08-receipt');
    ok('forget_receipt');

    const gone = await page.goto(insightURL);
    check(gone.status() === 404, 'the insight is gone: ' + gone.status());
    await page.goto(endpoint + '/inspector/s/alpha/alice/');
    check(!/vegetarian/i.test(await page.textContent('section.profile')), 'the profile no longer shows it');
    ok('profile_without_it');

    await page.goto(endpoint + '/inspector/s/alpha/alice/deletions');
    await shot('09-deletion-log');
    await page.goto(endpoint + '/inspector/s/alpha/alice/search?q=' + encodeURIComponent('where does she live?'));
    check((await page.textContent('main')).includes('Lisbon'), 'search finds Lisbon');
    await shot('10-search');
    await page.goto(endpoint + '/inspector/s/alpha/alice/updates');
    await shot('11-updates');
    check(!(await bobSeen()), 'no page of alpha shows bob');

    for (const p of ['/inspector/s/beta/', '/inspector/s/beta/bob/', '/inspector/s/beta/bob/insights', '/inspector/s/beta/bob/export']) {
      const res = await page.goto(endpoint + p);
      check(res.status() === 403, p + ' answers 403: ' + res.status());
      check(!(await bobSeen()), p + ' shows nothing of bob');
    }
    await shot('12-other-store-refused');
    ok('other_user_never_shown');

    check(elsewhere.length === 0, 'requests elsewhere: ' + elsewhere.join(', '));
    ok('nothing_fetched_elsewhere');
  } finally {
    await context.close();
  }
  console.log('INSPECTOR E2E OK');
}

main().catch((err) => { console.error(err); process.exit(1); });
