// The web dashboard in headless Chromium against `gpuwarden serve` playing scenarios/faces.json
// (GPU 2 thermally throttled at 91 C, Xid 48 on GPU 1, GPU 5 lost at t=40 s; scenario time runs
// 4x, so GPU 5 is lost about 10 s after the daemon starts), with its job queue (--socket):
// GPUs 6 and 7 lose their scenario processes, so real jobs start there. One daemon and one
// browser for every case. Usage:
//   node dashboard_test.mjs GPUWARDEN FAKE_NVML_LIB SOURCE_DIR ARTIFACT_DIR
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Browser } from './cdp.mjs';

const [gpuwarden, fakeLib, sourceDir, artifacts] = process.argv.slice(2).map((p) => path.resolve(p));
const chromium = process.env.GW_CHROMIUM || '/usr/bin/chromium';
let daemon, browser, page, base, tmp, sock, submitted;
const jobs = {};

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitHealthy(url, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      // /api/overview, not /healthz: once GPU 5 is lost the daemon is rightly unhealthy.
      const r = await fetch(url + '/api/overview');
      if (r.status === 200 && (await r.json()).gpus.length === 8) return;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('daemon did not become healthy: ' + fs.readFileSync(path.join(tmp, 'serve.log'), 'utf8'));
}

// faces.json with GPUs 6 and 7 free of processes (a process outside the queue keeps a GPU busy).
function queueScenario() {
  const sc = JSON.parse(fs.readFileSync(path.join(sourceDir, 'scenarios/faces.json'), 'utf8'));
  for (const i of [6, 7]) sc.devices[i].processes = [];
  const file = path.join(tmp, 'faces-queue.json');
  fs.writeFileSync(file, JSON.stringify(sc));
  return file;
}

async function gw(...args) {
  const { stdout } = await promisify(execFile)(gpuwarden,
    [...args.slice(0, 1), '--socket', sock, ...args.slice(1)], { cwd: tmp, encoding: 'utf8' });
  return stdout;
}

async function submit(name, ...rest) {
  return JSON.parse(await gw('submit', '--json', '--name', name, ...rest)).ids[0];
}

// In order (FCFS): the quick job and the long one start on GPUs 6 and 7, the 2-GPU one waits.
// Not awaited in before(): the first cases must see the page before the scenario loses GPU 5.
async function submitJobs() {
  jobs.quick = await submit('dash-quick', '--', 'sleep', '1');
  jobs.long = await submit('dash-long', '--', 'sleep', '300');
  jobs.wait = await submit('dash-wait', '--gpus', '2', '--', 'true');
}

// Cancelled jobs end at the daemon's next pass; their supervisors must not outlive the test.
async function cancelJobs() {
  for (const id of Object.values(jobs)) try { await gw('cancel', String(id)); } catch { /* ended */ }
  for (let i = 0; i < 100; i++) {
    try {
      const q = (await (await fetch(base + '/api/jobs')).json()).queue;
      if (!q.jobs.some((j) => j.state === 'running')) return;
    } catch { /* a pooled connection the daemon closed: ask again */ }
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-dash-'));
  const port = await freePort();
  base = 'http://127.0.0.1:' + port;
  fs.writeFileSync(path.join(tmp, 'gw.toml'),
    `[serve]\nlisten = "127.0.0.1:${port}"\nstale_after = "3s"\n` +
    `[storage]\npath = "${tmp}/history.db"\n` +
    `[sampling]\ninterval = "100ms"\ngpu_deadline = "300ms"\ndiagnose_interval = "200ms"\nkernel_log = ""\n`);
  const log = fs.openSync(path.join(tmp, 'serve.log'), 'w');
  sock = path.join(tmp, 'queue.sock');
  daemon = spawn(gpuwarden, ['serve', '--scenario', queueScenario(), '--socket', sock,
    '--nvml-lib', fakeLib, '--config', path.join(tmp, 'gw.toml')],
  { stdio: ['ignore', log, log], env: { ...process.env, GPUWARDEN_FAKE_TIME_SCALE: '4' } });
  browser = Browser.launch(chromium, path.join(tmp, 'chromium'));
  await waitHealthy(base, 40000);
  page = await browser.newPage();
  await page.start(1280, 1400);
  await page.goto(base + '/');
  await page.eval('window.__sameDocument = true');
  submitted = submitJobs();
  submitted.catch(() => {});  // reported by the queue case that awaits it
});

