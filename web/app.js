// SPDX-License-Identifier: GPL-2.0-only
// app.js - the rcgate dashboard: hash routes rendered from the same-origin
// REST API (/api/v1). Every piece of data reaches the page as a text node
// or a URL-encoded path segment: nothing from the API is ever parsed as
// markup, so announcement fields, artifact URLs, diagnostics and triage
// reasons cannot inject script.
'use strict';

(function () {
  const API = '/api/v1';
  const DAY = 86400000;
  // rcs whose deadlines lie within this distance of each other are one
  // review cycle (Greg's batches go out within hours of each other).
  const CYCLE_GAP_MS = 3 * DAY;
  const REFRESH_MS = 15000;
  const GATE_REASONS_SHOWN = 6;
  // The daemon's job state table (GET /api/v1/states), read once at start:
  // which states are final and which still move. The page works without
  // it, only less precisely (nothing is then taken as final or live).
  let jobStates = [];
  const isFinalState = (s) => jobStates.some((j) => j.name === s && j.final);

  const main = document.getElementById('main');
  let renderSeq = 0;        // a newer navigation makes older renders stale
  let refreshTimer = null;
  let clockTimer = null;

  // ---- DOM helpers: the only way this file creates content ----------

  // h('a', {href: '#/x', class: 'c'}, 'text', node, [more]) -> element.
  // Strings always become text nodes; attributes go through setAttribute.
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === null || v === undefined || v === false) continue;
        el.setAttribute(k, v === true ? '' : String(v));
      }
    }
    append(el, children);
    return el;
  }

  function append(el, children) {
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) append(el, c);
      else if (c instanceof Node) el.appendChild(c);
      else el.appendChild(document.createTextNode(String(c)));
    }
  }

  function seg(s) {
    return encodeURIComponent(String(s));
  }

  function releaseLink(version, text) {
    return h('a', { href: '#/release/' + seg(version) }, text || version);
  }

  function regressionLink(id, text) {
    return h('a', { href: '#/regression/' + seg(id) }, text || '#' + id);
  }

  function jobLink(id, text) {
    return h('a', { href: '#/job/' + seg(id) }, text || 'job ' + id);
  }

  // A kernel build's step and progress (kinds source and git): "compiling
  // 1234 of ~5678 steps" while it runs, its time once built. The count is
  // an estimate from the target's previous build, so it is shown as such.
  function buildCell(j) {
    if (j.kind !== 'source' && j.kind !== 'git') return null;
    const parts = [];
    if (j.build_step && j.state === 'building') {
      parts.push(j.build_step);
      if (j.build_done !== null && j.build_done !== undefined) {
        parts.push(' ' + j.build_done + (j.build_total ? ' of ~' + j.build_total : '') + ' steps');
        if (j.build_total) {
          const pct = Math.min(100, Math.round(100 * j.build_done / j.build_total));
          parts.push(' ', h('progress', { max: '100', value: String(pct), 'aria-label': 'build progress ' + pct + '%' }));
        }
      }
    } else if (j.build_seconds !== null && j.build_seconds !== undefined) {
      parts.push((j.built_sha256 ? 'built' : 'did not build') + ' in ' + Math.round(j.build_seconds) + ' s');
    } else {
      return null;
    }
    return h('span', { class: 'small' }, ...parts);
  }

  // A state word as a badge: the word itself is always shown, colour is
  // only a second cue.
  function badge(word, extra) {
    const w = word === null || word === undefined ? 'unknown' : String(word);
    const cls = 'badge s-' + w.replace(/[^a-z0-9_-]/gi, '');
    return h('span', { class: extra ? cls + ' ' + extra : cls }, w);
  }

  function plural(n, word) {
    return n + ' ' + word + (n === 1 ? '' : 's');
  }

  function dash(v) {
    return v === null || v === undefined || v === '' ? '—' : String(v);
  }

  function section(title, id, ...children) {
    return h('section', { 'aria-labelledby': id },
      h('h2', { id: id }, title), children);
  }

  function note(text) {
    return h('p', { class: 'empty' }, text);
  }

  // A table from column specs: [{label, cell(row) -> node|string, cls}].
  function table(caption, columns, rows, opts) {
    opts = opts || {};
    const head = h('tr', null, columns.map((c) =>
      h('th', { scope: 'col', class: c.cls || null }, c.label)));
    const body = h('tbody');
    for (const r of rows) {
      const tr = h('tr', { class: opts.rowClass ? opts.rowClass(r) : null });
      columns.forEach((c, i) => {
        const v = c.cell(r);
        const cell = i === 0 && opts.rowHeader
          ? h('th', { scope: 'row', class: c.cls || null }, v)
          : h('td', { class: c.cls || null }, v);
        tr.appendChild(cell);
      });
      body.appendChild(tr);
    }
    const t = h('table', { class: opts.class || null },
      caption ? h('caption', null, caption) : null, h('thead', null, head), body);
    return h('div', { class: 'scroll', role: 'region', 'aria-label': caption || 'table', tabindex: '0' }, t);
  }

  function dl(pairs) {
    const el = h('dl', { class: 'facts' });
    for (const [k, v] of pairs) {
      if (v === undefined) continue;
      el.appendChild(h('dt', null, k));
      el.appendChild(h('dd', null, v === null ? '—' : v));
    }
    return el;
  }

  // ---- time ---------------------------------------------------------

  function parseTime(s) {
    if (!s) return null;
    const t = Date.parse(s);
    return Number.isNaN(t) ? null : t;
  }

  function fmtTime(s) {
    const t = parseTime(s);
    if (t === null) return s ? String(s) : '—';
    const d = new Date(t);
    const p = (n) => String(n).padStart(2, '0');
    return d.getUTCFullYear() + '-' + p(d.getUTCMonth() + 1) + '-' + p(d.getUTCDate()) +
      ' ' + p(d.getUTCHours()) + ':' + p(d.getUTCMinutes()) + ' UTC';
  }

  function timeEl(s) {
    if (!s) return '—';
    return h('time', { datetime: String(s) }, fmtTime(s));
  }

  function span(ms) {
    const m = Math.floor(ms / 60000);
    const d = Math.floor(m / 1440);
    const hh = Math.floor((m % 1440) / 60);
    const mm = m % 60;
    if (d >= 2) return d + ' days';
    if (d === 1) return '1 day ' + hh + ' h';
    if (hh > 0) return hh + ' h ' + mm + ' min';
    return mm + ' min';
  }

  // "in 1 day 4 h" / "closed 3 days ago"; refreshed by the clock timer.
  function countdownText(deadline) {
    const t = parseTime(deadline);
    if (t === null) return 'no deadline';
    const diff = t - Date.now();
    return diff >= 0 ? 'due in ' + span(diff) : 'closed ' + span(-diff) + ' ago';
  }

  function countdown(deadline) {
    const t = parseTime(deadline);
    const open = t !== null && t >= Date.now();
    const urgent = open && t - Date.now() < 12 * 3600000;
    return h('span', {
      class: 'countdown' + (open ? ' open' : ' closed') + (urgent ? ' urgent' : ''),
      'data-deadline': deadline || null,
    }, countdownText(deadline));
  }

  function tickCountdowns() {
    for (const el of main.querySelectorAll('.countdown[data-deadline]'))
      el.textContent = countdownText(el.getAttribute('data-deadline'));
  }

  // ---- versions -----------------------------------------------------

  // "6.1.64-rc1" -> {major: 6, minor: 1, patch: 64, rc: 1}; null if odd.
  function parseVersion(v) {
    const m = /^(\d+)\.(\d+)(?:\.(\d+))?(?:-rc(\d+))?$/.exec(String(v));
    if (!m) return null;
    return { major: +m[1], minor: +m[2], patch: m[3] ? +m[3] : 0, rc: m[4] ? +m[4] : 0 };
  }

  function compareVersions(a, b) {
    const x = parseVersion(a), y = parseVersion(b);
    if (!x || !y) return String(a).localeCompare(String(b));
    // A release sorts after its own rcs: rc 0 means "final".
    const rx = x.rc === 0 ? Infinity : x.rc, ry = y.rc === 0 ? Infinity : y.rc;
    return x.major - y.major || x.minor - y.minor || x.patch - y.patch || rx - ry;
  }

  // ---- API ----------------------------------------------------------

  class ApiError extends Error {
    constructor(status, message, path) {
      super(message);
      this.status = status;
      this.path = path;
    }
  }

  async function request(path, asText) {
    let resp;
    try {
      resp = await fetch(API + path, { headers: { Accept: asText ? 'text/plain' : 'application/json' } });
    } catch (e) {
      throw new ApiError(0, 'cannot reach rcgated: ' + e.message, path);
    }
    const body = await resp.text();
    if (!resp.ok) {
      let msg = body.slice(0, 300);
      try {
        const j = JSON.parse(body);
        if (j && j.error && j.error.message) msg = j.error.message;
      } catch (e) { /* not JSON: keep the text */ }
      throw new ApiError(resp.status, msg || resp.statusText, path);
    }
    if (asText) return body;
    try {
      return JSON.parse(body);
    } catch (e) {
      throw new ApiError(resp.status, 'malformed JSON from ' + API + path, path);
    }
  }

  const api = (path) => request(path, false);
  const apiText = (path) => request(path, true);

  // Runs fn over items with at most `width` requests in flight; a failed
  // item yields {error} instead of failing the whole page.
  async function mapLimited(items, width, fn) {
    const out = new Array(items.length);
    let next = 0;
    async function worker() {
      while (next < items.length) {
        const i = next++;
        try {
          out[i] = await fn(items[i]);
        } catch (e) {
          out[i] = { error: e };
        }
      }
    }
    const workers = [];
    for (let k = 0; k < Math.min(width, items.length); k++) workers.push(worker());
    await Promise.all(workers);
    return out;
  }

  function errorBox(e, what) {
    const status = e && e.status ? 'HTTP ' + e.status + ': ' : '';
    return h('div', { class: 'error', role: 'alert' },
      h('strong', null, what ? 'Cannot load ' + what + '. ' : 'Error. '),
      status + (e && e.message ? e.message : String(e)),
      e && e.path ? h('span', { class: 'path' }, ' (', h('code', null, API + e.path), ')') : null);
  }

  // ---- shared pieces ------------------------------------------------

  // A multi-line diagnostic: its first line, the rest folded away so a
  // table of regressions stays scannable.
  function diagnostic(text) {
    if (!text) return '—';
    const lines = String(text).split('\n');
    if (lines.length === 1) return h('code', { class: 'diag' }, text);
    return h('details', { class: 'diag' },
      h('summary', null, h('code', null, lines[0]), ' ', h('span', { class: 'small' }, '(+' + (lines.length - 1) + ' lines)')),
      h('pre', { class: 'diag' }, text));
  }

  function totals(t) {
    if (!t) return '—';
    return h('span', { class: 'totals' },
      h('span', { class: 'n-pass' }, t.pass + ' pass'), ' · ',
      h('span', { class: t.fail > 0 ? 'n-fail' : 'n-zero' }, t.fail + ' fail'), ' · ',
      h('span', { class: 'n-skip' }, t.skip + ' skip'));
  }

  // An rc whose review deadline passed before any kernel was submitted.
  // The API's verdict stays "pending" (nothing was tested, so there is
  // nothing to decide); shown as is, that reads as "being worked on".
  function expiredWithoutKernels(rel) {
    const t = parseTime(rel.deadline);
    return t !== null && t < Date.now() && (rel.jobs || []).length === 0 &&
      Boolean(rel.gate) && rel.gate.verdict === 'pending';
  }

  // The gate verdict of a release as a badge, or "expired" (see above).
  function verdictBadge(rel, extra) {
    if (expiredWithoutKernels(rel))
      return h('span', null, badge('expired', extra), ' no kernels before the deadline');
    return badge(rel.gate.verdict, extra);
  }

  function gateBlock(rel) {
    const gate = rel.gate;
    if (!gate) return note('No gate verdict available.');
    const reasons = Array.isArray(gate.reasons) ? gate.reasons : [];
    const expired = expiredWithoutKernels(rel);
    return h('div', { class: 'gate gate-' + (expired ? 'expired' : String(gate.verdict).replace(/[^a-z]/g, '')) },
      h('p', { class: 'verdict' }, 'Gate: ', verdictBadge(rel, 'big')),
      expired ? h('p', null, 'The review deadline (', timeEl(rel.deadline),
        ') passed before any kernel was submitted, so this rc was never tested. The API\'s verdict is still ',
        h('code', null, gate.verdict), '.') : null,
      reasons.length
        ? [h('ul', { class: 'reasons', 'aria-label': 'Reasons' }, reasons.slice(0, GATE_REASONS_SHOWN).map((r) => h('li', null, r))),
          reasons.length > GATE_REASONS_SHOWN
            ? h('details', null, h('summary', null, 'and ' + (reasons.length - GATE_REASONS_SHOWN) + ' more reasons'),
              h('ul', { class: 'reasons' }, reasons.slice(GATE_REASONS_SHOWN).map((r) => h('li', null, r))))
            : null]
        : note(gate.verdict === 'pass' ? 'No blocking regressions, every target tested.' : 'No reasons given.'),
      h('p', { class: 'small' },
        dash(gate.jobs) + ' jobs, ' + dash(gate.unfinished) + ' unfinished, ' +
        dash(gate.infra) + ' infra errors, ' + dash(gate.blocking) + ' blocking regressions',
        gate.analysed ? [', analysed ', timeEl(gate.analysed)] : ', not analysed yet'));
  }

  function targetJobStates(jobs) {
    // The last job per target stands for it (reruns come later).
    const byTarget = new Map();
    for (const j of jobs || []) byTarget.set(j.target, j);
    return h('span', { class: 'targets' }, [...byTarget.values()].map((j) =>
      h('a', { class: 'chip s-' + j.state, href: '#/job/' + seg(j.id), title: 'job ' + j.id + ': ' + j.state },
        j.target + ' ', h('span', { class: 'chip-state' }, j.state))));
  }

  function setTitle(...parts) {
    document.title = [...parts, 'rcgate'].join(' — ');
  }

  function markNav(name) {
    for (const a of document.querySelectorAll('[data-nav]')) {
      if (a.getAttribute('data-nav') === name) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
  }

  // ---- #/ : review cycles -------------------------------------------

  function clusterCycles(withDeadline) {
    const sorted = withDeadline.slice().sort((a, b) => parseTime(a.deadline) - parseTime(b.deadline));
    const cycles = [];
    let cur = null;
    for (const r of sorted) {
      const t = parseTime(r.deadline);
      if (cur && t - cur.last <= CYCLE_GAP_MS) {
        cur.releases.push(r);
        cur.last = t;
      } else {
        cur = { first: t, last: t, releases: [r] };
        cycles.push(cur);
      }
    }
    for (const c of cycles) {
      c.releases.sort((a, b) => compareVersions(b.version, a.version));
      const ann = c.releases.map((r) => parseTime(r.announced)).filter((t) => t !== null);
      c.announced = ann.length ? Math.min(...ann) : null;
    }
    return cycles.reverse();   // newest cycle first
  }

  function releaseColumns(withDeadline) {
    const cols = [
      { label: 'Release', cell: (r) => releaseLink(r.version), cls: 'version' },
      { label: 'Branch', cell: (r) => r.branch },
    ];
    if (withDeadline) {
      cols.push({ label: 'Announced', cell: (r) => timeEl(r.announced) });
      cols.push({ label: 'Deadline', cell: (r) => h('span', null, timeEl(r.deadline), h('br'), countdown(r.deadline)) });
    } else {
      cols.push({ label: 'Submitted', cell: (r) => timeEl(r.created) });
    }
    cols.push(
      { label: 'Jobs', cell: (r) => r.detail ? (r.detail.jobs.length ? targetJobStates(r.detail.jobs) : note('no kernels yet')) : badge(r.state) },
      { label: 'Results', cell: (r) => r.detail ? totals(r.detail.totals) : '—' },
      { label: 'Regressions', cell: (r) => r.detail ? regressionCount(r.detail) : '—', cls: 'num' },
      { label: 'Gate', cell: (r) => r.detail && r.detail.gate ? verdictBadge(r.detail) : (r.error ? h('span', { class: 'error-inline' }, r.error.message) : '—') });
    return cols;
  }

  function regressionCount(d) {
    const regs = d.regressions || [];
    const blocking = regs.filter((g) => !g.flaky && g.state !== 'invalid').length;
    if (!regs.length) return '0';
    return h('span', { class: blocking ? 'n-fail' : null }, String(regs.length) +
      (blocking !== regs.length ? ' (' + blocking + ' blocking)' : ''));
  }

  async function renderReleases(seq) {
    setTitle('Review cycles');
    markNav('releases');
    const list = await api('/releases?limit=200');
    const releases = list.releases || [];
    const details = await mapLimited(releases, 4, (r) => api('/releases/' + seg(r.version)));
    if (seq !== renderSeq) return null;
    releases.forEach((r, i) => {
      if (details[i] && details[i].error) r.error = details[i].error;
      else r.detail = details[i];
      if (r.detail) {
        r.announced = r.detail.announced;
        r.deadline = r.detail.deadline;
      }
    });
    const withDeadline = releases.filter((r) => parseTime(r.deadline) !== null);
    const without = releases.filter((r) => parseTime(r.deadline) === null)
      .sort((a, b) => (parseTime(b.created) || 0) - (parseTime(a.created) || 0));
    const cycles = clusterCycles(withDeadline);
    const now = Date.now();

    const out = [h('h1', null, 'Review cycles')];
    if (!releases.length) {
      out.push(note('No releases yet. Post an announcement to /api/v1/announcements or a release to /api/v1/releases.'));
      return out;
    }
    const open = cycles.filter((c) => c.last >= now);
    out.push(h('p', { class: 'lead' },
      open.length ? plural(open.reduce((n, c) => n + c.releases.length, 0), 'release candidate') + ' out for review now.'
        : 'No review cycle is open right now.'));
    cycles.forEach((c, i) => {
      const isOpen = c.last >= now;
      const id = 'cycle-' + i;
      const from = fmtTime(new Date(c.first).toISOString()), to = fmtTime(new Date(c.last).toISOString());
      const range = from === to ? from : from + ' – ' + to;
      out.push(h('section', { class: 'cycle' + (isOpen ? ' cycle-open' : ''), 'aria-labelledby': id },
        h('h2', { id: id },
          isOpen ? 'Open review cycle' : 'Review cycle',
          ' · deadline ', countdown(new Date(c.first).toISOString())),
        h('p', { class: 'small' }, plural(c.releases.length, 'rc'),
          c.announced ? ', announced from ' + fmtTime(new Date(c.announced).toISOString()) : '',
          '; responses due ' + range),
        table(null, releaseColumns(true), c.releases, { rowHeader: true, class: 'releases' })));
    });
    out.push(section('Releases without a review deadline', 'no-deadline',
      without.length
        ? table(null, releaseColumns(false), without, { rowHeader: true, class: 'releases' })
        : note('None: every release here came with an announcement.')));
    return out;
  }

  // ---- #/release/<version> ------------------------------------------

  const STATUS_ORDER = { fail: 0, error: 1, skip: 2, pass: 3 };

  function matrix(rel, targetsOrder, regressions) {
    const jobs = rel.jobs || [];
    const targets = [];
    for (const t of targetsOrder) if (jobs.some((j) => j.target === t)) targets.push(t);
    for (const j of jobs) if (!targets.includes(j.target)) targets.push(j.target);
    // cells: test -> target -> [{status, diagnostic, job}]
    const cells = new Map();
    for (const j of jobs) {
      for (const r of j.results || []) {
        if (!cells.has(r.test)) cells.set(r.test, new Map());
        const row = cells.get(r.test);
        if (!row.has(j.target)) row.set(j.target, []);
        row.get(j.target).push({ status: r.status, diagnostic: r.diagnostic, job: j.id });
      }
    }
    if (!cells.size) return note(jobs.length ? 'No test results yet.' : 'No kernels submitted yet: nothing to test.');
    const regKey = new Map();
    for (const g of regressions) regKey.set(g.test + '\u0000' + g.target, g);
    const regTests = new Set(regressions.map((g) => g.test));
    const tests = [...cells.keys()].sort((a, b) => {
      const ra = regTests.has(a) ? 0 : 1, rb = regTests.has(b) ? 0 : 1;
      const fa = [...cells.get(a).values()].some((l) => l.some((x) => x.status === 'fail')) ? 0 : 1;
      const fb = [...cells.get(b).values()].some((l) => l.some((x) => x.status === 'fail')) ? 0 : 1;
      return ra - rb || fa - fb || a.localeCompare(b);
    });
    const head = h('tr', null, h('th', { scope: 'col' }, 'Test'),
      targets.map((t) => h('th', { scope: 'col' }, t)));
    const body = h('tbody');
    for (const test of tests) {
      const row = cells.get(test);
      const tr = h('tr', { class: regTests.has(test) ? 'regressed' : null },
        h('th', { scope: 'row', class: 'test' }, test,
          regTests.has(test) ? h('span', { class: 'tag' }, ' regression') : null));
      for (const t of targets) {
        const runs = row.get(t);
        if (!runs) {
          tr.appendChild(h('td', { class: 'cell s-none' }, '—'));
          continue;
        }
        runs.sort((x, y) => (STATUS_ORDER[x.status] ?? 9) - (STATUS_ORDER[y.status] ?? 9));
        const worst = runs[0].status;
        const n = runs.filter((x) => x.status === worst).length;
        const diag = runs.find((x) => x.diagnostic && x.status !== 'pass');
        const g = regKey.get(test + '\u0000' + t);
        const td = h('td', { class: 'cell s-' + String(worst).replace(/[^a-z]/g, '') },
          jobLink(runs[0].job, worst + (runs.length > 1 ? ' ' + n + '/' + runs.length : '')),
          g ? [' ', regressionLink(g.id)] : null);
        if (diag) td.setAttribute('title', diag.diagnostic);
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    const t = h('table', { class: 'matrix' },
      h('caption', null, 'Test results per target: ' + tests.length + ' tests × ' + targets.length + ' targets'),
      h('thead', null, head), body);
    return h('div', { class: 'scroll', role: 'region', 'aria-label': 'Result matrix', tabindex: '0' }, t);
  }

  function alsoIn(list, states) {
    if (!list || !list.length) return note('only this rc');
    return h('ul', { class: 'also' }, list.map((v) => h('li', null, releaseLink(v),
      states.has(v) ? [' ', h('span', { class: 'visually-hidden' }, 'gate '), badge(states.get(v))] : null)));
  }

  // A version rcgate does not know: a page of its own, not an error (the
  // API's 404 is the answer, not a failure).
  function noSuchRelease(version, e) {
    setTitle('No such release');
    return [
      h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Review cycles')),
      h('h1', null, 'No such release ' + version),
      h('p', null, 'rcgate knows no release ', h('code', null, version),
        ' (', h('code', null, API + e.path), ' answered ', e.status + ': ' + e.message, ').'),
      h('p', null, 'Releases appear once their announcement is posted or their kernels are submitted. ',
        h('a', { href: '#/' }, 'Back to the review cycles'), '.'),
    ];
  }

  async function renderRelease(seq, version) {
    setTitle(version);
    markNav('releases');
    const [rel, targets] = await Promise.all([
      api('/releases/' + seg(version)).catch((e) => {
        if (e instanceof ApiError && e.status === 404) return { missing: e };
        throw e;
      }),
      api('/targets').catch(() => ({ targets: [] })),
    ]);
    if (rel.missing) return seq === renderSeq ? noSuchRelease(version, rel.missing) : null;
    const regs = rel.regressions || [];
    // The gate state of every other affected rc, for the "also in" links.
    const others = [...new Set(regs.flatMap((g) => g.also_in || []))];
    const gates = await mapLimited(others, 4, (v) => api('/releases/' + seg(v) + '/gate'));
    const otherState = new Map();
    others.forEach((v, i) => { if (gates[i] && gates[i].verdict) otherState.set(v, gates[i].verdict); });
    let report = null;
    if (rel.report && rel.report.text) {
      report = await apiText('/releases/' + seg(version) + '/report.txt').catch((e) => ({ error: e }));
    }
    if (seq !== renderSeq) return null;

    const targetNames = (targets.targets || []).map((t) => t.name);
    // What the engine compared (or will compare) with, as the API says.
    // Without one, a failure has no baseline result, and engine.c treats
    // that as a regression once its reruns fail too (regress.c).
    const be = rel.baseline_effective;
    const baseline = be
      ? [releaseLink(be), rel.baseline ? ' (explicit)'
        : ' (automatic: the newest final release of ' + rel.branch + ' below this one with a done job)']
      : 'none: no tested final release of ' + rel.branch + ' below this one. With nothing to compare with, ' +
        'a test that fails (and fails again on every rerun) counts as a regression.';
    const out = [
      h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Review cycles'), ' › ', rel.branch),
      h('h1', null, rel.version, ' ', badge(rel.state)),
      dl([
        ['Branch', rel.branch],
        ['Announced', timeEl(rel.announced)],
        ['Deadline', rel.deadline ? h('span', null, timeEl(rel.deadline), ' · ', countdown(rel.deadline)) : 'none'],
        ['Message-ID', rel.message_id ? h('code', null, rel.message_id) : null],
        // [announce] dkim: an unverified announcement's replies go to the
        // lists alone; say so where the announcement is shown.
        ['Announcement', rel.message_id ? (rel.announcement_verified
          ? h('span', null, badge('verified'), ' DKIM ', h('code', null, dash(rel.announcement_dkim)))
          : h('span', null, badge('unverified'), ' ', dash(rel.announcement_dkim),
            ': replies go to the lists alone')) : null],
        ['Baseline', baseline],
        ['Results', totals(rel.totals)],
        ['Submitted', timeEl(rel.created)],
      ]),
      section('Gate', 'gate', gateBlock(rel)),
    ];
    const regCols = [
      { label: 'Regression', cell: (g) => regressionLink(g.id) },
      { label: 'Test', cell: (g) => h('code', null, g.test) },
      { label: 'Target', cell: (g) => g.target },
      { label: 'State', cell: (g) => h('span', null, badge(g.state), g.flaky ? [' ', badge('flaky')] : null) },
      { label: 'Runs', cell: (g) => dash(g.fails) + ' of ' + dash(g.runs) + ' failed', cls: 'num' },
      { label: 'Branch ' + rel.branch, cell: (g) => h('span', null, badge(g.branch_state), g.fixed_in ? [' in ', releaseLink(g.fixed_in)] : null) },
      { label: 'Also in', cell: (g) => alsoIn(g.also_in, otherState) },
      { label: 'Diagnostic', cell: (g) => diagnostic(g.diagnostic) },
    ];
    out.push(section('Regressions', 'regressions',
      regs.length ? table(null, regCols, regs, { class: 'regs', rowClass: (g) => g.flaky ? 'flaky' : null })
        : note('No regressions against the baseline.')));
    out.push(section('Results', 'matrix-h', matrix(rel, targetNames, regs)));
    const jobCols = [
      { label: 'Job', cell: (j) => jobLink(j.id, '#' + j.id) },
      // The API does not say which job is a rerun; a later job for a
      // target that already had one can only be a rerun or a retry.
      { label: 'Target', cell: (j) => h('span', null, j.target,
        rel.jobs.some((o) => o.target === j.target && o.id < j.id) ? [' ', h('span', { class: 'small' }, '(rerun)')] : null) },
      { label: 'State', cell: (j) => h('span', null, badge(j.state), j.error_kind ? [' ', h('span', { class: 'small' }, j.error_kind)] : null,
        j.state === 'building' ? [h('br'), buildCell(j)] : null) },
      { label: 'Attempt', cell: (j) => dash(j.attempt), cls: 'num' },
      { label: 'Accel', cell: (j) => dash(j.accel) },
      { label: 'Boot', cell: (j) => j.boot_seconds === null || j.boot_seconds === undefined ? '—' : Number(j.boot_seconds).toFixed(1) + ' s', cls: 'num' },
      { label: 'Kernel', cell: (j) => h('span', null, dash(j.kernel_version),
        j.kernel_mismatch ? [h('br'), h('span', { class: 'error-inline' }, (j.custom ? 'custom build: ' : '') + j.kernel_mismatch)] : null,
        h('br'), h('code', { class: 'url' }, j.kind + ': ' + j.url)) },
      { label: 'Finished', cell: (j) => timeEl(j.finished) },
      { label: 'Log', cell: (j) => h('a', { href: API + '/jobs/' + seg(j.id) + '/log' }, 'raw log'), cls: 'nowrap' },
      { label: 'Error', cell: (j) => j.error ? h('span', { class: 'error-inline' }, j.error) : '—' },
    ];
    out.push(section('Jobs', 'jobs',
      (rel.jobs || []).length ? table(null, jobCols, rel.jobs) : note('No kernels submitted yet.')));
    const reportPart = [];
    const hasText = Boolean(rel.report && rel.report.text), hasEmail = Boolean(rel.report && rel.report.email);
    if (report && typeof report === 'string') {
      reportPart.push(h('details', null, h('summary', null, 'Report text'), h('pre', { class: 'report' }, report)));
    } else if (report && report.error) {
      reportPart.push(note('No report: ' + report.error.message));
    } else if (expiredWithoutKernels(rel)) {
      reportPart.push(note('No report: nothing was tested.'));
    } else {
      reportPart.push(note('The report is written once every job has finished.'));
    }
    // Link only what exists: report.txt and report.eml answer 404 otherwise.
    const links = [];
    if (hasText) links.push(h('a', { href: API + '/releases/' + seg(version) + '/report.txt' }, 'report.txt'));
    if (hasEmail) links.push(h('a', { href: API + '/releases/' + seg(version) + '/report.eml' }, 'reply e-mail (report.eml)'));
    else if (hasText) links.push(h('span', { class: 'small' }, 'no reply e-mail: the report was written without an announcement to reply to'));
    links.push(h('a', { href: API + '/releases/' + seg(version) }, 'JSON'));
    reportPart.push(h('p', null, links.map((l, i) => [i ? ' · ' : '', l])));
    out.push(section('Report', 'report', reportPart));
    return out;
  }

  // ---- #/regression/<id> --------------------------------------------

  async function renderRegression(seq, id) {
    setTitle('Regression ' + id);
    markNav('regressions');
    const g = await api('/regressions/' + seg(id));
    const occ = g.occurrences || [];
    const versions = [...new Set(occ.map((o) => o.version))];
    const gates = await mapLimited(versions, 4, (v) => api('/releases/' + seg(v) + '/gate'));
    if (seq !== renderSeq) return null;
    const gateOf = new Map();
    versions.forEach((v, i) => { if (gates[i] && gates[i].verdict) gateOf.set(v, gates[i].verdict); });

    const out = [
      h('p', { class: 'crumbs' }, h('a', { href: '#/regressions' }, 'Regressions'), ' › #' + g.id),
      h('h1', null, 'Regression #' + g.id + ': ', h('code', null, g.test), ' on ' + g.target, ' ', badge(g.state)),
      dl([
        ['Test', h('code', null, g.test)],
        ['Target', g.target],
        ['Filesystem', dash(g.fs)],
        ['State', badge(g.state)],
        ['Triage reason', g.reason ? g.reason : null],
        ['First seen', timeEl(g.first_seen)],
        ['Updated', timeEl(g.updated)],
        ['Signature', g.signature ? h('code', null, g.signature) : null],
      ]),
      section('Diagnostic', 'diag', g.diagnostic ? h('pre', { class: 'diag' }, g.diagnostic) : note('No diagnostic.')),
    ];
    const occCols = [
      { label: 'Release', cell: (o) => releaseLink(o.version), cls: 'version' },
      { label: 'Branch', cell: (o) => o.branch },
      { label: 'Gate', cell: (o) => gateOf.has(o.version) ? badge(gateOf.get(o.version)) : '—' },
      { label: 'Deadline', cell: (o) => o.deadline ? h('span', null, timeEl(o.deadline), h('br'), countdown(o.deadline)) : '—' },
      { label: 'Runs', cell: (o) => dash(o.fails) + ' of ' + dash(o.runs) + ' failed' + (o.flaky ? ' (flaky)' : ''), cls: 'num' },
      { label: 'Job', cell: (o) => o.job_id ? jobLink(o.job_id, '#' + o.job_id) : '—' },
      { label: 'Seen', cell: (o) => timeEl(o.seen) },
      { label: 'Announcement', cell: (o) => o.message_id ? h('code', { class: 'mid' }, o.message_id) : '—' },
    ];
    out.push(section('Affected release candidates (' + occ.length + ')', 'occ',
      occ.length ? table(null, occCols, occ, { rowHeader: true, class: 'occ' }) : note('No occurrences recorded.')));
    const brCols = [
      { label: 'Branch', cell: (b) => b.branch },
      { label: 'State', cell: (b) => badge(b.state) },
      { label: 'Fixed in', cell: (b) => b.fixed_in ? releaseLink(b.fixed_in) : '—' },
      { label: 'Updated', cell: (b) => timeEl(b.updated) },
    ];
    const branches = g.branches || [];
    out.push(section('Per branch', 'branches',
      branches.length ? table(null, brCols, branches, { rowHeader: true }) : note('No branch state recorded.')));
    // The culprit, per rc bisected: the first bad commit, its upstream id,
    // and the other regressions the same upstream commit caused.
    const bisCols = [
      { label: 'In', cell: (b) => releaseLink(b.version), cls: 'version' },
      { label: 'State', cell: (b) => badge(b.state) },
      { label: 'First bad commit', cell: (b) => b.culprit
        ? h('span', null, h('code', null, b.culprit.slice(0, 12)), ' ', dash(b.culprit_subject))
        : b.range_first ? h('span', null, 'one of ', h('code', null, b.range_first.slice(0, 12)), ' … ', h('code', null, b.range_last.slice(0, 12)))
          : dash(b.message) },
      { label: 'Upstream', cell: (b) => b.culprit_upstream ? h('code', null, b.culprit_upstream.slice(0, 12)) : '—' },
      // A target that took another's culprit (one bisection per cause)
      // has no steps of its own: it only reverted it.
      { label: 'Steps', cell: (b) => b.lead
        ? h('span', { title: b.message || '' }, 'none: culprit of bisection ' + b.lead)
        : dash(b.steps), cls: 'num' },
      // The revert check: the rc with the culprit reverted, the tests again.
      { label: 'Revert', cell: (b) => b.revert_state
        ? h('span', { title: b.revert_message || '' }, badge(b.revert_state)) : '—' },
      { label: 'Same cause', cell: (b) => (b.same_cause || []).length
        ? h('span', null, ...b.same_cause.map((r, i) => [i ? ', ' : '', regressionLink(r)]).flat()) : '—' },
    ];
    const bis = g.bisections || [];
    out.push(section('Bisection', 'bisect',
      bis.length ? table(null, bisCols, bis, { rowHeader: true }) : note('Not bisected yet.')));
    // Prerequisite candidates: a hint from the upstream tree, per bisection.
    const preCols = [
      { label: 'Upstream commit', cell: (p) => h('code', null, p.commit.slice(0, 12)) },
      { label: 'Subject', cell: (p) => p.subject },
      { label: 'Score', cell: (p) => String(p.score), cls: 'num' },
      { label: 'Why', cell: (p) => p.why },
    ];
    for (const b of bis) {
      if (!b.prereq_state) continue;
      const list = b.prerequisites || [];
      const title = 'Prerequisite candidates in ' + b.version;
      const hint = note(b.prereq_state === 'pending'
        ? 'Searching the upstream tree…'
        : 'A hint, not a finding: upstream commits between the branch\'s base release and the culprit\'s upstream commit that this branch lacks and that touch what the culprit touches, best match first. ' + (b.prereq_message || ''));
      out.push(section(title, 'prereq-' + b.id,
        list.length ? h('div', null, hint, table(null, preCols, list)) : hint));
    }
    const evCols = [
      { label: 'When', cell: (e) => timeEl(e.at) },
      { label: 'State', cell: (e) => badge(e.state) },
      { label: 'What happened', cell: (e) => dash(e.message) },
    ];
    const events = g.events || [];
    out.push(section('History', 'history',
      events.length ? table(null, evCols, events) : note('No events.')));
    return out;
  }

  // ---- #/regressions ------------------------------------------------

  async function renderRegressions(seq) {
    setTitle('Regressions');
    markNav('regressions');
    const list = await api('/regressions?limit=200');
    if (seq !== renderSeq) return null;
    const regs = list.regressions || [];
    const cols = [
      { label: 'Regression', cell: (g) => regressionLink(g.id) },
      { label: 'Test', cell: (g) => h('code', null, g.test) },
      { label: 'Target', cell: (g) => g.target },
      { label: 'State', cell: (g) => badge(g.state) },
      { label: 'Release candidates', cell: (g) => {
        const vs = String(g.releases || '').split(' ').filter(Boolean);
        return vs.length ? h('span', null, vs.map((v, i) => [i ? ', ' : '', releaseLink(v)])) : '—';
      } },
      { label: 'First seen', cell: (g) => timeEl(g.first_seen) },
      { label: 'Updated', cell: (g) => timeEl(g.updated) },
    ];
    return [h('h1', null, 'Regressions'),
      regs.length ? table(regs.length + ' regressions, newest first', cols, regs) : note('No regressions found. Good.')];
  }

  // ---- #/job/<id> ---------------------------------------------------

  async function renderJob(seq, id) {
    setTitle('Job ' + id);
    markNav('releases');
    const [job, log] = await Promise.all([
      api('/jobs/' + seg(id)),
      apiText('/jobs/' + seg(id) + '/log').catch((e) => ({ error: e })),
    ]);
    if (seq !== renderSeq) return null;
    const out = [
      h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Review cycles'), ' › ', releaseLink(job.version), ' › job ' + job.id),
      h('h1', null, 'Job ' + job.id + ': ' + job.version + ' on ' + job.target, ' ', badge(job.state)),
      dl([
        ['Release', releaseLink(job.version)],
        ['Target', job.target],
        ['Suite', dash(job.suite)],
        ['State', h('span', null, badge(job.state), job.error_kind ? ' (' + job.error_kind + ')' : '')],
        ['Error', job.error ? h('span', { class: 'error-inline' }, job.error) : null],
        ['Attempt', dash(job.attempt)],
        ['Worker', dash(job.worker)],
        ['Accel', dash(job.accel)],
        ['Host', job.host ? h('a', { href: '#/hosts' }, job.host) : '—'],
        ['Boot', job.boot_seconds === null || job.boot_seconds === undefined ? '—' : Number(job.boot_seconds).toFixed(1) + ' s'],
        ['Kernel', dash(job.kernel_version)],
        ['Kernel identity', job.kernel_mismatch ? h('span', { class: 'error-inline' }, (job.custom ? 'custom build: ' : '') + job.kernel_mismatch) : null],
        ['Artifact', h('code', { class: 'url' }, job.kind + ': ' + job.url + (job.git_ref ? ' ' + job.git_ref : ''))],
        ['sha256', job.sha256 ? h('code', null, job.sha256) : null],
        ['Build', buildCell(job)],
        ['Commit built', job.built_commit ? h('code', null, job.built_commit) : null],
        ['Modules', job.modules_url ? h('code', { class: 'url' }, job.modules_url) : null],
        ['Created', timeEl(job.created)],
        ['Started', timeEl(job.started)],
        ['Finished', timeEl(job.finished)],
      ]),
    ];
    const events = job.events || [];
    out.push(section('State history', 'events',
      events.length ? table(null, [
        { label: 'When', cell: (e) => timeEl(e.at) },
        { label: 'State', cell: (e) => badge(e.state) },
        { label: 'Attempt', cell: (e) => dash(e.attempt), cls: 'num' },
        { label: 'Message', cell: (e) => dash(e.message) },
      ], events) : note('No events.')));
    let logNode;
    if (typeof log === 'string') {
      logNode = log.length ? h('pre', { class: 'log', tabindex: '0', 'aria-label': 'Console log' }, log)
        : note(isFinalState(job.state) ? 'The log is empty.' : 'No log yet: the job has not started.');
    } else {
      logNode = errorBox(log.error, 'the log');
    }
    out.push(section('Console log', 'log',
      h('p', null, h('a', { href: API + '/jobs/' + seg(job.id) + '/log' }, 'raw log')), logNode));
    const results = job.results || [];
    out.push(section('Results (' + results.length + ')', 'results',
      results.length ? table(null, [
        { label: 'Test', cell: (r) => h('code', null, r.test) },
        { label: 'Status', cell: (r) => badge(r.status) },
        { label: 'Diagnostic', cell: (r) => diagnostic(r.diagnostic) },
      ], results.slice().sort((a, b) => (STATUS_ORDER[a.status] ?? 9) - (STATUS_ORDER[b.status] ?? 9)), { rowClass: (r) => 'r-' + r.status })
        : note('No results stored.')));
    return out;
  }

  // ---- #/hosts ------------------------------------------------------

  async function renderHosts(seq) {
    setTitle('Hosts');
    markNav('hosts');
    const list = await api('/hosts');
    if (seq !== renderSeq) return null;
    const hosts = list.hosts || [];
    const targets = (hh) => {
      if (hh.accel === 'auto') return 'all (' + hh.tcg.join(', ') + '), KVM if it works';
      const parts = [];
      if (hh.kvm.length) parts.push('KVM: ' + hh.kvm.join(', '));
      if (hh.tcg.length) parts.push('TCG: ' + hh.tcg.join(', '));
      return parts.join('; ');
    };
    const cols = [
      { label: 'Host', cell: (hh) => hh.name },
      { label: 'State', cell: (hh) => h('span', null, badge(hh.state), ' since ', timeEl(hh.since)) },
      { label: 'Load', cell: (hh) => hh.guests + ' guests, ' + hh.jobs + ' jobs / capacity ' + hh.capacity, cls: 'num' },
      { label: 'Targets', cell: targets },
      { label: 'URI', cell: (hh) => h('code', { class: 'url' }, hh.uri + (hh.local ? ' (local files)' : ' (volumes, streams)')) },
      { label: 'Placed / failed', cell: (hh) => hh.placed + ' / ' + hh.failures, cls: 'num' },
      { label: 'Last error', cell: (hh) => hh.error ? h('span', { class: 'error-inline' }, hh.error) : '—' },
    ];
    return [h('h1', null, 'Hypervisor hosts'),
      hosts.length ? table(plural(hosts.length, 'host'), cols, hosts) : note('No hosts.')];
  }

  // ---- router -------------------------------------------------------

  const routes = [
    { re: /^#?\/?$/, fn: renderReleases },
    { re: /^#\/release\/([^/]+)$/, fn: renderRelease },
    { re: /^#\/regressions$/, fn: renderRegressions },
    { re: /^#\/regression\/(\d+)$/, fn: renderRegression },
    { re: /^#\/job\/(\d+)$/, fn: renderJob },
    { re: /^#\/hosts$/, fn: renderHosts },
  ];

  function decode(s) {
    try {
      return decodeURIComponent(s);
    } catch (e) {
      return s;
    }
  }

  // Whether anything on the page is still moving, so a refresh is useful.
  function pageIsLive() {
    const moving = jobStates.filter((j) => !j.final).map((j) => '.s-' + j.name);
    return moving.length > 0 && main.querySelector(moving.join(', ')) !== null;
  }

  // Busy, with a note that says so, until the page's data is in.
  function showLoading() {
    main.setAttribute('aria-busy', 'true');
    main.replaceChildren(h('p', { class: 'loading' }, 'Loading…'));
  }

  async function route(opts) {
    const quiet = opts && opts.quiet;
    const seq = ++renderSeq;
    clearTimeout(refreshTimer);
    const hash = location.hash || '#/';
    let match = null, fn = null;
    for (const r of routes) {
      match = r.re.exec(hash);
      if (match) { fn = r.fn; break; }
    }
    if (!quiet) showLoading();
    let nodes;
    try {
      if (!fn) {
        setTitle('Not found');
        nodes = [h('h1', null, 'Page not found'),
          h('p', null, 'No page for ', h('code', null, hash), '. ', h('a', { href: '#/' }, 'Back to the review cycles'), '.')];
      } else {
        nodes = await fn(seq, ...match.slice(1).map(decode));
      }
    } catch (e) {
      if (seq !== renderSeq) return;
      if (quiet) return;   // keep the last good page on a failed refresh
      nodes = [h('h1', null, 'Something went wrong'), errorBox(e, 'this page'),
        h('p', null, h('a', { href: '#/' }, 'Back to the review cycles'))];
    }
    if (seq !== renderSeq || nodes === null) return;
    const scroll = window.scrollY;
    main.replaceChildren(...nodes);
    main.removeAttribute('aria-busy');
    if (quiet) window.scrollTo(0, scroll);
    else {
      window.scrollTo(0, 0);
      main.focus({ preventScroll: true });
    }
    if (pageIsLive()) refreshTimer = setTimeout(() => route({ quiet: true }), REFRESH_MS);
  }

  async function health() {
    const el = document.getElementById('health');
    try {
      const r = await fetch('/healthz');
      const j = await r.json();
      el.textContent = 'rcgated ' + (j.version || '?') + ' · ' + (j.status || '?') + ' · ' + (Number.isInteger(j.workers) ? plural(j.workers, 'worker') : dash(j.workers) + ' workers');
      el.className = 'health ok';
    } catch (e) {
      el.textContent = 'rcgated unreachable';
      el.className = 'health bad';
    }
  }

  // The skip link must not change the hash: that would be a route.
  for (const a of document.querySelectorAll('a.skip')) {
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      main.focus();
    });
  }
  window.addEventListener('hashchange', () => route());
  clockTimer = setInterval(tickCountdowns, 30000);
  void clockTimer;
  // Busy from the first moment: route() runs only once /states answers,
  // and until then the page must not look rendered (empty, not busy).
  showLoading();
  health();
  api('/states').then((j) => { jobStates = j.job_states || []; })
    .catch(() => { jobStates = []; })
    .finally(() => route());
})();
