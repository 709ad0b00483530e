// SPDX-License-Identifier: GPL-2.0-only
// The dashboard in a real browser: Debian's chromium driven by
// playwright-core against a running rcgated (RCGATE_URL) that the caller
// filled with data (see README.md). Expectations are derived from the
// REST API, so the tests hold for any populated instance; pages also must
// log no console error and throw no uncaught exception.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const BASE = (process.env.RCGATE_URL || '').replace(/\/+$/, '');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const OUT = fileURLToPath(new URL('./output/', import.meta.url));
const T = { timeout: 120000 };

let context;
let userDataDir;

async function getJSON(path) {
  const r = await fetch(BASE + path);
  assert.equal(r.status, 200, `GET ${path} answered ${r.status}`);
  return r.json();
}

async function getText(path) {
  const r = await fetch(BASE + path);
  assert.equal(r.status, 200, `GET ${path} answered ${r.status}`);
  return r.text();
}

// Everything the API says, fetched once: the tests pick their subjects
// from it and compare the pages with it.
const data = {};

before(async () => {
  assert.ok(BASE, 'RCGATE_URL must be the base URL of a running rcgated');
  mkdirSync(OUT, { recursive: true });
  userDataDir = mkdtempSync(join(tmpdir(), 'rcgate-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
      '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  data.releases = (await getJSON('/api/v1/releases?limit=200')).releases;
  data.details = new Map();
  for (const r of data.releases)
    data.details.set(r.version, await getJSON('/api/v1/releases/' + encodeURIComponent(r.version)));
  data.regressions = (await getJSON('/api/v1/regressions?limit=200')).regressions;
  data.regression = new Map();
  for (const g of data.regressions)
    data.regression.set(g.id, await getJSON('/api/v1/regressions/' + g.id));
});

after(async () => {
  if (context) await context.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

// Opens BASE/#hash in a fresh tab and waits until the route has rendered.
// Returns the page and the list of console errors / uncaught exceptions.
async function visit(hash, opts = {}) {
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const at = m.location() && m.location().url;
    errors.push('console: ' + m.text() + (at ? ' (at ' + at + ')' : ''));
  });
  page.on('pageerror', (e) => errors.push('uncaught: ' + e.message));
  if (opts.setup) await opts.setup(page);
  await page.goto(BASE + '/' + hash, { waitUntil: 'load' });
  await rendered(page);
  return { page, errors };
}

async function rendered(page) {
  await page.waitForFunction(() => {
    const m = document.getElementById('main');
    return m && !m.hasAttribute('aria-busy') && !m.querySelector('.loading');
  }, null, { timeout: 30000 });
}

async function shot(page, name) {
  await page.screenshot({ path: join(OUT, name + '.png'), fullPage: true });
}

function noErrors(errors, where) {
  assert.deepEqual(errors, [], `console errors or exceptions on ${where}`);
}

// Data present on a page as literal text, never as markup: no element was
// created from it and none of its scripts ran.
async function assertInert(page, needle, where) {
  const text = await page.locator('main').innerText();
  assert.ok(text.includes(needle), `${where}: "${needle}" is shown as text`);
  const state = await page.evaluate(() => ({
    pwned: window.__pwned,
    scripts: [...document.scripts].map((s) => s.getAttribute('src')),
    imgs: [...document.querySelectorAll('main img')].length,
    bold: [...document.querySelectorAll('main b')].length,
  }));
  assert.equal(state.pwned, undefined, `${where}: injected script ran`);
  assert.deepEqual(state.scripts, ['/web/app.js'], `${where}: only app.js is a script`);
  assert.equal(state.imgs, 0, `${where}: no <img> from data`);
  assert.equal(state.bold, 0, `${where}: no <b> from data`);
}

// An rc whose review deadline passed before anyone submitted a kernel:
// the API's gate still says "pending", the page must say it expired.
function expiredWithoutKernels(d) {
  return d.deadline !== null && Date.parse(d.deadline) < Date.now() &&
    d.jobs.length === 0 && d.gate.verdict === 'pending';
}

// The text of the <dd> after the <dt> named `label` in the facts list,
// and the hrefs of the links in it; null if there is no such fact.
async function fact(page, label) {
  return page.evaluate((label) => {
    for (const dt of document.querySelectorAll('main dl.facts dt')) {
      if (dt.textContent !== label) continue;
      const dd = dt.nextElementSibling;
      return { text: dd.innerText, links: [...dd.querySelectorAll('a')].map((a) => a.getAttribute('href')) };
    }
    return null;
  }, label);
}

// The release with the most regressions (then most results) is the
// interesting one to look at.
function pickRelease() {
  const scored = data.releases.map((r) => {
    const d = data.details.get(r.version);
    return { d, score: (d.regressions.length * 1000) + d.totals.pass + d.totals.fail };
  }).sort((a, b) => b.score - a.score);
  return scored.length ? scored[0].d : null;
}

test('the release list shows every release, rcs grouped by review cycle', T, async () => {
  const { page, errors } = await visit('#/');
  assert.equal(await page.locator('h1').innerText(), 'Review cycles');
  for (const r of data.releases) {
    const sel = `a[href="#/release/${encodeURIComponent(r.version)}"]`;
    const link = page.locator(sel);
    assert.equal(await page.locator('main ' + sel).count(), 1, `${r.version} is listed once`);
    assert.equal(await link.innerText(), r.version);
    const d = data.details.get(r.version);
    const inCycle = await page.locator('section.cycle').filter({ has: link }).count();
    assert.equal(inCycle > 0, d.deadline !== null,
      `${r.version} is ${d.deadline ? 'in a review cycle' : 'listed without a deadline'}`);
    // its row shows the gate verdict the API gives (or, for an rc that
    // got no kernels before its deadline, that it expired)
    const row = page.locator('tr').filter({ has: link });
    const shown = expiredWithoutKernels(d) ? 'expired' : d.gate.verdict;
    assert.ok((await row.innerText()).includes(shown), `${r.version} row shows gate ${shown}`);
  }
  // deadlines within three days of each other are one cycle
  const withDeadline = [...data.details.values()].filter((d) => d.deadline)
    .map((d) => Date.parse(d.deadline)).sort((a, b) => a - b);
  let cycles = withDeadline.length ? 1 : 0;
  for (let i = 1; i < withDeadline.length; i++)
    if (withDeadline[i] - withDeadline[i - 1] > 3 * 86400000) cycles++;
  assert.equal(await page.locator('section.cycle').count(), cycles, 'number of review cycles');
  if (withDeadline.length)
    assert.match(await page.locator('section.cycle .countdown').first().innerText(), /^(due in|closed) /);
  await shot(page, 'releases');
  noErrors(errors, '#/');
  await page.close();
});

test('the release page shows the matrix, regressions, gate, baseline and jobs', T, async () => {
  const rel = pickRelease();
  assert.ok(rel, 'at least one release');
  const { page, errors } = await visit('#/release/' + encodeURIComponent(rel.version));
  assert.ok((await page.locator('h1').innerText()).startsWith(rel.version));

  // the gate: verdict and every reason
  const gate = page.locator('.gate');
  assert.equal(await gate.locator('.verdict .badge').innerText(), rel.gate.verdict);
  for (const reason of rel.gate.reasons)
    assert.ok((await gate.textContent()).includes(reason), `gate reason "${reason}"`);

  // the matrix: one row per test, one column per target with jobs
  const tests = new Set(), targets = new Set();
  for (const j of rel.jobs) for (const r of j.results) { tests.add(r.test); targets.add(j.target); }
  if (tests.size) {
    const m = page.locator('table.matrix');
    assert.equal(await m.locator('tbody tr').count(), tests.size, 'a row per test');
    const heads = await m.locator('thead th').allInnerTexts();
    assert.deepEqual(heads.slice(1).sort(), [...targets].sort(), 'a column per target');
    const cells = await m.locator('td.cell').allInnerTexts();
    assert.ok(cells.every((c) => /^(pass|fail|skip|error|—)/.test(c)), 'cells are pass/fail/skip');
    // one cell checked against the API: the first result of the first job
    const j = rel.jobs.find((x) => x.results.length);
    const col = heads.indexOf(j.target);
    const row = m.locator('tbody tr').filter({ has: page.locator('th', { hasText: new RegExp('^' + j.results[0].test.replace(/[.]/g, '\\.') + '( regression)?$') }) });
    assert.ok((await row.locator('td').nth(col - 1).innerText()).length > 0);
  }

  // regressions on top, each linked to every other affected rc
  if (rel.regressions.length) {
    const firstRow = await page.locator('table.matrix tbody tr').first().getAttribute('class');
    assert.equal(firstRow, 'regressed', 'regressed tests come first in the matrix');
    const regTable = page.locator('section[aria-labelledby="regressions"] table');
    assert.equal(await regTable.locator('tbody tr').count(), rel.regressions.length);
    for (const g of rel.regressions) {
      const row = regTable.locator('tbody tr').filter({ has: page.locator(`a[href="#/regression/${g.id}"]`) });
      for (const v of g.also_in)
        assert.equal(await row.locator(`a[href="#/release/${encodeURIComponent(v)}"]`).count(), 1, `regression ${g.id} links ${v}`);
      assert.ok((await row.innerText()).includes(g.branch_state || 'unknown'), 'branch state shown');
    }
  } else {
    assert.ok((await page.locator('main').innerText()).includes('No regressions'));
  }

  // baseline, and every job with its state and log link
  const facts = await page.locator('dl.facts').innerText();
  assert.match(facts, /Baseline/);
  if (rel.baseline) assert.ok(facts.includes(rel.baseline));
  for (const j of rel.jobs) {
    const row = page.locator('section[aria-labelledby="jobs"] tbody tr').filter({ has: page.locator(`a[href="#/job/${j.id}"]`) });
    assert.equal(await row.count(), 1, `job ${j.id} listed`);
    const text = await row.innerText();
    assert.ok(text.includes(j.state), `job ${j.id} state`);
    if (j.accel) assert.ok(text.includes(j.accel), `job ${j.id} accel`);
    if (j.boot_seconds !== null) assert.ok(text.includes(Number(j.boot_seconds).toFixed(1) + ' s'), `job ${j.id} boot seconds`);
    assert.equal(await row.locator(`a[href="/api/v1/jobs/${j.id}/log"]`).count(), 1, `job ${j.id} log link`);
  }
  await shot(page, 'release');
  noErrors(errors, 'release ' + rel.version);
  await page.close();
});

test('the regression page lists every affected rc and its links lead there', T, async (t) => {
  const regs = [...data.regression.values()].sort((a, b) => b.occurrences.length - a.occurrences.length);
  if (!regs.length) return t.skip('no regressions in this instance (submit a failing kernel, see README.md)');
  const g = regs[0];
  const { page, errors } = await visit('#/regression/' + g.id);
  assert.match(await page.locator('h1').innerText(), new RegExp('Regression #' + g.id));
  const occ = page.locator('section[aria-labelledby="occ"] tbody tr');
  assert.equal(await occ.count(), g.occurrences.length, 'a row per affected rc');
  for (const b of g.branches) {
    const row = page.locator('section[aria-labelledby="branches"] tbody tr').filter({ hasText: b.branch });
    const text = await row.first().innerText();
    assert.ok(text.includes(b.state), `branch ${b.branch} is ${b.state}`);
    if (b.fixed_in) assert.equal(await row.first().locator(`a[href="#/release/${encodeURIComponent(b.fixed_in)}"]`).count(), 1);
  }
  if (g.diagnostic) assert.equal(await page.locator('pre.diag').innerText(), g.diagnostic);
  assert.equal(await page.locator('section[aria-labelledby="history"] tbody tr').count(), g.events.length);
  await shot(page, 'regression');
  // every rc link navigates to that rc's page
  for (const o of g.occurrences) {
    await page.locator(`section[aria-labelledby="occ"] a[href="#/release/${encodeURIComponent(o.version)}"]`).click();
    await page.waitForFunction((v) => location.hash === '#/release/' + encodeURIComponent(v), o.version);
    await rendered(page);
    assert.ok((await page.locator('h1').innerText()).startsWith(o.version), `landed on ${o.version}`);
    await page.goBack();
    await rendered(page);
    assert.match(await page.locator('h1').innerText(), new RegExp('Regression #' + g.id));
  }
  noErrors(errors, 'regression ' + g.id);
  await page.close();
});

test('the job page shows the job, its state history and its console log', T, async () => {
  const jobs = [...data.details.values()].flatMap((d) => d.jobs)
    .filter((j) => j.state === 'done').sort((a, b) => b.results.length - a.results.length);
  assert.ok(jobs.length, 'at least one finished job');
  const j = jobs[0];
  const [job, log] = await Promise.all([getJSON('/api/v1/jobs/' + j.id), getText('/api/v1/jobs/' + j.id + '/log')]);
  const { page, errors } = await visit('#/job/' + j.id);
  assert.match(await page.locator('h1').innerText(), new RegExp('^Job ' + j.id + ': '));
  const pre = await page.locator('pre.log').textContent();
  assert.equal(pre, log, 'the <pre> holds the whole log, verbatim');
  assert.match(pre, /==== console/, 'the console part is there');
  assert.equal(await page.locator('section[aria-labelledby="events"] tbody tr').count(), job.events.length);
  assert.equal(await page.locator('section[aria-labelledby="results"] tbody tr').count(), job.results.length);
  assert.equal(await page.locator(`main a[href="#/release/${encodeURIComponent(job.version)}"]`).count() > 0, true);
  await shot(page, 'job');
  noErrors(errors, 'job ' + j.id);
  await page.close();
});

test('the hosts page shows every host with its state, load and capacity', T, async () => {
  const api = await getJSON('/api/v1/hosts');
  const { page, errors } = await visit('#/hosts');
  assert.equal(await page.locator('h1').innerText(), 'Hypervisor hosts');
  const rows = page.locator('main tbody tr');
  assert.equal(await rows.count(), api.hosts.length, 'one row per host');
  for (let i = 0; i < api.hosts.length; i++) {
    const hh = api.hosts[i];
    const text = await rows.nth(i).innerText();
    assert.ok(text.includes(hh.name) && text.includes(hh.state), `${hh.name}: name and state shown`);
    assert.ok(text.includes('capacity ' + hh.capacity), `${hh.name}: capacity shown`);
  }
  assert.equal(await page.locator('nav a[href="#/hosts"]').count(), 1, 'the nav links to it');
  await shot(page, 'hosts');
  noErrors(errors, '#/hosts');
  await page.close();
});

test('hostile strings from the API are shown as text, never run', T, async (t) => {
  const cases = [];
  for (const d of data.details.values()) {
    for (const j of d.jobs) {
      if (/[<>"'&]/.test(j.url)) {
        cases.push({ hash: '#/release/' + encodeURIComponent(d.version), needle: j.url, what: 'artifact URL on the release page' });
        cases.push({ hash: '#/job/' + j.id, needle: j.url, what: 'artifact URL on the job page' });
      }
    }
    if (d.message_id && /[<>"'&]/.test(d.message_id))
      cases.push({ hash: '#/release/' + encodeURIComponent(d.version), needle: d.message_id, what: 'Message-ID' });
  }
  for (const g of data.regression.values()) {
    if (g.reason && /[<>"'&]/.test(g.reason))
      cases.push({ hash: '#/regression/' + g.id, needle: g.reason, what: 'triage reason' });
  }
  if (!cases.length) return t.skip('no data with markup characters in this instance (see README.md)');
  t.diagnostic(`${cases.length} pages with markup characters in data: ${[...new Set(cases.map((c) => c.what))].join(', ')}`);
  for (const c of cases) {
    const { page, errors } = await visit(c.hash);
    await assertInert(page, c.needle, c.what + ' ' + c.hash);
    if (c.what === 'artifact URL on the release page') await shot(page, 'hostile');
    noErrors(errors, c.hash);
    await page.close();
  }
});

test('every page renders without console errors, one h1 each', T, async () => {
  const hashes = ['#/', '#/regressions', '#/hosts'];
  for (const r of data.releases) hashes.push('#/release/' + encodeURIComponent(r.version));
  for (const g of data.regressions) hashes.push('#/regression/' + g.id);
  const jobs = [...data.details.values()].flatMap((d) => d.jobs);
  for (const j of jobs.slice(0, 12)) hashes.push('#/job/' + j.id);
  for (const hash of hashes) {
    const { page, errors } = await visit(hash);
    assert.equal(await page.locator('h1').count(), 1, `${hash}: one h1`);
    assert.equal(await page.locator('main .error').count(), 0, `${hash}: no error box`);
    assert.equal(await page.locator('html').getAttribute('lang'), 'en');
    noErrors(errors, hash);
    if (hash === '#/regressions') await shot(page, 'regressions');
    await page.close();
  }
});

test('a page is busy, saying so, until its first data arrives', T, async () => {
  const page = await context.newPage();
  // /states is the first request app.js waits for; hold it back a second.
  await page.route(/\/api\/v1\/states$/, async (r) => {
    await new Promise((res) => setTimeout(res, 1000));
    await r.continue();
  });
  await page.goto(BASE + '/#/regressions', { waitUntil: 'load' });
  const early = await page.evaluate(() => {
    const m = document.getElementById('main');
    return { busy: m.getAttribute('aria-busy'), loading: m.querySelectorAll('.loading').length,
      h1: m.querySelectorAll('h1').length };
  });
  assert.deepEqual(early, { busy: 'true', loading: 1, h1: 0 }, 'busy with a loading note before any data');
  await rendered(page);
  assert.equal(await page.locator('main h1').count(), 1, 'then the page itself');
  await page.close();
});

test('empty lists render as friendly notes', T, async () => {
  const empty = async (page) => {
    await page.route(/\/api\/v1\/releases\?/, (r) => r.fulfill({ status: 200, contentType: 'application/json', body: '{"releases":[],"limit":200,"offset":0}' }));
    await page.route(/\/api\/v1\/regressions\?/, (r) => r.fulfill({ status: 200, contentType: 'application/json', body: '{"regressions":[],"limit":200,"offset":0}' }));
  };
  let { page, errors } = await visit('#/', { setup: empty });
  assert.match(await page.locator('main').innerText(), /No releases yet/);
  noErrors(errors, 'empty #/');
  await page.close();
  ({ page, errors } = await visit('#/regressions', { setup: empty }));
  assert.match(await page.locator('main').innerText(), /No regressions found/);
  noErrors(errors, 'empty #/regressions');
  await page.close();
});

test('API errors are shown to the user', T, async () => {
  // A real 404 from rcgated: the browser itself logs the failed load, and
  // that is the only console line allowed here.
  let { page, errors } = await visit('#/job/999999999');
  let alert = page.locator('main [role="alert"]');
  assert.match(await alert.innerText(), /HTTP 404: no job 999999999/);
  assert.ok(errors.every((e) => /Failed to load resource.*404/.test(e)), errors.join('\n'));
  await shot(page, 'error');
  await page.close();

  // A failing server and a malformed answer.
  const broken = async (p) => {
    await p.route(/\/api\/v1\/regressions\?/, (r) => r.fulfill({ status: 500, contentType: 'application/json', body: '{"error":{"status":500,"message":"database error <b>x</b>"}}' }));
  };
  ({ page, errors } = await visit('#/regressions', { setup: broken }));
  alert = page.locator('main [role="alert"]');
  assert.match(await alert.innerText(), /HTTP 500: database error <b>x<\/b>/);
  assert.equal(await page.locator('main b').count(), 0);
  await page.close();

  ({ page, errors } = await visit('#/no/such/page'));
  assert.equal(await page.locator('h1').innerText(), 'Page not found');
  noErrors(errors, 'unknown route');
  await page.close();
});

test('the header counts workers in proper English', T, async () => {
  for (const n of [1, 2]) {
    const { page, errors } = await visit('#/', {
      setup: (p) => p.route(/\/healthz$/, async (r) => {
        const real = await (await r.fetch()).json();
        await r.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ ...real, workers: n }) });
      }),
    });
    await page.waitForFunction(() => document.getElementById('health').textContent !== '');
    const text = await page.locator('#health').innerText();
    assert.match(text, new RegExp('· ' + n + (n === 1 ? ' worker$' : ' workers$')), `header with ${n} workers: "${text}"`);
    noErrors(errors, `#/ with ${n} workers`);
    await page.close();
  }
});

test('report links are shown only for reports that exist', T, async (t) => {
  let without = 0;
  for (const d of data.details.values()) {
    assert.ok('report' in d, `GET /api/v1/releases/${d.version} says whether a report exists`);
    if (!d.report || !d.report.email) without++;
    const { page, errors } = await visit('#/release/' + encodeURIComponent(d.version));
    const hrefs = await page.locator('main a').evaluateAll((as) => as.map((a) => a.getAttribute('href'))
      .filter((h) => /\/report\.(txt|eml)$/.test(h)));
    const base = '/api/v1/releases/' + encodeURIComponent(d.version);
    assert.equal(hrefs.includes(base + '/report.txt'), Boolean(d.report && d.report.text), `${d.version}: report.txt link`);
    assert.equal(hrefs.includes(base + '/report.eml'), Boolean(d.report && d.report.email), `${d.version}: report.eml link`);
    for (const href of hrefs) {
      const r = await fetch(BASE + href);
      assert.equal(r.status, 200, `${d.version}: the link ${href} answers 200`);
    }
    noErrors(errors, 'release ' + d.version);
    await page.close();
  }
  t.diagnostic(`${without} of ${data.details.size} releases have no text or no e-mail report`);
});

test('an unknown release is a "no such release" page, not an error', T, async () => {
  const { page, errors } = await visit('#/release/9.9.9');
  assert.equal(await page.locator('h1').innerText(), 'No such release 9.9.9');
  const text = await page.locator('main').innerText();
  assert.doesNotMatch(text, /Something went wrong/);
  assert.equal(await page.locator('main .error, main [role="alert"]').count(), 0, 'a 404 is not an error box');
  assert.equal(await page.locator('main a[href="#/"]').count() > 0, true, 'a way back to the list');
  // the browser logs the failed load of the 404 itself; nothing else
  assert.ok(errors.every((e) => /Failed to load resource.*404/.test(e)), errors.join('\n'));
  await shot(page, 'notfound');
  await page.close();
});

test('an rc whose deadline passed without kernels says it expired, not "pending"', T, async (t) => {
  const expired = [...data.details.values()].filter(expiredWithoutKernels);
  if (!expired.length) return t.skip('no rc with a past deadline and no kernels (announce one, submit nothing)');
  const listing = await visit('#/');
  for (const d of expired) {
    const row = listing.page.locator('tr').filter({ has: listing.page.locator(`a[href="#/release/${encodeURIComponent(d.version)}"]`) });
    assert.match(await row.innerText(), /expired\W+no kernels before the deadline/, `${d.version} in the list`);
    assert.doesNotMatch(await row.locator('td').last().innerText(), /pending/, `${d.version}: the gate cell does not say pending`);
    const { page, errors } = await visit('#/release/' + encodeURIComponent(d.version));
    const gate = await page.locator('.gate').innerText();
    assert.match(gate, /expired\W+no kernels before the deadline/, `${d.version} release page`);
    assert.equal(await page.locator('.gate .verdict .badge').innerText(), 'expired');
    await shot(page, 'expired');
    noErrors(errors, 'release ' + d.version);
    await page.close();
  }
  noErrors(listing.errors, '#/');
  await listing.page.close();
});

test('without JavaScript the page says it needs it and where the API is', T, async () => {
  const browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const ctx = await browser.newContext({ javaScriptEnabled: false });
    const page = await ctx.newPage();
    await page.goto(BASE + '/', { waitUntil: 'load' });
    const text = await page.locator('main').innerText();
    assert.doesNotMatch(text, /Loading/, 'no "Loading…" that never ends');
    assert.match(text, /needs JavaScript/);
    assert.equal(await page.locator('main a[href="/api/v1/releases"]').count(), 1, 'a link to the API in the notice');
    await shot(page, 'nojs');
    await ctx.close();
  } finally {
    await browser.close();
  }
});

test('the baseline shown is the API\'s baseline_effective, described as the engine uses it', T, async () => {
  for (const d of data.details.values()) {
    const { page, errors } = await visit('#/release/' + encodeURIComponent(d.version));
    const b = await fact(page, 'Baseline');
    assert.ok(b, `${d.version}: a Baseline fact`);
    assert.doesNotMatch(b.text, /not regressions/, `${d.version}: no false claim about failures`);
    if (d.baseline_effective) {
      assert.deepEqual(b.links, ['#/release/' + encodeURIComponent(d.baseline_effective)], `${d.version}: links the effective baseline`);
      assert.match(b.text, d.baseline ? /explicit/ : /automatic/, `${d.version}: says how it was chosen`);
    } else {
      assert.deepEqual(b.links, [], `${d.version}: no baseline linked`);
      assert.match(b.text, /^none/);
      // engine.c/regress.c: no baseline result is BASE_NONE, which is not
      // a known failure: a failure that reproduces is a regression.
      assert.match(b.text, /counts as a regression/, `${d.version}: says failures count as regressions`);
    }
    noErrors(errors, 'release ' + d.version);
    await page.close();
  }
});
