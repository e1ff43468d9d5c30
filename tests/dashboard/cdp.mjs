// A headless Chromium driven over its DevTools protocol through a pipe (--remote-debugging-pipe:
// JSON messages separated by NUL bytes on fds 3 and 4), so no WebSocket library or npm
// package is needed. One browser per test process; pages are attached in flat session mode.
import { spawn } from 'node:child_process';

export class Browser {
  static launch(executable, userDataDir) {
    const proc = spawn(executable, [
      '--headless=new', '--remote-debugging-pipe', '--no-sandbox', '--disable-gpu',
      '--no-first-run', '--no-default-browser-check', '--disable-extensions',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--user-data-dir=' + userDataDir, 'about:blank',
    ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    return new Browser(proc);
  }

  constructor(proc) {
    this.proc = proc;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = [];
    this.stderr = '';
    let buf = Buffer.alloc(0);
    proc.stderr.on('data', (d) => { this.stderr = (this.stderr + d).slice(-4000); });
    proc.stdio[4].on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      for (let end; (end = buf.indexOf(0)) >= 0; buf = buf.subarray(end + 1)) {
        this.dispatch(JSON.parse(buf.subarray(0, end).toString('utf8')));
      }
    });
  }

  dispatch(msg) {
    if (msg.id !== undefined) {
      const p = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new Error(p.method + ': ' + msg.error.message));
      else p.resolve(msg.result);
      return;
    }
    for (const l of this.listeners) l(msg);
  }

  send(method, params = {}, sessionId = undefined) {
    const id = this.nextId++;
    const msg = { id, method, params };
    if (sessionId) msg.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.proc.stdio[3].write(JSON.stringify(msg) + '\0');
    });
  }

  on(fn) { this.listeners.push(fn); }

  async newPage() {
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    return new Page(this, sessionId);
  }

  async close() {
    const exited = new Promise((r) => this.proc.once('exit', r));
    try { await this.send('Browser.close'); } catch { /* already gone */ }
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
}

export class Page {
  constructor(browser, sessionId) {
    this.b = browser;
    this.sessionId = sessionId;
    this.errors = [];
    this.loadWaiters = [];
    browser.on((m) => {
      if (m.sessionId !== sessionId) return;
      if (m.method === 'Runtime.exceptionThrown') this.errors.push(m.params.exceptionDetails.text + ' ' + (m.params.exceptionDetails.exception?.description || ''));
      if (m.method === 'Runtime.consoleAPICalled' && (m.params.type === 'error' || m.params.type === 'warning'))
        this.errors.push('console.' + m.params.type + ': ' + m.params.args.map((a) => a.value ?? a.description).join(' '));
      if (m.method === 'Log.entryAdded' && m.params.entry.level === 'error')
        this.errors.push('log: ' + m.params.entry.text + ' ' + (m.params.entry.url || ''));
      if (m.method === 'Page.loadEventFired') this.loadWaiters.splice(0).forEach((r) => r());
    });
  }

  send(method, params) { return this.b.send(method, params, this.sessionId); }

  async start(width, height) {
    await Promise.all([this.send('Runtime.enable'), this.send('Log.enable'), this.send('Page.enable')]);
    await this.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
  }

  async goto(url) {
    const loaded = new Promise((r) => this.loadWaiters.push(r));
    await this.send('Page.navigate', { url });
    await loaded;
  }

  async eval(expression) {
    const r = await this.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) throw new Error('eval failed: ' + expression + ': ' + r.exceptionDetails.text);
    return r.result.value;
  }

  // Polls `expression` until it is truthy (a wait for the page's own polling, not a timing claim).
  async waitFor(expression, timeoutMs = 20000) {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await this.eval(expression);
      if (v) return v;
      if (Date.now() > end) throw new Error('timed out waiting for: ' + expression);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async screenshot() {
    const { data } = await this.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true });
    return Buffer.from(data, 'base64');
  }
}
