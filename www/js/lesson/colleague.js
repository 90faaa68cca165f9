// Beat 9: explain it to a colleague. A free-text box, then the model answer, with keyword hints
// that only check whether the key ideas are named (a word match, not a grade), and flags for the
// misconceptions an ops reader most often writes down.

const IDEAS = [
  ['the waiting queue (num_requests_waiting)', /queue|waiting|num_requests_waiting|backlog/i],
  ['TTFT p99 (the tail against its SLO)', /ttft|first token|p99|tail/i],
  ['the knee', /knee|saturat/i],
  ['throughput stops improving, only latency grows', /throughput/i],
  ["Little's Law for sizing", /little|concurrency|max-num-seqs|max_num_seqs|cap\b/i],
];

/** [flag, matches(text)]: each misconception and how a word match spots it. */
const MISCONCEPTIONS = [
  [
    'GPU utilisation is the wrong signal: it reads high long before the knee (a busy GPU is what batching is for). Scale on the waiting queue or TTFT p99.',
    (t) => /gpu[ -]?(util|usage|busy|load)|utili[sz]ation|nvidia-smi|sm active/i.test(t),
  ],
  [
    'Raising --max-num-seqs only helps if the KV cache has room (or requests get preempted), and not at all when prefill is the limit that binds.',
    (t) =>
      /(rais|increas|bump|doubl|higher|more)\w*.{0,30}(max.?num.?seqs|seq(uence)? cap|concurrency cap)/i.test(t) &&
      !/kv|memory|cache|preempt/i.test(t),
  ],
  [
    'A new replica takes minutes to start (model load, CUDA-graph capture): scale with a margin below the knee, not once you are past it.',
    (t) =>
      /(after|past|once|beyond|exceed)\w*.{0,25}(knee|saturat|capacity)/i.test(t) && !/margin|before|below|headroom|cold.?start|ahead|early/i.test(t),
  ],
  [
    'A p50 (or mean) SLO hides the tail: judge latency on p99, or on an attainment target such as 90% of requests within both SLOs.',
    (t) => /\bp50\b|median|mean latency|average latency/i.test(t),
  ],
  [
    'Judge a signal over a window (avg or max over minutes), with hysteresis and a cooldown, or one burst scales the fleet up and down.',
    (t) => /scal|autoscal/i.test(t) && !/window|over (the last|a few|\d)|sustain|for \d|minutes|hysteresis|cooldown|avg_over_time|average over/i.test(t),
  ],
];

export function setup() {
  const text = document.getElementById('colleague-text');
  const button = document.getElementById('colleague-show');
  const answer = document.getElementById('colleague-answer');
  const list = document.getElementById('colleague-hint-list');
  const flags = document.getElementById('colleague-flags');

  const hints = () => {
    const t = text.value;
    list.replaceChildren(
      ...IDEAS.map(([label, re]) => {
        const li = document.createElement('li');
        const hit = re.test(t);
        li.classList.toggle('hit', hit);
        li.textContent = `${label}: ${hit ? 'mentioned' : t.trim() ? 'not mentioned' : 'write something first'}`;
        return li;
      }),
    );
    const found = t.trim() ? MISCONCEPTIONS.filter(([, matches]) => matches(t)) : [];
    flags.hidden = found.length === 0;
    flags.querySelector('ul').replaceChildren(
      ...found.map(([flag]) => {
        const li = document.createElement('li');
        li.textContent = flag;
        return li;
      }),
    );
  };
  button.addEventListener('click', () => {
    answer.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    button.textContent = 'Model answer shown below';
    hints();
    answer.focus({ preventScroll: true });
  });
  text.addEventListener('input', () => {
    if (!answer.hidden) hints();
  });
}
