// gpuwarden dashboard: polls the daemon's JSON API and updates the page in place. No library,
// no build step; every text from the API goes in through textContent, never as markup (the
// SVG charts come from this daemon's own renderer, which escapes every text).
'use strict';

const POLL_MS = 2000;
const CHART_MS = 15000;
const CHART_METRICS = ['util_gpu_pct', 'temp_c', 'power_w', 'sm_clock_mhz'];
const CARD_KEYS = [['util', 'util'], ['mem', 'memory'], ['temp', 'temp'], ['power', 'power'],
  ['clock', 'SM clock'], ['pcie', 'PCIe'], ['throttle', 'throttle']];

const ui = { gpu: null, range: '1h', chartsAt: 0, seq: 0 };

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

async function getJSON(url) {
  const r = await fetch(url, { cache: 'no-store' });
  if (!r.ok && r.status !== 503) throw new Error(url + ': HTTP ' + r.status);
  return r.json();
}

function newCard(g) {
  const a = el('article', 'gpu');
  a.tabIndex = 0;
  a.dataset.gpu = g.gpu;
  const h = el('header');
  h.append(el('b', '', 'GPU ' + g.gpu), ' ', el('span', 'name'), ' ', el('span', 'state'));
  a.append(h, el('p', 'reason'));
  const dl = el('dl');
  for (const [k, label] of CARD_KEYS) {
    const dd = el('dd');
    dd.dataset.k = k;
    dl.append(el('dt', '', label), dd);
  }
  a.append(dl);
  return a;
}

function fillCard(a, g) {
  a.className = 'gpu lvl-' + g.level + (String(g.gpu) === String(ui.gpu) ? ' sel' : '');
  a.dataset.level = g.level;
  a.querySelector('.name').textContent = g.name;
  a.querySelector('.state').textContent = g.level;
  a.querySelector('.reason').textContent = g.reason;
  for (const [k] of CARD_KEYS) a.querySelector('dd[data-k="' + k + '"]').textContent = g.cells[k];
}

function updateCards(ov) {
  const box = document.getElementById('gpus');
  const cards = box.querySelectorAll('article.gpu');
  if (cards.length !== ov.gpus.length) {
    box.replaceChildren(...ov.gpus.map(newCard));
  }
  ov.gpus.forEach((g, i) => fillCard(box.children[i], g));
  if (ui.gpu === null && ov.gpus.length) {
    const sick = ov.gpus.find((g) => g.level !== 'ok');
    select((sick || ov.gpus[0]).gpu);
  }
}

function findingItem(f) {
  const li = el('li', f.severity);
  li.dataset.code = f.code;
  const where = f.gpu === null ? 'host' : 'GPU ' + f.gpu;
  const head = el('div');
  head.append(el('b', '', f.severity.toUpperCase() + ' ' + where + ' '), el('span', 'code', f.code),
    ' ' + f.title);
  if (f.state === 'cleared' && f.cleared_ms) head.append(el('small', '', ' (cleared ' + when(f.cleared_ms) + ')'));
  const ev = el('ul', 'evidence');
  for (const e of f.evidence) ev.append(el('li', '', e));
  li.append(head, ev, el('p', 'remedy', 'What to do: ' + f.remedy));
  return li;
}

function fillList(id, items, emptyText) {
  const ul = document.getElementById(id);
  ul.replaceChildren(...(items.length ? items.map(findingItem) : [el('li', 'empty', emptyText)]));
}

function when(ms) {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
}

function updateAlerts(a) {
  const rows = a.transitions.slice(-200).reverse().map((t) => {
    const tr = el('tr');
    for (const v of [when(t.t_ms), t.alert, t.state, t.severity, t.gpu === null ? '' : t.gpu, t.summary]) {
      tr.append(el('td', '', String(v)));
    }
    return tr;
  });
  const body = document.querySelector('#alerts tbody');
  const none = el('tr');
  none.append(el('td', 'empty', 'no alert has fired'));
  body.replaceChildren(...(rows.length ? rows : [none]));
}

function span(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? s + ' s' : s < 7200 ? Math.round(s / 60) + ' min' : (s / 3600).toFixed(1) + ' h';
}

function exitText(j) {
  return j.signal !== null ? 'signal ' + j.signal : j.exit_code !== null ? String(j.exit_code) : '';
}

function causeText(j) {
  if (!j.report) return '';
  return j.report.error ? 'no report: ' + j.report.error : j.report.text;
}

const JOB_COLUMNS = {
  pending: (j, now) => [j.gpus, span(now - j.submit_ms), j.wait_reason || j.reason],
  running: (j, now) => [j.gpu_indices.join(','), span(now - j.start_ms)],
  finished: (j) => [j.state, exitText(j), j.end_ms ? when(j.end_ms) : '', causeText(j)],
};

function jobRow(j, kind, now) {
  const tr = el('tr', 'st-' + j.state);
  tr.dataset.job = j.id;
  tr.dataset.state = j.state;
  const name = j.name + (j.array_index !== null ? '[' + j.array_index + ']' : '');
  for (const v of [j.id, name, j.user, ...JOB_COLUMNS[kind](j, now)]) tr.append(el('td', '', String(v)));
  return tr;
}

