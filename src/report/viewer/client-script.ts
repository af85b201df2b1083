/**
 * The viewer's only client script, served as /app.js (CSP: script-src 'self').
 * It is plain browser JavaScript kept in a string so the built package serves
 * it without a bundler or a copy step. Rules: every piece of data reaches the
 * page through textContent (never innerHTML), no eval, no inline handlers.
 */
export const CLIENT_SCRIPT = String.raw`'use strict';
(function () {
  var tokenMeta = document.querySelector('meta[name="echolens-token"]');
  var token = tokenMeta ? tokenMeta.getAttribute('content') : '';

  // Filter form: changing a select applies it at once.
  var filters = document.getElementById('filters');
  if (filters) {
    filters.querySelectorAll('select').forEach(function (select) {
      select.addEventListener('change', function () { filters.requestSubmit(); });
    });
  }

  var form = document.getElementById('probe-form');
  if (!form) return;
  var probe = document.getElementById('probe');
  var preset = document.getElementById('preset');
  var position = document.getElementById('position');
  var framed = document.getElementById('framed');
  var anchor = document.getElementById('anchor');
  var runButton = document.getElementById('run');
  var stopButton = document.getElementById('stop');
  var status = document.getElementById('status');
  var sample = 0;
  var controller = null;

  preset.addEventListener('change', function () {
    if (preset.value !== '') probe.value = preset.value;
  });
  anchor.addEventListener('change', function () {
    document.getElementById('arm-anchor').hidden = !anchor.checked;
  });

  function pane(arm) {
    var section = document.getElementById('arm-' + arm);
    return {
      section: section,
      context: section.querySelector('.context'),
      stream: section.querySelector('.stream'),
      verdict: section.querySelector('.verdict')
    };
  }

  function resetPanes() {
    ['real', 'filler', 'anchor'].forEach(function (arm) {
      var p = pane(arm);
      p.context.textContent = '';
      p.stream.textContent = '';
      p.stream.setAttribute('data-deltas', '0');
      p.verdict.textContent = '';
      p.section.removeAttribute('data-state');
    });
    document.getElementById('arm-anchor').hidden = !anchor.checked;
  }

  var LABELS = ['drifted', 'partially drifted', 'mostly assistant', 'fully assistant'];

  function showVerdict(data) {
    var p = pane(data.arm);
    p.verdict.textContent = '';
    if (data.score === null) {
      var err = document.createElement('span');
      err.className = 'error';
      err.textContent = data.error || 'no verdict';
      p.verdict.appendChild(err);
      return;
    }
    var badge = document.createElement('span');
    badge.className = 'score s' + data.score;
    badge.textContent = String(data.score);
    p.verdict.appendChild(badge);
    p.verdict.appendChild(document.createTextNode(' ' + (LABELS[data.score] || '') + ' '));
    var reason = document.createElement('span');
    reason.className = 'reason';
    reason.textContent = data.reason ? '— ' + data.reason : '';
    p.verdict.appendChild(reason);
    p.section.setAttribute('data-score', String(data.score));
  }

  function handle(name, data) {
    if (name === 'arm') {
      pane(data.arm).context.textContent = data.description + ' · ' + data.messages + ' messages, ' + data.chars.toLocaleString('en-US') + ' characters';
    } else if (name === 'delta') {
      var p = pane(data.arm);
      p.stream.appendChild(document.createTextNode(data.text));
      p.stream.setAttribute('data-deltas', String(Number(p.stream.getAttribute('data-deltas')) + 1));
    } else if (name === 'done') {
      var d = pane(data.arm);
      d.stream.textContent = data.text;
      d.section.setAttribute('data-state', 'done');
      d.verdict.textContent = 'judging…';
    } else if (name === 'judge') {
      showVerdict(data);
    } else if (name === 'error') {
      var target = data.arm ? pane(data.arm).verdict : status;
      target.textContent = '';
      var e = document.createElement('span');
      e.className = 'error';
      e.textContent = data.message;
      target.appendChild(e);
    } else if (name === 'end') {
      status.textContent = data.simulated ? 'Done (simulated models).' : 'Done.';
      form.setAttribute('data-state', 'done');
    }
  }

  function parseBlock(block) {
    var name = 'message';
    var lines = [];
    block.split('\n').forEach(function (line) {
      if (line.indexOf('event:') === 0) name = line.slice(6).trim();
      else if (line.indexOf('data:') === 0) lines.push(line.slice(5).replace(/^ /, ''));
    });
    if (lines.length === 0) return;
    handle(name, JSON.parse(lines.join('\n')));
  }

  async function run() {
    var choice = position.value.split(':');
    var body = {
      session: Number(choice[0]),
      position: Number(choice[1]),
      probe: probe.value,
      framed: framed.checked,
      anchor: anchor.checked,
      sample: sample
    };
    sample += 1;
    resetPanes();
    form.setAttribute('data-state', 'running');
    status.textContent = 'Streaming…';
    runButton.disabled = true;
    stopButton.disabled = false;
    controller = new AbortController();
    try {
      var response = await fetch('/api/probe', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-echolens-token': token },
        body: JSON.stringify(body),
        signal: controller.signal
      });
      if (!response.ok || !response.body) {
        var problem = await response.json().catch(function () { return { error: response.statusText }; });
        throw new Error(problem.error || ('HTTP ' + response.status));
      }
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var buffer = '';
      for (;;) {
        var chunk = await reader.read();
        if (chunk.done) break;
        buffer += decoder.decode(chunk.value, { stream: true });
        var cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          parseBlock(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
        }
      }
    } catch (error) {
      if (controller.signal.aborted) status.textContent = 'Stopped.';
      else {
        status.textContent = '';
        var e = document.createElement('span');
        e.className = 'error';
        e.textContent = String(error && error.message ? error.message : error);
        status.appendChild(e);
      }
      form.setAttribute('data-state', 'error');
    } finally {
      runButton.disabled = false;
      stopButton.disabled = true;
      controller = null;
    }
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    run();
  });
  stopButton.addEventListener('click', function () {
    if (controller) controller.abort();
  });
})();
`;