after(async () => {
  try {
    if (browser) await browser.close();
    if (daemon && sock) {
      await submitted?.catch(() => {});
      await cancelJobs();
    }
  } finally {
    if (daemon) daemon.kill('SIGTERM');
    fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
});

test('every GPU is on the first render, the throttled one in words', async () => {
  const cards = await page.eval(`[...document.querySelectorAll('article.gpu')].map(a => ({
      gpu: a.dataset.gpu, level: a.dataset.level, reason: a.querySelector('.reason').textContent,
      throttle: a.querySelector('dd[data-k=throttle]').textContent,
      temp: a.querySelector('dd[data-k=temp]').textContent }))`);
  assert.deepEqual(cards.map((c) => c.gpu), ['0', '1', '2', '3', '4', '5', '6', '7']);
  assert.equal(cards[2].level, 'bad');
  assert.match(cards[2].reason, /overheating/);
  assert.equal(cards[2].throttle, 'HW thermal slowdown, HW slowdown, SW thermal slowdown');
  assert.equal(cards[0].throttle, 'none');
  assert.match(cards[2].temp, /^91 C \(slowdown 89, shutdown 92\)$/);
  assert.equal(cards[0].level, 'ok');
  assert.notEqual(cards[5].level, 'lost');  // not yet: it is lost while the page is open
});

test("the scenario's findings with evidence and remedy", async () => {
  await page.waitFor(`document.querySelector('#findings-active li[data-code^="thermal."]')`);
  const f = await page.eval(`(() => { const li = document.querySelector('#findings-active li[data-code^="thermal."]');
      return { text: li.textContent, evidence: li.querySelectorAll('.evidence li').length,
               remedy: li.querySelector('.remedy').textContent }; })()`);
  assert.match(f.text, /GPU 2/);
  assert.ok(f.evidence > 0, 'evidence listed');
  assert.match(f.remedy, /^What to do: .+/);
});

test('charts carry the played values', async () => {
  await page.eval(`document.querySelector('article.gpu[data-gpu="2"]').click()`);
  await page.waitFor(`document.getElementById('detail-title').textContent === 'GPU 2'`);
  await page.waitFor(`document.querySelector('#charts svg[data-metric=temp_c][data-max="91"]')`);
  const c = await page.eval(`Object.fromEntries([...document.querySelectorAll('#charts svg')].map(s =>
      [s.dataset.metric, { max: s.dataset.max, last: s.dataset.last, n: Number(s.dataset.points) }]))`);
  assert.equal(c.temp_c.max, '91');
  assert.equal(c.sm_clock_mhz.last, '795');
  assert.equal(c.power_w.last, '331');
  assert.equal(c.util_gpu_pct.max, '100');
  assert.ok(c.temp_c.n > 0);
  // The page may have charted GPU 2 before the click (it starts with the first sick GPU), when
  // little throttled time had accumulated: wait for the click's own load to fill the table.
  const throttle = await page.waitFor(`(() => {
      const t = document.querySelector('#throttle tr[data-reason="HW thermal slowdown"]')?.textContent;
      return t && /HW thermal slowdown[1-9]\\d* s/.test(t) ? t : null; })()`);
  assert.match(throttle, /HW thermal slowdown[1-9]\d* s/);
});

test('a GPU lost mid-run turns red without a reload', async () => {
  await page.waitFor(`document.querySelector('article.gpu[data-gpu="5"]').dataset.level === 'lost'`, 30000);
  const lost = await page.eval(`(() => { const a = document.querySelector('article.gpu[data-gpu="5"]');
      return { cls: a.className, reason: a.querySelector('.reason').textContent,
               color: getComputedStyle(a).borderLeftColor, same: window.__sameDocument === true }; })()`);
  assert.ok(lost.same, 'the page was not reloaded');
  assert.match(lost.cls, /lvl-lost/);
  assert.match(lost.reason, /fallen off the bus/);
  assert.equal(lost.color, 'rgb(207, 34, 46)');
  await page.waitFor(`document.querySelector('#findings-active li[data-code="gpu.fallen_off_bus"]')`);
  // The shipped GpuLost alert fires and the alert log shows it, also without a reload.
  await page.waitFor(`[...document.querySelectorAll('#alerts tbody tr')].some(r =>
      r.textContent.includes('GpuLost') && r.textContent.includes('firing') && r.textContent.includes('GPU 5'))`);
});

test('the queue: running, pending with its reason, finished with its report', async () => {
  await submitted;
  const row = (kind, id) => `[...document.querySelectorAll('#jobs-${kind} tr[data-job="${id}"] td')].map(t => t.textContent)`;
  await page.waitFor(`${row('finished', jobs.quick)}[3] === 'done' &&
      ${row('running', jobs.long)}.length > 0 && ${row('pending', jobs.wait)}.length > 0`, 30000);
  const [quick, long, wait, same] = await page.eval(`[${row('finished', jobs.quick)}, ${row('running', jobs.long)},
      ${row('pending', jobs.wait)}, window.__sameDocument === true]`);
  const user = os.userInfo().username;
  assert.ok(same, 'the page was not reloaded');
  assert.deepEqual(quick.slice(0, 5), [String(jobs.quick), 'dash-quick', user, 'done', '0']);
  assert.ok(quick[6].length > 0, 'the report\'s top cause (or why there is none)');
  assert.deepEqual(long.slice(0, 3), [String(jobs.long), 'dash-long', user]);
  assert.match(long[3], /^[67]$/);
  assert.match(long[4], /^\d+ s$/);
  assert.deepEqual(wait.slice(0, 4), [String(jobs.wait), 'dash-wait', user, '2']);
  assert.match(wait[5], /^needs 2 GPUs, 1 free/);
  // HTTP shows names, never commands (docs/queue.md).
  const api = await (await fetch(base + '/api/jobs')).text();
  assert.ok(api.includes('dash-long') && !api.includes('sleep'), api);
});

test('no console errors, and a screenshot kept', async () => {
  await page.eval(`document.querySelector('article.gpu[data-gpu="2"]').click()`);
  await page.waitFor(`document.querySelector('#charts svg[data-metric=temp_c][data-max]')`);
  fs.mkdirSync(artifacts, { recursive: true });
  fs.writeFileSync(path.join(artifacts, 'dashboard.png'), await page.screenshot());
  assert.deepEqual(page.errors, []);
});