function fillJobs(kind, jobs, now, emptyText) {
  const rows = jobs.map((j) => jobRow(j, kind, now));
  const none = el('tr');
  none.append(el('td', 'empty', emptyText));
  document.querySelector('#jobs-' + kind + ' tbody').replaceChildren(...(rows.length ? rows : [none]));
}

// /api/jobs: {"queue": null} when the daemon runs no queue.
function updateQueue(body) {
  const q = body.queue;
  const none = document.getElementById('queue-none');
  none.hidden = q !== null;
  none.textContent = q === null ? (body.message || 'no job queue: ' + JSON.stringify(body.error)) : '';
  document.getElementById('queue-tables').hidden = q === null;
  if (q === null) return;
  document.getElementById('queue-policy').textContent = '(' + q.policy + ' policy)';
  const is = (...states) => q.jobs.filter((j) => states.includes(j.state));
  fillJobs('pending', is('pending', 'held'), q.now_ms, 'no job waits');
  fillJobs('running', is('running'), q.now_ms, 'no job runs');
  fillJobs('finished', is('done', 'failed', 'cancelled', 'lost'), q.now_ms, 'none yet');
}

async function loadCharts() {
  if (ui.gpu === null) return;
  const seq = ++ui.seq;  // a slower answer for an earlier choice must not overwrite this one
  const box = document.getElementById('charts');
  const svgs = await Promise.all(CHART_METRICS.map(async (m) => {
    const r = await fetch('/dashboard/chart.svg?gpu=' + ui.gpu + '&metric=' + m + '&range=' + ui.range,
      { cache: 'no-store' });
    return r.ok ? r.text() : '';
  }));
  const parts = svgs.map((s, i) => {
    const d = el('div');
    d.dataset.metric = CHART_METRICS[i];
    d.innerHTML = s;  // our own renderer's output (escaped there)
    return d;
  });
  if (seq !== ui.seq) return;
  box.replaceChildren(...parts);
  const t = await getJSON('/api/throttle?gpu=' + ui.gpu + '&range=' + ui.range);
  if (seq !== ui.seq) return;
  updateThrottle(t);
  ui.chartsAt = Date.now();
}

function updateThrottle(t) {
  document.getElementById('throttle-window').textContent =
    '(' + Math.round(t.sampled_s) + ' s sampled; counters: power ' + t.counters_s.power.toFixed(1) +
    ' s, thermal ' + t.counters_s.thermal.toFixed(1) + ' s)';
  const span = Math.max(t.sampled_s, 1);
  const rows = Object.entries(t.reasons_s).map(([name, s]) => {
    const tr = el('tr');
    const bar = el('span', 'bar');
    bar.style.width = Math.round(200 * s / span) + 'px';
    const cell = el('td');
    cell.append(bar);
    tr.dataset.reason = name;
    tr.append(el('td', '', name), el('td', '', s.toFixed(0) + ' s'), el('td', '', (100 * s / span).toFixed(1) + ' %'), cell);
    return tr;
  });
  document.querySelector('#throttle tbody').replaceChildren(...rows);
}

function select(gpu) {
  ui.gpu = gpu;
  ui.chartsAt = Date.now();  // loading now: the poll must not start a second load
  document.getElementById('detail-title').textContent = 'GPU ' + gpu;
  for (const a of document.querySelectorAll('article.gpu')) a.classList.toggle('sel', a.dataset.gpu === String(gpu));
  loadCharts().catch(showDown);
}

function showDown(e) {
  const s = document.getElementById('status');
  s.textContent = 'daemon unreachable: ' + e.message;
  s.className = 'down';
}

async function tick() {
  try {
    const [ov, f, a, q] = await Promise.all([getJSON('/api/overview'), getJSON('/api/findings'),
      getJSON('/api/alerts'), getJSON('/api/jobs')]);
    updateCards(ov);
    updateQueue(q);
    fillList('findings-active', f.active, 'nothing wrong');
    fillList('findings-past', f.cleared, 'none yet');
    updateAlerts(a);
    const s = document.getElementById('status');
    s.textContent = 'live, updated ' + when(ov.now_ms).slice(11) + ' UTC';
    s.className = '';
    document.body.dataset.updated = String(ov.now_ms);
    if (Date.now() - ui.chartsAt > CHART_MS) await loadCharts();
  } catch (e) {
    showDown(e);
  }
}

document.getElementById('gpus').addEventListener('click', (e) => {
  const card = e.target.closest('article.gpu');
  if (card) select(Number(card.dataset.gpu));
});
document.getElementById('gpus').addEventListener('keydown', (e) => {
  const card = e.target.closest('article.gpu');
  if (card && e.key === 'Enter') select(Number(card.dataset.gpu));
});
document.getElementById('ranges').addEventListener('click', (e) => {
  const b = e.target.closest('button');
  if (!b) return;
  ui.range = b.dataset.range;
  for (const x of document.querySelectorAll('#ranges button')) x.classList.toggle('on', x === b);
  loadCharts().catch(showDown);
});

// The cards came with the page: pick the GPU to chart from them, so the charts load beside
// the first poll instead of after it.
const firstCard = document.querySelector('#gpus article.gpu:not([data-level="ok"])') ||
  document.querySelector('#gpus article.gpu');
if (firstCard) select(Number(firstCard.dataset.gpu));
tick();
setInterval(tick, POLL_MS);
